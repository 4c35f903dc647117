"""A lifeline-context .db is another tool's file: its review queue (the `proposals` table) is
as hostile as its entries. Three holes it opened when import began filing the queue:

* the queue was read after the entries were written: a `proposals` VIEW (or a table with no
  `status` column) was refused "nothing was imported" while the entries were in the line;
* the row number in a message was the file's own column, of any type: a TEXT `pid` or `seq`
  holding a line break printed lines that passed for the tool's own report;
* a proposal dated in the year 9999 was filed as it was (the trail's commit dated 2106), where
  every entry and write is held to the clock's tolerance.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from kit.repos import init_repo, snapshot
from kit.run import cli

from git_lifeline.core.entry import Entry

FORGED = "1\nok: all pending proposals filed\n  proposal #2"


def seed_db(path: Path, proposals_table: str, *proposal_rows: tuple, seq_type: str = "INTEGER") -> Path:
    """A lifeline-context-shaped .db: one valid entry, the given `proposals` schema and rows."""
    e = Entry.new(
        kind="bootstrap",
        summary="Seeded project",
        body="Why: interop.",
        author="Seed User <seed@example.com>",
        ts=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    payload = {
        "id": e.id,
        "ts": "2026-01-01T00:00:00+00:00",
        "kind": e.kind,
        "author": e.author,
        "agent": e.agent,
        "provider": e.provider,
        "model": e.model,
        "summary": e.summary,
        "body": e.body,
        "parents": [],
    }
    con = sqlite3.connect(path)
    try:
        con.execute(f"CREATE TABLE entries (seq {seq_type}, id TEXT, payload TEXT)")
        con.execute(
            "INSERT INTO entries VALUES (?, ?, ?)", ("1" if seq_type == "TEXT" else 1, e.id, json.dumps(payload))
        )
        con.execute(proposals_table)
        for row in proposal_rows:
            con.execute(f"INSERT INTO proposals VALUES ({', '.join('?' * len(row))})", row)
        con.commit()
    finally:
        con.close()
    return path


QUEUE = (
    "CREATE TABLE proposals (pid {pid}, ts TEXT, status TEXT, kind TEXT, author TEXT, agent TEXT, "
    "provider TEXT, model TEXT, summary TEXT, body TEXT, parents TEXT)"
)


def proposal(pid: object, ts: str = "2026-01-02T00:00:00+00:00", kind: str = "note") -> tuple:
    return (pid, ts, "pending", kind, "A <a@example.com>", "codex", "openai", "gpt", "A proposal", "Why.", "[]")


def test_an_unreadable_review_queue_leaves_the_entries_unimported_too(tmp_path):
    repo = init_repo(tmp_path / "repo")
    for name, table in (
        ("view.db", "CREATE VIEW proposals AS SELECT 1 AS pid, 'pending' AS status"),
        ("nostatus.db", "CREATE TABLE proposals (pid INTEGER PRIMARY KEY, kind TEXT)"),
    ):
        source = seed_db(tmp_path / name, table)
        before = snapshot(repo)
        res = cli(repo, "import", "--from", str(source))
        assert res.code == 2 and "nothing was imported" in res.err, res
        assert snapshot(repo) == before, f"{name}: the entries were written though the import was refused"


def test_a_text_row_number_cannot_forge_a_line_of_the_import_report(tmp_path):
    repo = init_repo(tmp_path / "repo")
    source = seed_db(tmp_path / "ledger.db", QUEUE.format(pid="TEXT"), proposal(FORGED, kind="wish"))
    res = cli(repo, "import", "--from", str(source))
    assert res.code == 1 and "unknown kind 'wish'" in res.err, res
    lines = (res.out + res.err).splitlines()
    assert "ok: all pending proposals filed" not in lines, res
    assert not any(line.startswith("  proposal #2") for line in lines), res
    # the entries' own row number is the file's column too
    text_seq = seed_db(
        tmp_path / "seq.db",
        QUEUE.format(pid="INTEGER"),
        seq_type="TEXT",
    )
    con = sqlite3.connect(text_seq)
    # a recorded id its content does not hash to: the entry is skipped and named by its seq
    con.execute(
        "UPDATE entries SET seq = ?, id = ?, payload = json_set(payload, '$.id', ?)", (FORGED, "f" * 64, "f" * 64)
    )
    con.commit()
    con.close()
    res = cli(repo, "import", "--from", str(text_seq))
    assert res.code == 1 and "skipped seq '1\\nok: all" in res.err, res
    assert "ok: all pending proposals filed" not in (res.out + res.err).splitlines(), res


def test_a_proposal_dated_far_in_the_future_is_left_out_not_filed(tmp_path):
    repo = init_repo(tmp_path / "repo")
    source = seed_db(
        tmp_path / "ledger.db",
        QUEUE.format(pid="INTEGER PRIMARY KEY"),
        proposal(1, ts="9999-12-31T23:59:59+00:00"),
        proposal(2),
    )
    res = cli(repo, "import", "--from", str(source), "--json")
    assert res.code == 1, res
    found = json.loads(res.out)["proposals"]
    assert len(found["filed"]) == 1, found
    assert found["left_out"][0]["where"] == "proposal #1" and "in the future" in found["left_out"][0]["why"], found
