"""Two real clones of a bare remote, both set up by `init`: one pushes a correction, the other
runs a plain `git pull`. Its `context`, its MCP context (the SDK's stdio client) and its
SessionStart hook must carry the correction, not the replaced decision; and when the fetched
entries cannot be brought in (a tip that fails verification, another writer holding the line's
lock, a repository this process cannot write) the first lines say how far behind the line is and
the command that fixes it."""

from __future__ import annotations

import fcntl
import json

from kit.home import hermetic  # noqa: F401
from kit.mcp_client import call_once
from kit.repos import (
    log_entry,
    make_repo,  # noqa: F401
    project_on_remote,
    ref,
)
from kit.run import Via, cli, git

INIT = ("init", "--no-mcp", "--no-hooks", "--no-agents")


def two_clones(tmp_path):
    remote, a = project_on_remote(tmp_path, "a", upstream=True)
    assert cli(a, *INIT, via=Via.THIS_PROCESS).code == 0
    r = cli(a, "log", "--kind", "decision", "--summary", "Database: MySQL", "--body", "Known.", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    assert cli(b, *INIT, via=Via.THIS_PROCESS).code == 0
    assert "Database: MySQL" in cli(b, "context", via=Via.THIS_PROCESS).out
    return a, b


def correct(a, summary: str) -> None:
    old = cli(a, "list", "--kind", "decision", "--json", via=Via.THIS_PROCESS)
    parent = json.loads(old.out)[-1]["id"]
    r = log_entry(a, "correction", summary, "MySQL lost.", "--parents", parent, via=Via.THIS_PROCESS, expect=None)
    assert r.code == 0, r
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0


def mcp_context(cwd, under: tuple = ()) -> str:
    return call_once(cwd, "lifeline_context", under=under).content[0].text


def session_start(cwd, under: tuple = ()) -> str:
    payload = json.dumps({"session_id": "s1", "cwd": str(cwd), "source": "startup"}).encode()
    r = cli(cwd, "agent-hook", "session-start", input=payload, via=Via.PYTHON, under=under)
    assert r.code == 0, r
    return r.out


def test_a_plain_git_pull_is_what_context_mcp_and_the_session_hook_read(tmp_path):
    a, b = two_clones(tmp_path)
    correct(a, "Database: PostgreSQL")
    git(b, "pull", "-q")
    assert ref(b, "refs/remotes/origin/lifeline/main") == ref(a, "refs/lifeline/main")
    for text in (cli(b, "context", via=Via.PYTHON).out, mcp_context(b), session_start(b)):
        assert "Database: PostgreSQL" in text and "Behind" not in text, text
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main"), "brought in as a pull brings it"


def test_the_warm_context_never_serves_a_line_a_plain_fetch_moved_past(tmp_path):
    a, b = two_clones(tmp_path)
    cli(b, "context", via=Via.PYTHON)  # the cache and its tip are current: the next read is warm
    correct(a, "Database: PostgreSQL")
    git(b, "fetch", "-q")
    out = cli(b, "context", via=Via.PYTHON).out
    assert "Database: PostgreSQL" in out, out


def test_a_fetched_tip_that_fails_verification_is_never_read_and_the_context_says_so(tmp_path):
    from kit.tamper import tamper

    a, b = two_clones(tmp_path)
    correct(a, "Database: PostgreSQL")
    decision = json.loads(cli(a, "list", "--kind", "decision", "--json", via=Via.THIS_PROCESS).out)[0]["id"]
    tamper(a, decision, summary="Database: Oracle")
    git(a, "push", "-q", "origin", "+refs/lifeline/main:refs/lifeline/main")  # a hookless remote takes it
    git(b, "fetch", "-q")
    before = ref(b, "refs/lifeline/main")
    r = cli(b, "context", via=Via.PYTHON)
    first = r.out.splitlines()[0]
    assert "behind origin" in first and "git lifeline pull origin" in first, r
    assert "1 entry behind" in first, first
    assert "Oracle" not in r.out and "PostgreSQL" not in r.out, "nothing of an unverified tip is read"
    assert ref(b, "refs/lifeline/main") == before
    for text in (mcp_context(b), session_start(b)):
        first = text.splitlines()[0]
        assert "1 entry behind origin" in first and "git lifeline pull origin" in first, text
        assert "Oracle" not in text and "PostgreSQL" not in text, text


def test_a_line_another_process_is_writing_is_read_as_it_stands_with_how_far_behind(tmp_path):
    a, b = two_clones(tmp_path)
    correct(a, "Database: PostgreSQL")
    git(b, "fetch", "-q")
    lock = b / ".git" / "lifeline" / "main.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        r = cli(b, "context", via=Via.PYTHON)
        hook = session_start(b)
        served = mcp_context(b)
    for text in (r.out, hook, served):
        first = text.splitlines()[0]
        assert "1 entry behind origin" in first and "git lifeline pull origin" in first, text
        assert "Database: MySQL" in text
    assert "Database: PostgreSQL" in cli(b, "context", via=Via.PYTHON).out, "the next read brings it in"


def test_a_clone_this_process_cannot_write_is_read_as_it_stands_with_how_far_behind(tmp_path):
    from kit.faults import read_only_argv

    a, b = two_clones(tmp_path)
    correct(a, "Database: PostgreSQL")
    git(b, "fetch", "-q")
    before = ref(b, "refs/lifeline/main")
    under = read_only_argv(b / ".git")  # a mount, a CI cache, another user's tree
    r = cli(b, "context", via=Via.PYTHON, under=under)
    assert r.code == 0, r
    for text in (r.out, mcp_context(b, under), session_start(b, under)):
        first = text.splitlines()[0]
        assert "1 entry behind origin" in first and "git lifeline pull origin" in first, text
        assert "this repository cannot be written here" in first, first
        assert "Database: MySQL" in text and "PostgreSQL" not in text, text
    listed = cli(b, "list", "--json", via=Via.PYTHON, under=under)
    assert listed.code == 0 and "1 entry behind origin" in listed.err, listed
    json.loads(listed.out)  # the sentence goes to stderr: --json stays JSON
    assert ref(b, "refs/lifeline/main") == before, "nothing was written"
    assert "Database: PostgreSQL" in cli(b, "context", via=Via.PYTHON).out, "writable again, the read brings it in"
