"""No value from an entry reaches git as an option (issue 14, item 3).

A decision whose header says `commit: --output=<file>` made every teammate's `context`,
`stale` and MCP context create or truncate that file (`git rev-list "<value>..HEAD"`).
Now a typed header value is held to its type everywhere it enters (core/headers.py):
`log` refuses it (exit 2, nothing written), `verify`, `pull`, the pre-push and the
pre-receive hooks refuse an entry that carries one (`bad-entry`), the fold never hands
one to git, and every git command that takes a revision from outside ends its options
first (`--end-of-options`).
"""

from __future__ import annotations

import pytest
from kit.entries import make_entry
from kit.repos import git_push, head, init_repo, log_entry, open_ledger, snapshot
from kit.run import cli, git

from git_lifeline.app.hook_files import install
from git_lifeline.git.history import find_stale
from git_lifeline.git.repo import open_repo

PLANTED = "option injection: a planted commit: --output= header (context, stale, MCP context, verify, hooks, pull)"


def hostile_bodies(target) -> dict:
    """Header values that would be options if they reached git (or are not of their type)."""
    return {
        "commit-output": f"paths: src/**\ncommit: --output={target}\n\nBursts overflow the API.",
        "commit-not-hex": "paths: src/**\ncommit: HEAD~3\n\nBursts overflow the API.",
        "paths-option": f"paths: src/** --output={target}\n\nBursts overflow the API.",
        "paths-control": "paths: src/\u202e**\n\nBursts overflow the API.",
    }


def commit_file(repo, path: str, text: str = "print('hello')\n") -> None:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"edit {path}")


def push(repo, remote: str, *specs: str, flags: tuple = ()) -> tuple:
    return git_push(repo, *specs, flags=flags, remote=remote, timeout=300)


@pytest.fixture
def planted(tmp_path, git_dispatch):
    """An attacker's clone (an old or hand-made client: it writes without our checks) holding
    a decision whose `commit:` header is an option naming a file, with code history to
    compare against; a server with the pre-receive hook and a mirror without hooks."""
    target = tmp_path / "clobbered"
    attacker = init_repo(tmp_path / "attacker")
    commit_file(attacker, "src/app.py", "print('v1')\n")
    bad = make_entry(
        kind="decision", summary="Queue: SQS", body=hostile_bodies(target)["commit-output"], ts=make_entry(0).ts
    )
    open_ledger(attacker).append([bad])
    commit_file(attacker, "src/app.py", "print('v2')\n")
    server, mirror = tmp_path / "server.git", tmp_path / "mirror.git"
    for bare in (server, mirror):
        git(tmp_path, "init", "-q", "--bare", str(bare))
    install(open_repo(str(server)), ["pre-receive"])
    for name, url in (("origin", server), ("mirror", mirror)):
        git(attacker, "remote", "add", name, str(url))
    return attacker, server, mirror, target, bad


def test_log_refuses_a_header_value_that_is_not_of_its_type_and_writes_nothing(repo, tmp_path, record_counts):
    commit_file(repo, "src/app.py")
    cli(repo, "log", "--kind", "note", "--summary", "First", "--body", "Start.")
    before = snapshot(repo)
    held = 0
    bodies = hostile_bodies(tmp_path / "clobbered")
    for name, body in bodies.items():
        res = cli(repo, "log", "--kind", "decision", "--summary", f"Case {name}", "--body", body)
        assert res.code == 2, (name, res)
        assert "header" in res.err and "Traceback" not in res.err, (name, res)
        assert snapshot(repo) == before, name
        assert not (tmp_path / "clobbered").exists()
        held += 1
    record_counts("header values refused at write, nothing written", tried=len(bodies), held=held, lost=0)


def test_a_planted_option_never_creates_the_file_it_names(planted, tmp_path, record_counts):
    """A clone that already holds such an entry (pulled by an older version): context,
    stale and the MCP context run git with it as data, never as an option."""
    attacker, _server, _mirror, target, bad = planted
    from git_lifeline.mcp.server import Door, context_text

    assert cli(attacker, "context").code == 0
    assert cli(attacker, "stale").code == 0
    assert context_text(Door(str(attacker)).ledger(), 8000, None)
    assert not target.exists(), "an entry's header value reached git as an option"
    record_counts(PLANTED, tried=3, held=3, lost=0)


def test_git_commands_take_a_hostile_revision_as_a_revision(planted, tmp_path):
    """The second wall: even a value that got past the checks is not an option to git."""
    attacker, *_ = planted
    gr = open_repo(str(attacker))
    target = tmp_path / "second-wall"
    facts = {"d" * 64: {"ts": "2020-01-01T00:00:00.000000", "paths": "src"}}
    assert find_stale(gr, facts, {}, ["d" * 64], rev=f"--output={target}").stale == []
    assert find_stale(gr, facts, {}, ["d" * 64], since_rev=f"--output={target}").stale == []
    assert not target.exists()


def test_verify_reports_a_planted_option_as_a_bad_entry(planted, record_counts):
    attacker, *_, bad = planted
    res = cli(attacker, "verify")
    assert res.code == 1, res
    assert "bad-entry" in res.out and "is not a hex object name" in res.out and bad.id[:8] in res.out, res
    record_counts(PLANTED, tried=1, held=1, lost=0)


def test_the_pre_receive_hook_refuses_a_planted_option(planted, record_counts):
    attacker, server, *_ = planted
    code, err = push(attacker, "origin", "refs/lifeline/main", flags=("--no-verify",))
    assert code != 0 and "bad-entry" in err and "is not a hex object name" in err, err
    assert head(server) is None
    record_counts(PLANTED, tried=1, held=1, lost=0)


def test_the_pre_push_hook_refuses_to_send_a_planted_option(planted, record_counts):
    attacker, _server, mirror, *_ = planted
    install(open_repo(str(attacker)), ["pre-push"])
    code, err = push(attacker, "mirror", "refs/lifeline/main")
    assert code != 0 and "bad-entry" in err, err
    assert head(mirror) is None
    record_counts(PLANTED, tried=1, held=1, lost=0)


def test_pull_refuses_a_planted_option_from_a_remote_without_hooks(planted, tmp_path, record_counts):
    attacker, _server, mirror, target, _bad = planted
    code, err = push(attacker, "mirror", "refs/lifeline/main", flags=("--no-verify",))
    assert code == 0, err
    victim = init_repo(tmp_path / "victim")
    commit_file(victim, "src/app.py")
    git(victim, "remote", "add", "mirror", str(mirror))
    res = cli(victim, "pull", "mirror")
    assert res.code == 1 and "bad-entry" in res.err, res
    assert head(victim) is None, "a refused pull moved the line"
    assert not target.exists()
    record_counts(PLANTED, tried=1, held=1, lost=0)


@pytest.mark.parametrize(
    "value,ok",
    [
        ("abcd", True),
        ("0123456789abcdef0123456789abcdef01234567", True),
        ("ABCDEF12", True),
        ("a" * 64, True),
        ("abc", False),
        ("a" * 65, False),
        ("--output=x", False),
        ("HEAD", False),
        ("v1.2", False),
        ("abcd..HEAD", False),
        ("abcd^{commit}", False),
    ],
)
def test_a_commit_header_is_a_hex_object_name_and_nothing_else(value, ok):
    from git_lifeline.core.headers import commit_problem

    assert (commit_problem(value) is None) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("src/**", True),
        ("src/db/**, docs/*.md", True),
        ("a b\tc", True),
        ("-x", False),
        ("src -x", False),
        ("src/\u200bdb", False),
        ("src/\x7fdb", False),
        (",", False),
    ],
)
def test_a_paths_header_holds_only_pathspecs(value, ok):
    from git_lifeline.core.headers import paths_problem

    assert (paths_problem(value) is None) is ok


def test_prose_that_merely_mentions_a_commit_below_the_header_is_not_a_header(repo):
    """Only the header block is typed: the same words further down the body are prose."""
    commit_file(repo, "src/app.py")
    res = log_entry(
        repo,
        "decision",
        "Queue: SQS",
        "paths: src/**\n\nWe looked at it again.\ncommit: --not-a-header here",
        expect=None,
    )
    assert res.code == 0, res
