"""Disk and repository faults: a read-only object database, refs or work tree, a full disk
at every size of the last free space, missing objects, a held or stale ref lock. Each gives
a clear error and a documented exit code (4: the repository failed; 1 from verify), never a
traceback, and nothing half-written: the ref is where it was or at a complete commit,
verify passes once the fault is gone, and the next write succeeds."""

from __future__ import annotations

import os
import time

import pytest
from kit.entries import make_entry
from kit.faults import assert_ledger_whole, fill_disk, read_only, small_disk, staged
from kit.repos import init_repo, open_ledger, open_workspace, remote_and_clones, snapshot
from kit.run import cli, git

from git_lifeline.app import exchange
from git_lifeline.app.draft import Draft


def log(repo, summary: str):
    return cli(repo, "log", "--kind", "note", "--summary", summary, "--body", f"why {summary}")


def assert_clear_failure(res, code: int, *fragments: str) -> None:
    assert res.code == code, res
    assert "Traceback" not in res.err and "internal error" not in res.err, res
    for fragment in fragments:
        assert fragment in res.err, res


@pytest.fixture
def line(repo):
    open_ledger(repo).append([make_entry(i) for i in range(3)])
    return repo


# ---- read-only -----------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["objects", "refs"])
def test_a_read_only_git_dir_refuses_the_write_and_changes_nothing(line, where, record_counts):
    before = snapshot(line)
    _, fault = staged(read_only(line / ".git" / where))
    try:
        res = log(line, f"read-only {where}")
    finally:
        fault.__exit__(None, None, None)
    assert_clear_failure(res, 4, "could not be read or written" if where == "objects" else "refs/lifeline/main")
    assert "Read-only file system" in res.err or "Permission denied" in res.err, res
    assert snapshot(line) == before
    assert_ledger_whole(line)
    assert log(line, "after").code == 0
    record_counts("repo-faults", tried=1, held=1, lost=0)


def test_a_read_only_work_tree_records_the_entry_and_warns_about_the_projection(line, record_counts):
    git(line, "config", "lifeline.projection", "docs/LIFELINE.md")  # a work-tree directory we can lock
    assert cli(line, "render").code == 0
    projection = line / "docs" / "LIFELINE.md"
    before = projection.read_bytes()
    _, fault = staged(read_only(line / "docs"))
    try:
        res = log(line, "work tree read-only")
    finally:
        fault.__exit__(None, None, None)
    assert res.code == 0, res
    assert "warning: the entry is recorded, but" in res.err and "git lifeline render" in res.err, res
    assert projection.read_bytes() == before
    assert "work tree read-only" in [e.summary for e in open_ledger(line).entries()]
    assert cli(line, "render").code == 0
    assert_ledger_whole(line)
    record_counts("repo-faults", tried=1, held=1, lost=0)


# ---- a full disk, at every amount of space left ---------------------------------------------
FREE_KIB = list(range(0, 42, 3))


def test_a_full_disk_never_leaves_a_half_written_line(tmp_path, record_counts):
    outcomes = {"refused": 0, "written": 0, "projection-warned": 0}
    _, fault = staged(small_disk(tmp_path / "disk", "4m"))
    try:
        repo = init_repo(tmp_path / "disk" / "repo")
        open_ledger(repo).append([make_entry(0)])
        for _n, kib in enumerate(FREE_KIB):
            head = open_ledger(repo).head()
            filler = fill_disk(tmp_path / "disk", kib * 1024)
            try:
                res = log(repo, f"with {kib} KiB free")
            finally:
                filler.unlink()
            after = open_ledger(repo).head()
            if res.code == 0:
                outcomes["written"] += 1
                assert after != head
                if "warning:" in res.err:
                    outcomes["projection-warned"] += 1
                    assert cli(repo, "render").code == 0
            else:
                outcomes["refused"] += 1
                assert_clear_failure(res, 4, "was not changed")
                assert "No space left on device" in res.err or "is the disk full?" in res.err, res
                assert after == head, "a refused write moved the ref"
            assert_ledger_whole(repo)
        assert log(repo, "after the disk was freed").code == 0
    finally:
        fault.__exit__(None, None, None)
    assert outcomes["refused"] and outcomes["written"], outcomes
    record_counts("full-disk", tried=len(FREE_KIB), held=len(FREE_KIB), lost=0, **outcomes)


# ---- missing objects -------------------------------------------------------------------------
def drop_object(repo, rev: str) -> str:
    oid = git(repo, "rev-parse", rev)
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    return oid


@pytest.mark.parametrize(
    "what,rev",
    [
        ("entries-tree", "refs/lifeline/main:entries"),
        ("head-commit", "refs/lifeline/main"),
        ("older-commit", "refs/lifeline/main~1"),
    ],
)
def test_a_missing_object_is_reported_never_a_crash(repo, what, rev, record_counts):
    for i in range(3):
        open_ledger(repo).append([make_entry(i)])  # loose objects, one commit each
    oid = drop_object(repo, rev)
    res = cli(repo, "verify")
    assert res.code == 1 and "missing-object" in res.out and oid in res.out, res
    if what != "older-commit":
        res = log(repo, "on a damaged line")
        assert_clear_failure(res, 4, oid, "git fsck")
        res = cli(repo, "context")
        assert_clear_failure(res, 4, oid)
    record_counts("repo-faults", tried=1, held=1, lost=0)


def test_a_missing_entry_blob_is_reported_by_verify(line, record_counts):
    blob = git(line, "ls-tree", "-r", "refs/lifeline/main").split()[2]
    (line / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    res = cli(line, "verify")
    assert res.code == 1 and "missing-object" in res.out and blob in res.out, res
    assert "Traceback" not in res.err
    record_counts("repo-faults", tried=1, held=1, lost=0)


# ---- locked refs -------------------------------------------------------------------------------
def test_a_held_ref_lock_is_a_clear_error(line, record_counts):
    git(line, "config", "lifeline.staleRefLockSeconds", "3600")
    lock = line / ".git" / "refs" / "lifeline" / "main.lock"
    lock.write_text("held by another process\n")
    before = snapshot(line)
    t0 = time.monotonic()
    res = log(line, "while locked")
    assert_clear_failure(res, 4, "is locked", str(lock))
    assert time.monotonic() - t0 < 30
    assert snapshot(line) == before
    lock.unlink()
    assert log(line, "after the lock").code == 0
    assert_ledger_whole(line)
    record_counts("repo-faults", tried=1, held=1, lost=0)


def test_a_pull_waits_out_a_ref_lock_left_by_a_killed_writer_instead_of_giving_up(tmp_path, record_counts):
    """A pull killed inside its ref update leaves <ref>.lock; the next pull must wait until
    the lock is stale and take it, as an append does (it gave up after 16 short pauses,
    0.8 s, before a 1 s lock could turn stale, saying the line 'kept moving')."""
    remote, a, b = remote_and_clones(tmp_path)
    git(a, "config", "lifeline.staleRefLockSeconds", "1")
    incoming = open_ledger(b).log(Draft(kind="note", summary="from b", body="the remote moves on")).entry.id
    exchange.sync_with(open_workspace(b), "origin")
    open_ledger(a).log(Draft(kind="note", summary="from a", body="diverges a"))  # the pull must merge
    lock = a / ".git" / "refs" / "lifeline" / "main.lock"
    lock.write_text(open_ledger(a).head() + "\n")  # just now: a writer killed a moment ago
    exchange.pull(open_workspace(a), "origin")
    assert not lock.exists()
    assert incoming in {e.id for e in open_ledger(a).entries()}
    assert_ledger_whole(a)
    record_counts("repo-faults", tried=1, held=1, lost=0)


def test_a_stale_ref_lock_left_by_a_killed_writer_is_removed_with_its_phantom_reflog_entry(line, record_counts):
    # what a writer killed between libgit2's reflog append and its rename leaves behind:
    # <ref>.lock naming the new commit, and a reflog line for a move that never happened
    led = open_ledger(line)
    head = led.head()
    phantom = git(line, "commit-tree", "-p", head, "-m", "never published", git(line, "rev-parse", f"{head}^{{tree}}"))
    lock = line / ".git" / "refs" / "lifeline" / "main.lock"
    lock.write_text(phantom + "\n")
    reflog = line / ".git" / "logs" / "refs" / "lifeline" / "main"
    with open(reflog, "a") as f:
        f.write(f"{head} {phantom} Test Author <test@example.com> 1714560000 +0000\tlifeline: append 1\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    assert cli(line, "verify").code == 0  # an update that never took effect is not a rewind
    res = log(line, "after a crash")
    assert res.code == 0, res
    assert not lock.exists()
    assert phantom not in reflog.read_text()
    assert_ledger_whole(line)
    record_counts("repo-faults", tried=1, held=1, lost=0)
