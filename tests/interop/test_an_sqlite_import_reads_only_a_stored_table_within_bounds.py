"""Issue 28, item 10: `import --from` a 4 KB SQLite file never returned and filled the
disk: its `entries` was a VIEW over an endless recursive query, and the file's size bounds
nothing a query yields. Now only a table that stores its rows is read, with a row bound and
a time bound; anything else is refused (exit 2) and nothing is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from kit.repos import init_repo, snapshot
from kit.run import cli

from git_lifeline.core import seed
from git_lifeline.errors import InputError

ENDLESS_VIEW = (
    "CREATE VIEW entries AS WITH RECURSIVE r(seq, id, payload) AS "
    '(SELECT 1, \'x\', \'{"kind":"note","summary":"s","body":"b"}\' '
    "UNION ALL SELECT seq + 1, id, payload FROM r) SELECT seq, id, payload FROM r"
)


def sqlite_file(path: Path, *statements: str) -> Path:
    con = sqlite3.connect(path)
    try:
        for statement in statements:
            con.execute(statement)
        con.commit()
    finally:
        con.close()
    return path


def test_an_entries_view_over_an_endless_query_is_refused_and_writes_nothing(tmp_path):
    repo = init_repo(tmp_path / "repo")
    source = sqlite_file(tmp_path / "ledger.db", ENDLESS_VIEW)
    assert source.stat().st_size <= 8192
    before = snapshot(repo)
    res = cli(repo, "import", "--from", str(source), timeout=60)
    assert res.code == 2 and "its entries is a view; only a table is read" in res.err, res
    assert snapshot(repo) == before


def test_more_rows_than_the_bound_are_refused(tmp_path, monkeypatch):
    source = sqlite_file(
        tmp_path / "ledger.db",
        "CREATE TABLE entries (seq INTEGER PRIMARY KEY, id TEXT, payload TEXT)",
        "INSERT INTO entries (id, payload) SELECT 'x', '{}' FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)",
    )
    monkeypatch.setattr(seed, "MAX_SEED_ROWS", 2)
    with pytest.raises(InputError, match="more than 2 entries"):
        list(seed.SeedDb(source))


def test_a_read_past_the_time_bound_is_refused(tmp_path, monkeypatch):
    source = sqlite_file(
        tmp_path / "ledger.db",
        "CREATE TABLE entries (seq INTEGER PRIMARY KEY, id TEXT, payload TEXT)",
        "INSERT INTO entries (id, payload) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < 20000) SELECT 'x', '{}' FROM n",
    )
    monkeypatch.setattr(seed, "MAX_SEED_SECONDS", -1.0)
    with pytest.raises(InputError, match="took longer than"):
        list(seed.SeedDb(source))
