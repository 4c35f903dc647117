"""idf is unstable with two entries (tests/recall/test_recall_answers_with_its_strength_or_says_why_it_abstains.py)
and diluted at 100,000, where nearly every word of a question is used somewhere and words the
ledger never uses stop telling off-topic questions apart. In a cache of 100,000 entries
(the cache's own schema, real SQLite FTS5) recall must still answer a question its one entry
answers, above the thousands sharing a common word with it, and refuse one about a topic no
entry covers although its common words match everywhere."""

from __future__ import annotations

import random
import sqlite3

from git_lifeline.views.cache_rows import SCHEMA
from git_lifeline.views.recall_answer import answer

WORDS = (
    "service api queue worker deploy cluster build test cache index schema migration release team "
    "mobile web app client server request response timeout retry log metric alert dashboard token "
    "session user account order report export import job batch stream event config secret "
    "policy review incident latency storage backup region network proxy gateway search ranking"
).split()


def ledger_of(n: int, path) -> sqlite3.Connection:
    rng = random.Random(7)
    db = sqlite3.connect(str(path))
    db.executescript(SCHEMA)
    rows = []
    for i in range(n):
        words = rng.sample(WORDS, 8)
        rows.append(
            (
                f"{i:064x}",
                "",
                f"2026-01-01T00:00:{i % 60:02d}Z",
                "decision",
                1,
                f"{words[0]} {words[1]}: {words[2]} {words[3]}",
                " ".join(words[4:]) + ".",
                None,
                "{}",
            )
        )
    rows.append(
        (
            f"{n:064x}",
            "",
            "2026-01-02T00:00:00Z",
            "decision",
            1,
            "Geocoding: Nominatim, self-hosted, for address lookup",
            "No per-request fees, and addresses never leave our network.",
            None,
            "{}",
        )
    )
    db.executemany(
        "INSERT INTO entries(id, blob, ts, kind, ok, summary, body, dedup, json) VALUES (?,?,?,?,?,?,?,?,?)", rows
    )
    db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
    db.commit()
    return db


def test_a_ledger_of_100000_entries_answers_its_one_entry_and_refuses_what_none_covers(tmp_path):
    db = ledger_of(100_000, tmp_path / "cache.db")
    got = answer(db, "which geocoding service turns addresses into coordinates", k=5)
    assert not got.abstained, got.reason
    assert got.hits[0].id == f"{100_000:064x}" and got.hits[0].strength == "strong", got.hits[:2]
    refused = answer(db, "parental leave policy for the mobile team", k=5)
    assert refused.abstained, refused.hits[:2]  # "mobile" and "team" match tens of thousands
    assert len(refused.nearest) <= 3 and "parental" in refused.reason
