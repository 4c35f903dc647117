"""The command line as users and scripts meet it: help, the manual, pipes, exit codes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from kit.entries import make_entry
from kit.run import ROOT, Via, cli, git, subprocess_env

from git_lifeline import __version__
from git_lifeline.cli.common import all_commands
from git_lifeline.cli.main import main

MAN_PAGE = ROOT / "man" / "git-lifeline.1"
EVERY_COMMAND = all_commands(main)  # the group loads each command's module when it is asked for
COMMANDS = sorted(EVERY_COMMAND)
VISIBLE = sorted(name for name, cmd in EVERY_COMMAND.items() if not cmd.hidden)  # what -h lists


def man_page_commands(text: str) -> set:
    """Command names the man page documents under `.SS` headings or `.TP` tags."""
    names = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SS "):
            tag = line[4:]
        elif line.startswith(".TP") and i + 1 < len(lines):
            tag = lines[i + 1]
        else:
            continue
        tag = re.sub(r"\\f[BIRP]|\\f\(..|\\&|^\.[BIR]{1,2} ", "", tag).replace('"', "").replace("\\-", "-")
        words = tag.split()
        while words[:2] == ["git", "lifeline"] or words[:1] == ["git-lifeline"]:
            words = words[2:] if words[0] == "git" else words[1:]
        if words and not words[0].startswith("-"):
            names.add(words[0])
    return names


def test_short_help_lists_every_command():
    res = cli(ROOT, "-h")
    assert res.code == 0, res
    assert res.out.startswith("Usage: git-lifeline [OPTIONS] COMMAND [ARGS]...")
    for name in VISIBLE:
        assert re.search(rf"^  {name}\s", res.out, re.M), name


def test_short_help_through_git_dispatch(repo, git_dispatch):
    res = cli(repo, "-h", via=Via.GIT)
    assert res.code == 0 and "Usage: git-lifeline" in res.out, res
    sub = cli(repo, "log", "-h", via=Via.GIT)
    assert sub.code == 0 and "--summary" in sub.out, sub


def test_version_is_reported():
    res = cli(ROOT, "--version")
    assert res.code == 0 and __version__ in res.out, res


def test_an_unknown_command_is_a_usage_error(repo):
    res = cli(repo, "frobnicate")
    assert res.code == 2 and "No such command" in res.err and "Traceback" not in res.err, res


def test_man_page_parser_reads_ss_and_tp_tags():
    sample = (
        '.SH COMMANDS\n.SS "git lifeline log"\ntext\n.SS \\fBlist\\fR [\\-\\-json]\n'
        ".TP\n.B verify\nchecks\n.TP\n.B \\-\\-json\nan option\n.TP\n\\fBgit lifeline show\\fR \\fIID\\fR\n"
    )
    assert man_page_commands(sample) == {"log", "list", "verify", "show"}


@pytest.mark.xfail(
    condition=not MAN_PAGE.read_text(encoding="utf-8").strip(), strict=True, reason="man page not written yet"
)
def test_every_command_is_documented_in_the_man_page():
    documented = man_page_commands(MAN_PAGE.read_text(encoding="utf-8"))
    assert set(COMMANDS) <= documented, f"undocumented: {sorted(set(COMMANDS) - documented)}"


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"]])
def test_piping_into_head_exits_quietly(ledger, repo, git_dispatch, argv):
    # Long summaries: the output is far larger than a pipe buffer, so the writer
    # really meets a closed pipe after `head -1` exits.
    ledger.append([make_entry(i, summary=f"Entry {i:03d} " + "w" * 280) for i in range(200)])
    proc = subprocess.run(
        ["sh", "-c", f"git lifeline {' '.join(argv)} | head -1"],
        cwd=str(repo),
        capture_output=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert proc.returncode == 0
    assert proc.stdout.count(b"\n") == 1
    assert proc.stderr == b"", proc.stderr.decode("utf-8", "replace")


def _installed_man_page():
    import sys

    return Path(sys.prefix) / "share" / "man" / "man1" / "git-lifeline.1"


@pytest.mark.skipif(shutil.which("man") is None, reason="man-db is not installed (.ci/run installs it)")
@pytest.mark.parametrize("argv", [["help", "lifeline"], ["lifeline", "--help"]])
def test_git_help_opens_the_installed_man_page(tmp_path, argv, monkeypatch):
    import os
    import sys

    page = _installed_man_page()
    assert page.exists(), "the package must install man/git-lifeline.1 into share/man/man1"
    assert page.read_bytes() == (ROOT / "man" / "git-lifeline.1").read_bytes(), (
        "the installed man page is stale: reinstall the package"
    )
    monkeypatch.delenv("MANPATH", raising=False)
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    shown = git(tmp_path, *argv, env={"MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80", "PATH": path})
    out = shown.out
    assert "GIT-LIFELINE(1)" in out and "reasoning ledger" in out


# ---- --line after a command's name means what it means before it ---------------------------
# Every command that works on one line (or limits itself to one) takes --line after its name.
# The others span the repository (or take their lines as --from/--to) and refuse it there.
LINE_COMMANDS = {
    "init",
    "mcp",
    "log",
    "show",
    "list",
    "context",
    "recall",
    "checkpoint",
    "resume",
    "pin",
    "unpin",
    "stale",
    "conflicts",
    "render",
    "migrate",
    "verify",
    "import",
    "export",
    "graph",
    "fetch",
    "pull",
    "push",
    "sync",
    "why",
    "pr",
    "propose",
    "review",
    "approve",
    "reject",
    "audit",
    "view",
    "revise",
    "revert",
    "close",
    "resolve",
    "reaffirm",
}
REPOSITORY_COMMANDS = {
    "lines",
    "where",
    "promote",
    "policy",
    "clone",
    "remote-setup",
    "hooks",
    "hook",
    "status",
    "doctor",
    "agent-hook",
    "model",
    "completion",
}


def takes_line_after_its_name(command) -> bool:
    return any("--line" in getattr(p, "opts", ()) for p in command.params)


def test_every_command_is_classified_as_taking_a_line_or_spanning_the_repository():
    assert LINE_COMMANDS | REPOSITORY_COMMANDS == set(COMMANDS)
    taking = {name for name, cmd in EVERY_COMMAND.items() if takes_line_after_its_name(cmd)}
    assert taking == LINE_COMMANDS


@pytest.fixture(scope="module")
def two_line_repo(tmp_path_factory):
    """Lines main and ops that answer every command differently: two decisions on one subject
    (declared with --subject), an open item, a pin, a checkpoint, a pending and a rejected proposal each; a shared entry (same id in both
    lines) named by a code commit's trailer; an ops decision whose code changed since; an empty
    bare remote. Built at `case/` (the path every run uses, so outputs compare), kept in `template/`."""
    base = tmp_path_factory.mktemp("line-after")
    case, template = base / "case", base / "template"
    repo, remote = case / "repo", case / "remote.git"
    case.mkdir()
    git(case, "init", "-q", "--bare", str(remote))
    git(case, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", str(remote))

    def ok(*args):
        res = cli(repo, *args, via=Via.THIS_PROCESS)
        assert res.code == 0, (args, res)
        return res.out

    for line, topic in (("main", "Database: PostgreSQL"), ("ops", "Paging: on-call rota")):
        paths = "paths: app.py\n\n" if line == "ops" else ""
        subject = topic.split(":")[0]
        decision = ok(
            "--line",
            line,
            "log",
            "--kind",
            "decision",
            "--summary",
            topic,
            "--body",
            f"{paths}Why {line}",
            "--subject",
            subject,
            "--json",
        )
        ok(
            "--line",
            line,
            "log",
            "--kind",
            "decision",
            "--summary",
            topic + " (backup)",
            "--body",
            "And " + line,
            "--subject",
            subject,
        )
        ok("--line", line, "log", "--kind", "open", "--summary", f"Open on {line}", "--body", "To be answered.")
        ok("--line", line, "pin", json.loads(decision)["entry"]["id"][:12])
        ok("--line", line, "checkpoint", "--next", f"continue on {line}")
        shared = json.loads(
            ok(
                "--line",
                line,
                "log",
                "--kind",
                "note",
                "--summary",
                "Shared: rollout",
                "--body",
                "Same in both lines.",
                "--json",
            )
        )["entry"]["id"]
        ok("--line", line, "propose", "--kind", "note", "--summary", f"Pending on {line}", "--body", "b")
        rejected = json.loads(
            ok("--line", line, "propose", "--kind", "note", "--summary", f"Rejected on {line}", "--body", "b", "--json")
        )["proposal"]
        ok("--line", line, "reject", rejected[:8], "--why", "not now")
    ops_entries = json.loads(ok("--line", "ops", "list", "--json"))
    ops_id = ops_entries[0]["id"]
    ops_open = next(e["id"] for e in ops_entries if e["kind"] == "open")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    later = f"@{int(time.time()) + 3600} +0000"  # after the decisions, whatever the clock's resolution
    git(
        repo,
        "commit",
        "-q",
        "-m",
        f"add app\n\nLifeline: {shared[:12]}",
        env={"GIT_AUTHOR_DATE": later, "GIT_COMMITTER_DATE": later},
    )
    shutil.copytree(case, template, symlinks=True)
    return {"case": case, "template": template, "repo": repo, "ops_id": ops_id, "ops_open": ops_open}


def _line_case_args(name: str, fixture: dict) -> list:
    return {
        "init": ["init", "--no-mcp", "--no-hooks"],
        "log": ["log", "--kind", "note", "--summary", "Noted", "--body", "b", "--parents", fixture["ops_id"][:10]],
        "show": ["show", fixture["ops_id"][:10]],
        "list": ["list"],
        "context": ["context"],
        "recall": ["recall", "paging rota"],
        "checkpoint": ["checkpoint", "--next", "continue on ops"],  # ops's live checkpoint says it already
        "resume": ["resume"],
        "pin": ["pin", fixture["ops_id"][:10]],
        "unpin": ["unpin", fixture["ops_id"][:10]],
        "stale": ["stale"],
        "conflicts": ["conflicts"],
        "render": ["render"],
        "migrate": ["migrate", "--from", "LIFELINE.ops.md"],
        "verify": ["verify"],
        "import": ["import", "--from", str(ROOT / "tests" / "data" / "seed" / "LIFELINE.research.md")],
        "export": ["export"],
        "graph": ["graph"],
        "fetch": ["fetch"],
        "pull": ["pull"],
        "push": ["push"],
        "sync": ["sync"],
        "why": ["why", "app.py", "--json"],  # the trailer's id is in both lines: --line picks one
        "pr": ["pr", "HEAD...HEAD", "--format", "json"],
        "propose": [
            "propose",
            "--kind",
            "note",
            "--summary",
            "Proposed",
            "--body",
            "b",
            "--parents",
            fixture["ops_id"][:10],
        ],
        "review": ["review"],
        "approve": ["approve", "all"],
        "reject": ["reject", "all", "--why", "no"],
        "audit": ["audit"],
        "view": ["view", "--no-open"],
        "revise": ["revise", fixture["ops_id"][:10], "--body", "Changed since."],
        "revert": ["revert", fixture["ops_id"][:10]],
        "close": ["close", fixture["ops_open"][:10], "--answer", "Answered."],
        "resolve": ["resolve", fixture["ops_id"][:10]],
        "reaffirm": ["reaffirm", fixture["ops_id"][:10]],
    }[name]


def _masked(text: str) -> str:
    """Output with object ids and times masked: a proposal's id and a commit's hold its time."""
    text = re.sub(r"\S*/lifeline-([\w-]+?)-\w+\.html", r"<tmp>/lifeline-\1-<random>.html", text)  # view's page
    text = re.sub(r"\b[0-9a-f]{7,64}\b", "<id>", text)
    return re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?Z?)?", "<time>", text)


@pytest.mark.parametrize("name", sorted(LINE_COMMANDS - {"mcp"}))  # mcp hands over to the server: test_mcp.py
def test_line_after_the_command_name_works_as_before_it(two_line_repo, name):
    def run(*argv):
        shutil.rmtree(two_line_repo["case"])
        shutil.copytree(two_line_repo["template"], two_line_repo["case"], symlinks=True)
        res = cli(two_line_repo["repo"], *argv, via=Via.THIS_PROCESS)
        return res.code, _masked(res.out), _masked(res.err)

    args = _line_case_args(name, two_line_repo)
    before = run("--line", "ops", *args)
    after = run(*args[:1], "--line", "ops", *args[1:])
    assert "No such option" not in after[2] and after[0] != 2, after
    assert after == before
    assert run(*args) != before, f"{name}: --line ops made no difference, so the test proves nothing"


@pytest.mark.parametrize("name", sorted(REPOSITORY_COMMANDS - {"hook", "hooks", "clone"}))
def test_a_command_that_spans_the_repository_refuses_line_after_its_name(repo, name):
    res = cli(repo, name, "--line", "ops")
    assert res.code == 2 and "No such option '--line'" in res.err, res


def test_an_invalid_line_after_the_command_name_is_refused_before_anything_runs(repo):
    for argv in (
        ["log", "--line", "a b", "--kind", "note", "--summary", "s", "--body", "b"],
        ["mcp", "--line", "../x"],
    ):
        res = cli(repo, *argv)
        assert res.code == 2 and "invalid line name" in res.err and "Traceback" not in res.err, res
    assert not list((repo / ".git" / "refs").glob("lifeline*/**/*"))


# ---- one warnings channel -------------------------------------------------------------------
def test_a_line_rewound_by_hand_is_reported_on_stderr_by_context(repo):
    for summary in ("First", "Second"):
        assert cli(repo, "log", "--kind", "note", "--summary", summary, "--body", "b").code == 0
    first = cli(repo, "context")
    assert first.code == 0 and "warning" not in first.err, first  # the cache now holds both entries
    git(repo, "update-ref", "refs/lifeline/main", "refs/lifeline/main~1")
    res = cli(repo, "context")
    assert res.code == 0, res
    assert "git-lifeline: warning: the line lost entries since the cache was built" in res.err, res
    assert "git lifeline verify" in res.err and "Second" not in res.out


# ---- one error boundary ---------------------------------------------------------------------
def test_every_failure_is_described_in_one_sentence_with_its_exit_code():
    from git_lifeline.errors import InputError, IntegrityError, describe_failure
    from git_lifeline.git import repo as _registers_the_repository_failures  # noqa: F401

    assert describe_failure(InputError("bad")) == ("bad", 2)
    assert describe_failure(IntegrityError("tampered")) == ("tampered", 1)
    message, code = describe_failure(KeyError("ab" * 20))
    assert code == 4 and "is missing from the repository" in message
    message, code = describe_failure(OSError(28, "No space left on device"))
    assert code == 4 and "No space left on device" in message
    assert describe_failure(ValueError("oops")) == ("internal error: ValueError: oops", 3)
    assert describe_failure(KeyboardInterrupt()) == ("interrupted", 130)


def test_migrate_with_the_projection_disabled_succeeds_once_it_has_written(repo, tmp_path):
    assert cli(repo, "log", "--kind", "note", "--summary", "Kept", "--body", "b").code == 0
    source = tmp_path / "LIFELINE.md"
    shutil.copy(repo / "LIFELINE.md", source)
    other = repo.parent / "other"
    git(repo.parent, "init", "-q", str(other))
    git(other, "config", "lifeline.projection", "false")
    res = cli(other, "migrate", "--from", str(source))
    assert res.code == 0 and "1 added" in res.out, res  # it used to write, then fail: "projection is disabled"
    assert not (other / "LIFELINE.md").exists()
