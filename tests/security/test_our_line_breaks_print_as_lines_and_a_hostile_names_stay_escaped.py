"""Our own messages of several lines (a refused push, the hooks' refusals, an error that
lists problems) print one line per line, while a line break or an escape inside a hostile
name stays escaped: it can never forge a line that passes for ours.

They used to go either way wrong: the CLI's error boundary escaped a whole message, so a
refusal listing three problems printed as one line with literal `\\n` in it; the hooks
kept every line break, a hostile tree name's included, so a name could add a line of its
own to the server's refusal. Real repositories, the real git, no mocks; each test failed
before its fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pygit2
import pytest
from kit.repos import bare, client, git_push
from kit.run import cli, git
from kit.secrets import expand

from git_lifeline.app.hook_files import install
from git_lifeline.git.repo import open_repo

FORGED = "git-lifeline: pushed, the ledger is safe"
HOSTILE = f"evil\n{FORGED}\r\x1b[2J"  # a tree entry name a pusher chose
SHOWN = f"evil\\n{FORGED}\\r<U+001B>[2J"  # how a terminal must show it


# ---- helpers ----------------------------------------------------------------------------
def with_a_decision(tmp_path: Path, name: str, server: Path) -> Path:
    repo = client(tmp_path, name, server)
    r = cli(repo, "log", "--kind", "decision", "--summary", "First decision", "--body", "Because.")
    assert r.code == 0, r
    return repo


def files_on_top(repo: Path, *names: str) -> str:
    """refs/lifeline/main moved to a commit whose tree also holds files named `names`
    (none belongs in a ledger tree); the commit's short id, as the refusals name it."""
    r = pygit2.Repository(str(repo))
    tip = r.references["refs/lifeline/main"].target
    tb = r.TreeBuilder(r[tip].tree)
    for name in names:
        tb.insert(name, r.create_blob(b"x"), pygit2.GIT_FILEMODE_BLOB)
    sig = pygit2.Signature("A", "a@example.com", 1714560000, 0)
    new = r.create_commit(None, sig, sig, "x\n", tb.write(), [tip])
    git(repo, "update-ref", "refs/lifeline/main", str(new))
    return str(new)[:8]


def shown_lines(err: str) -> list[str]:
    """stderr line by line, as a terminal shows it (git's `remote: ` prefix taken off)."""
    return [ln.removeprefix("remote: ").rstrip() for ln in err.split("\n")]


# ---- a refusal of several problems -------------------------------------------------------
def test_a_refusal_listing_several_problems_prints_one_per_line_not_a_literal_backslash_n(tmp_path):
    repo = with_a_decision(tmp_path, "a", bare(tmp_path))
    commit = files_on_top(repo, "stray-one", "stray-two")
    r = cli(repo, "push")
    assert r.code == 1, r
    assert "\\n" not in r.err, r
    assert r.err.splitlines() == [
        "git-lifeline: line main fails verification; nothing was pushed:",
        f"  foreign-file: unexpected 'stray-one' at the root of the tree (commit {commit})",
        f"  foreign-file: unexpected 'stray-two' at the root of the tree (commit {commit})",
        "(run: git lifeline verify)",
    ], r


# ---- a hostile name inside one of our lines ----------------------------------------------
def _refused_by_the_cli_push(tmp_path: Path) -> tuple[str, str]:
    repo = with_a_decision(tmp_path, "a", bare(tmp_path))
    files_on_top(repo, HOSTILE)
    r = cli(repo, "push")
    assert r.code == 1, r
    return r.err, "git-lifeline: line main fails verification; nothing was pushed:"


def _refused_by_pre_push(tmp_path: Path) -> tuple[str, str]:
    repo = with_a_decision(tmp_path, "a", bare(tmp_path))
    install(open_repo(str(repo)), ["pre-push"])
    files_on_top(repo, HOSTILE)
    code, err = git_push(repo, "refs/lifeline/main")
    assert code != 0, err
    return err, "git-lifeline: push refused, the ledger would not be safe on the remote:"


def _refused_by_pre_receive(tmp_path: Path) -> tuple[str, str]:
    repo = with_a_decision(tmp_path, "a", bare(tmp_path, hook=True))
    files_on_top(repo, HOSTILE)
    code, err = git_push(repo, "refs/lifeline/main", flags=("--no-verify",))
    assert code != 0, err
    return err, "git-lifeline: ledger update refused:"


def _a_bad_line_on_a_hookless_remote(tmp_path: Path) -> Path:
    server = bare(tmp_path)
    a = with_a_decision(tmp_path, "a", server)
    files_on_top(a, HOSTILE)
    code, err = git_push(a, "refs/lifeline/main", flags=("--no-verify",))  # a hosted remote runs no hook of ours
    assert code == 0, err
    return client(tmp_path, "b", server)


def _refused_by_pull(tmp_path: Path) -> tuple[str, str]:
    b = _a_bad_line_on_a_hookless_remote(tmp_path)
    r = cli(b, "pull")
    assert r.code == 1, r
    return r.err, "line main from origin failed verification; nothing was changed:"


def _refused_by_init(tmp_path: Path) -> tuple[str, str]:
    b = _a_bad_line_on_a_hookless_remote(tmp_path)
    r = cli(b, "init", "--no-mcp", "--no-hooks", "--no-agents")
    assert r.code == 0, r  # init goes on; it says why the pull failed
    return r.err, "line main from origin failed verification; nothing was changed:"


@pytest.mark.parametrize(
    "refused",
    [_refused_by_the_cli_push, _refused_by_pre_push, _refused_by_pre_receive, _refused_by_pull, _refused_by_init],
    ids=["push", "pre-push", "pre-receive", "pull", "init"],
)
def test_a_newline_inside_a_hostile_name_stays_escaped_and_cannot_forge_a_line_of_ours(tmp_path, git_dispatch, refused):
    err, our_head = refused(tmp_path)
    lines = shown_lines(err)
    assert "\x1b" not in err and "\r" not in err, err
    assert not any(ln.lstrip().startswith(FORGED) for ln in lines), err  # no line of the name's own
    assert our_head in lines, err  # our lines, each a line
    named = [ln for ln in lines if SHOWN in ln]  # the name's line: one, whole
    assert len(named) == 1, err
    assert re.search(
        rf"foreign-file: unexpected '{re.escape(SHOWN)}' at the root of the tree \(commit [0-9a-f]{{8}}\)$", named[0]
    ), err


# ---- other errors of several lines --------------------------------------------------------
def test_the_missing_identity_error_shows_each_git_config_command_on_a_line_of_its_own(repo, tmp_path):
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    r = cli(repo, "log", "--kind", "note", "--summary", "s", "--body", "b", env={"GIT_CONFIG_GLOBAL": str(empty)})
    assert r.code == 2, r
    assert r.err.splitlines() == [
        "git-lifeline: no git identity configured: set it with",
        '  git config --global user.name "Your Name"',
        "  git config --global user.email you@example.com",
    ], r


def test_a_secret_refusal_lists_each_finding_on_a_line_of_its_own(repo):
    token = expand("ghp_{{a:36}}", "errlines-token")
    r = cli(repo, "log", "--kind", "note", "--summary", "Deploy token", "--body", f"one {token}\ntwo {token}")
    assert r.code == 2, r
    lines = r.err.splitlines()
    assert lines[0] == "git-lifeline: refused: the entry holds what looks like a credential; nothing was written:", r
    findings = [ln for ln in lines[1:] if ln.startswith("  body line ")]
    assert len(findings) == 2 and all("looks like a" in ln for ln in findings), r
    assert lines[-1].startswith("Remove it (and rotate it if it was real)."), r
    assert token not in r.err and "\\n" not in r.err, r


@pytest.mark.parametrize("argv", [["fetch"], ["pull"], ["clone", "MISSING", "copy"]], ids=["fetch", "pull", "clone"])
def test_gits_own_error_of_several_lines_prints_one_per_line_under_ours(repo, tmp_path, argv):
    """A failed fetch or clone joined git's lines into one, printed with literal `\\n`s
    ("fatal: ... does not appear to be a git repository\\nfatal: Could not read from
    remote repository.\\n\\nPlease make sure ..."); they are indented under ours, as push's."""
    missing = str(tmp_path / "no-such-remote")
    git(repo, "remote", "add", "origin", missing)
    r = cli(repo, *[f"file://{missing}" if a == "MISSING" else a for a in argv])
    assert r.code != 0, r
    lines = r.err.splitlines()
    assert lines[0].startswith("git-lifeline: ") and lines[0].endswith("failed:"), r
    assert "\\n" not in r.err, r
    assert any(ln.startswith("  fatal: ") and "does not appear to be a git repository" in ln for ln in lines[1:]), r
    assert any(ln.startswith("  fatal: Could not read from remote repository.") for ln in lines[1:]), r
