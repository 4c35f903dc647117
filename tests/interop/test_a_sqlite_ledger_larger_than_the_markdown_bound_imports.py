"""Issue 30: a 1,000,000-entry lifeline-context ledger is a 1.5 GB SQLite file, and
`import --from` refused it whole by the 256 MiB bound meant for markdown read into
memory. A SQLite ledger is streamed row by row and bounded by rows and time
(tests/interop/test_an_sqlite_import_reads_only_a_stored_table_within_bounds.py), so its
file size is no reason to refuse it; a markdown file above the bound still is."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from kit.seed import SEED

from git_lifeline.core import seed
from git_lifeline.errors import InputError


def test_a_sqlite_ledger_above_the_file_size_bound_is_read_whole(tmp_path, monkeypatch):
    db = tmp_path / "ledger.db"
    shutil.copy(SEED / "ledger.db", db)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT count(*) FROM entries").fetchone()[0]
    con.close()
    monkeypatch.setattr(seed, "MAX_SOURCE_BYTES", db.stat().st_size // 2)
    fmt, records = seed.read_source(db)
    assert fmt == "lifeline-context db"
    assert len(records) == rows
    got = list(records)
    assert len(got) == rows and all(r.problem is None for r in got)
    assert [r.recorded_id for r in got] == [r.recorded_id for r in seed.SeedDb(db)]


def test_a_markdown_ledger_above_the_file_size_bound_is_still_refused_unread(tmp_path, monkeypatch):
    md = tmp_path / "LIFELINE.md"
    shutil.copy(SEED / "LIFELINE.md", md)
    monkeypatch.setattr(seed, "MAX_SOURCE_BYTES", md.stat().st_size // 2)
    with pytest.raises(InputError, match="a ledger to import is a regular file of at most"):
        seed.read_source(md)
