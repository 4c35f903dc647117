"""LIFELINE.md is decided at `init` (issue 16.7): generated from the ref and ignored by git.

Tools that kept a tracked export of their memory and read it back lost data and filled
histories with noise commits; here the file is listed in the git dir's info/exclude (never
a tracked .gitignore), no command writes to a code branch, the index or a tracked file
unless asked (`render` is asking), the files the tool writes get the umask's permissions,
and the file keeps the newest entries within lifeline.projectionMaxBytes, while a whole
render still rebuilds the same ids through `migrate` (the fixed point)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from kit.entries import make_entry
from kit.repos import bare, commit_file, init_repo, open_ledger, snapshot
from kit.run import ROOT, Result, cli, git

from git_lifeline.core.entry import entry_order_key
from git_lifeline.views import projection

SEED = ROOT / "tests" / "data" / "seed"


@pytest.fixture
def code_repo(tmp_path) -> Path:
    repo = init_repo(tmp_path / "repo")
    commit_file(repo)
    commit_file(repo, "src.py", "print('hi')\n")
    return repo


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


def code_state(repo: Path) -> dict:
    """What belongs to the code: branches and HEAD, the index, every tracked file's bytes."""
    tracked = git(repo, "ls-files", "-z").split("\0")
    return {
        "heads": git(repo, "for-each-ref", "refs/heads", "refs/tags", "--format=%(refname) %(objectname)"),
        "HEAD": git(repo, "rev-parse", "HEAD"),
        "index": git(repo, "ls-files", "-s"),
        "files": {p: (repo / p).read_bytes() for p in tracked if p},
    }


# ---- decided at init: generated and ignored ----------------------------------------------------
# init is run with --no-agents: writing the agents' rules files (CLAUDE.md, AGENTS.md) is what init
# is asked to do otherwise (issue 15); what these tests hold is that the projection never dirties git.
def test_init_lists_the_projection_in_info_exclude_and_never_in_a_tracked_gitignore(code_repo):
    res = cli(code_repo, "init", "--no-mcp", "--no-hooks", "--no-agents")
    assert res.code == 0, res
    assert "ignored by git through info/exclude" in res.out
    assert "/LIFELINE.md" in (code_repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert not (code_repo / ".gitignore").exists()
    cli(code_repo, "log", "--kind", "note", "--summary", "First", "--body", "b")
    assert (code_repo / "LIFELINE.md").exists() and status(code_repo) == ""
    again = (code_repo / ".git" / "info" / "exclude").read_text()
    cli(code_repo, "init", "--no-mcp", "--no-hooks", "--no-agents")
    assert (code_repo / ".git" / "info" / "exclude").read_text() == again  # said once


def test_a_first_write_without_init_leaves_git_status_clean(code_repo):
    for line in ("main", "research"):
        res = cli(code_repo, "log", "--line", line, "--kind", "note", "--summary", f"On {line}", "--body", "b")
        assert res.code == 0, res
    assert (code_repo / "LIFELINE.research.md").exists()
    assert status(code_repo) == ""


def test_no_command_writes_to_code_branches_the_index_or_tracked_files(code_repo, tmp_path, record_counts):
    remote = bare(tmp_path, "remote.git")
    git(code_repo, "remote", "add", "origin", str(remote))
    git(code_repo, "push", "-q", "origin", "main")
    before = code_state(code_repo)
    steps = [
        ("init", "--no-mcp", "--no-hooks", "--no-agents"),
        ("log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID"),
        ("checkpoint", "--thread", "db", "--done", "picked a database", "--next", "schema"),
        ("--line", "research", "import", "--from", str(SEED / "LIFELINE.research.md")),
        ("propose", "--kind", "note", "--summary", "An agent's idea", "--body", "maybe"),
        ("render",),
        ("list",),
        ("context",),
        ("verify",),
        ("push",),
        ("pull",),
        ("sync",),
    ]
    held = 0
    for argv in steps:
        res = cli(code_repo, *argv)
        assert res.code == 0, (argv, res)
        assert code_state(code_repo) == before, argv
        assert status(code_repo) == "", (argv, status(code_repo))
        held += 1
    record_counts("commands leaving code branches, index and tracked files alone", tried=len(steps), held=held, lost=0)


def test_a_tracked_lifeline_md_is_not_rewritten_unless_asked(code_repo):
    cli(code_repo, "log", "--kind", "note", "--summary", "First", "--body", "b")
    git(code_repo, "add", "-f", "LIFELINE.md")
    git(code_repo, "commit", "-q", "-m", "someone committed the projection")
    committed = (code_repo / "LIFELINE.md").read_bytes()
    res = cli(code_repo, "log", "--kind", "note", "--summary", "Second", "--body", "b")
    assert res.code == 0 and "is tracked by git" in res.err and "git rm --cached LIFELINE.md" in res.err, res
    assert (code_repo / "LIFELINE.md").read_bytes() == committed and status(code_repo) == ""
    assert "tracked by git" in cli(code_repo, "init", "--no-mcp", "--no-hooks", "--no-agents").out
    res = cli(code_repo, "render")  # asked: written
    assert res.code == 0, res
    assert b"### note: Second" in (code_repo / "LIFELINE.md").read_bytes()
    assert status(code_repo) == "M LIFELINE.md"  # (stripped: " M")


# ---- permissions: the umask's, as git gives the files it checks out --------------------------------
def run_with_umask(cwd: Path, mask: int, *args: str) -> Result:
    return cli(cwd, *args, under=("sh", "-c", f'umask {mask:03o} && exec "$@"', "sh"))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_written_files_get_the_umasks_permissions(code_repo, tmp_path, mask):
    out = tmp_path / "out"
    out.mkdir()
    for args in (
        ("log", "--kind", "note", "--summary", "Perms", "--body", "b"),
        ("export", "-o", str(out / "export.md")),
        ("graph", "-o", str(out / "graph.mmd")),
    ):
        proc = run_with_umask(code_repo, mask, *args)
        assert proc.code == 0, proc
    for path in (code_repo / "LIFELINE.md", out / "export.md", out / "graph.mmd"):
        assert mode(path) == 0o666 & ~mask, (path.name, oct(mode(path)))


def test_a_rewritten_file_keeps_the_mode_it_was_given(code_repo):
    cli(code_repo, "log", "--kind", "note", "--summary", "First", "--body", "b")
    os.chmod(code_repo / "LIFELINE.md", 0o640)
    run_with_umask(code_repo, 0o022, "log", "--kind", "note", "--summary", "Second", "--body", "b")
    assert mode(code_repo / "LIFELINE.md") == 0o640
    assert "### note: Second" in (code_repo / "LIFELINE.md").read_text()


# ---- bounded size, and migrate's fixed point ---------------------------------------------------------
CAP = 20_000
COUNT = 120


@pytest.fixture
def capped(code_repo):
    git(code_repo, "config", "lifeline.projectionMaxBytes", str(CAP))
    led = open_ledger(code_repo)
    for i in range(COUNT):  # one append each: the file is extended and cut as it goes
        led.append([make_entry(i, body=f"why number {i}\n" + "detail " * 20)])
    return code_repo


def test_the_projection_keeps_the_newest_entries_within_its_size_limit(capped):
    text = (capped / "LIFELINE.md").read_text()
    assert len(text.encode()) <= CAP
    shown = projection.parse(text)
    left_out = projection.omitted(text)
    assert left_out > 0 and left_out + len(shown) == COUNT
    ordered = sorted(open_ledger(capped).entries(), key=entry_order_key)
    assert [e.id for e in shown] == [e.id for e in ordered[left_out:]]  # the newest, in order
    assert f"{left_out} earlier entries are not shown here" in text and "git lifeline show ID" in text


def test_an_extended_bounded_projection_equals_a_fresh_render(capped):
    extended = (capped / "LIFELINE.md").read_bytes()
    assert cli(capped, "render").code == 0
    assert (capped / "LIFELINE.md").read_bytes() == extended


def test_migrate_refuses_a_bounded_projection_and_writes_nothing(capped, tmp_path):
    fresh = init_repo(tmp_path / "fresh")
    before = snapshot(fresh)
    res = cli(fresh, "migrate", "--from", str(capped / "LIFELINE.md"))
    assert res.code == 2 and "earlier ones were left out" in res.err and "projectionMaxBytes=0" in res.err, res
    assert snapshot(fresh) == before


def test_a_whole_render_still_rebuilds_the_same_ids_byte_for_byte(capped, tmp_path):
    git(capped, "config", "lifeline.projectionMaxBytes", "0")  # a whole file (git -c ... lifeline render)
    res = cli(capped, "render")
    assert res.code == 0, res
    whole = (capped / "LIFELINE.md").read_bytes()
    assert projection.omitted(whole.decode()) == 0 and len(projection.parse(whole.decode())) == COUNT
    fresh = init_repo(tmp_path / "fresh")
    git(fresh, "config", "lifeline.projectionMaxBytes", "0")
    res = cli(fresh, "migrate", "--from", str(capped / "LIFELINE.md"))
    assert res.code == 0 and f"{COUNT} added" in res.out, res
    assert {e.id for e in open_ledger(fresh).entries()} == {e.id for e in open_ledger(capped).entries()}
    assert (fresh / "LIFELINE.md").read_bytes() == whole


def test_a_bad_size_setting_is_a_warning_and_the_default_limit(code_repo):
    git(code_repo, "config", "lifeline.projectionMaxBytes", "lots")
    res = cli(code_repo, "log", "--kind", "note", "--summary", "Still", "--body", "b")
    assert res.code == 0 and "lifeline.projectionMaxBytes" in res.err, res
    assert "### note: Still" in (code_repo / "LIFELINE.md").read_text()


@pytest.mark.parametrize("cap", [2_500, 7_777, 20_000, 0])
def test_cutting_as_entries_arrive_gives_the_bytes_of_a_fresh_bounded_render(cap):
    # bodies of every width, multi-byte text and fences: the cut counts bytes and entry starts
    bodies = ["short", "ünïcødé 漢字 🚀 " * 40, "```\nfenced\n### not an entry\n```", "x" * 1500, ""]
    entries = [
        make_entry(i, kind="checkpoint" if i % 5 == 4 else "note", body=bodies[i % len(bodies)]) for i in range(60)
    ]
    trees = [f"{i:040x}" for i in range(len(entries) + 1)]
    text = projection.render_bounded("main", entries[:1], trees[1], cap)
    for n in range(2, len(entries) + 1):
        text = projection.append_rendered(text, trees[n - 1], [entries[n - 1]], trees[n])
        assert text is not None
        text = projection.bound(text, "main", cap)
        assert text == projection.render_bounded("main", entries[:n], trees[n], cap), n
        assert cap == 0 or len(text.encode()) <= cap or len(projection.parse(text)) == 1
