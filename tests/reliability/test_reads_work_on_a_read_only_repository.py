"""Reads work on a repository nobody may write to (a read-only mount, a restored CI cache,
another user's tree): `context`, `recall`, `list`, `show`, `status` and `verify` print what
they print on a writable one and exit 0, whether the cache there is current (opened
read-only), missing, behind the line or damaged (the line folded in memory). Nothing is
written. A write still fails with a clear message.

The repository is made read-only as a whole: by a read-only bind mount as root (whom
permission bits do not stop), by removing write permission everywhere otherwise
(kit.faults.read_only); where neither can be staged the tests skip, saying why.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from kit.entries import make_entry
from kit.faults import read_only, staged
from kit.repos import open_ledger, snapshot
from kit.run import cli

QUERY = "decision reason"


def commands(repo: Path) -> list:
    some = open_ledger(repo).entries()[3].id[:10]
    return [("context",), ("recall", QUERY), ("list",), ("show", some), ("status",), ("verify",)]


def outputs(repo: Path, cmds: list) -> dict:
    out = {}
    for args in cmds:
        res = cli(repo, *args)
        assert res.code == 0 and "Traceback" not in res.err, (args, res)
        out[args] = res
    return out


@pytest.fixture
def line(repo):
    led = open_ledger(repo)
    led.append([make_entry(i) for i in range(12)])
    return repo


def cache_file(repo: Path) -> Path:
    return repo / ".git" / "lifeline" / "main.sqlite3"


def files_under(path: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()} if path.exists() else {}


def assert_reads_work_read_only(repo: Path, expect_warning: bool = False) -> str:
    cmds = commands(repo)
    before_lifeline = files_under(repo / ".git" / "lifeline")
    before = snapshot(repo)
    _, fault = staged(read_only(repo))
    try:
        got = outputs(repo, cmds)
        write = cli(repo, "log", "--kind", "note", "--summary", "not now", "--body", "read-only")
    finally:
        fault.__exit__(None, None, None)
    assert write.code == 4 and "Traceback" not in write.err, write
    assert "Read-only file system" in write.err or "Permission denied" in write.err, write
    assert snapshot(repo) == before
    assert files_under(repo / ".git" / "lifeline") == before_lifeline, "a read wrote under .git/lifeline"
    want = outputs(repo, cmds)  # writable again: the answers a writable repository gives
    for args in cmds:
        assert got[args].out == want[args].out, (args, got[args].err)
    err = "".join(r.err for r in got.values())
    if expect_warning:
        assert "did not match" in err or "rebuilt" in err or "not used" in err, err
    return err


def test_a_current_cache_is_read_in_place(line, record_counts):
    outputs(line, commands(line))  # the cache is built and current
    err = assert_reads_work_read_only(line)
    assert "warning" not in err, err
    record_counts("read-only repository", tried=1, held=1, lost=0)


def test_without_a_cache_the_line_is_folded_in_memory(line, record_counts):
    outputs(line, [("list",)])
    assert not cache_file(line).exists()
    (line / ".git" / "lifeline").mkdir(exist_ok=True)
    assert_reads_work_read_only(line)  # nothing was written there while it was read-only
    record_counts("read-only repository", tried=1, held=1, lost=0)


def test_a_cache_behind_the_line_is_not_advanced_but_folded_in_memory(line, record_counts):
    outputs(line, commands(line))
    open_ledger(line).append([make_entry(20, summary="Decision written after the cache")])
    err = assert_reads_work_read_only(line)
    assert "warning" not in err, err
    record_counts("read-only repository", tried=1, held=1, lost=0)


def test_a_damaged_cache_is_not_served_read_only(line, record_counts):
    outputs(line, commands(line))
    db = sqlite3.connect(str(cache_file(line)), isolation_level=None)
    db.execute("UPDATE entries SET summary='We chose the opposite' WHERE rowid=2")
    db.close()
    assert_reads_work_read_only(line, expect_warning=True)
    record_counts("read-only repository", tried=1, held=1, lost=0)


def test_only_the_cache_directory_read_only(line, record_counts):
    """A cache directory this user cannot write (another user's, a full disk's): the same."""
    outputs(line, [("list",)])
    lifeline = line / ".git" / "lifeline"
    lifeline.mkdir(exist_ok=True)
    cmds = commands(line)
    _, fault = staged(read_only(lifeline))
    try:
        got = outputs(line, cmds)
    finally:
        fault.__exit__(None, None, None)
    want = outputs(line, cmds)
    for args in cmds:
        assert got[args].out == want[args].out, (args, got[args].err)
    record_counts("read-only repository", tried=1, held=1, lost=0)


def test_the_read_only_open_finds_the_cache_whatever_its_path_holds(tmp_path):
    # The read-only open named the cache as a raw URI: in a directory called
    # 'a?mode=rwc#x%41' it cut the path short at '?' and opened another file, or none
    # (the line was then folded in memory at every read, silently).
    from git_lifeline.views.cache_check import read_only_uri

    where = tmp_path / "a?mode=rwc#x%41"
    where.mkdir()
    path = where / "main.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (v TEXT)")
    db.execute("INSERT INTO t VALUES ('here')")
    db.commit()
    db.close()
    ro = sqlite3.connect(read_only_uri(str(path)), uri=True)
    try:
        assert ro.execute("SELECT v FROM t").fetchall() == [("here",)]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro.execute("INSERT INTO t VALUES ('not here')")
    finally:
        ro.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [where.name], "nothing opened or made beside it"
