"""Recall gives its hits their status and the entry that replaced them from the cache's
standing table (views/cache_standing.py), read by id, not from the whole fold. After every
append (decisions with validity windows, revisions in chains, reverts, reverts of reverts,
closings of open items, notes) the table must say exactly what the fold's truth says of
every entry (`core/status.status_of` and the walk to the end of a chain of revisions), hold
exactly the rows a cold rebuild writes, and recall's outputs (text, --json, the MCP tool's
text) must be those a cold rebuild gives."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from kit.repos import open_ledger
from kit.run import cli
from kit.truth_reference import successor_reference

from git_lifeline.app.draft import Draft
from git_lifeline.core import truth
from git_lifeline.core.status import status_of
from git_lifeline.mcp.text import recall_answer

T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
NOW = "2025-09-01T00:00:00.000000"  # inside some windows, past or before others
QUERY = "storage engine choice"


def table(repo: Path) -> list[tuple]:
    db = sqlite3.connect(str(repo / ".git" / "lifeline" / "main.sqlite3"))
    try:
        return db.execute("SELECT * FROM standing ORDER BY id").fetchall()
    finally:
        db.close()


def cold_table(repo: Path) -> list[tuple]:
    """The table a cold build writes (the incremental cache set aside meanwhile)."""
    here = repo / ".git" / "lifeline"
    aside = repo / ".git" / "lifeline-aside"
    shutil.move(str(here), str(aside))
    try:
        led = open_ledger(repo)
        led.cache().ensure(led.head())
        led.cache().close()
        return table(repo)
    finally:
        shutil.rmtree(here)
        shutil.move(str(aside), str(here))


def step(led, rng: random.Random, made: dict[str, list[str]], n: int) -> None:
    when = T0 + timedelta(hours=10 * n)
    kind = rng.choice(["decision", "decision", "decision", "open", "note", "revise", "revise", "revert", "close"])
    body, parents, summary = f"why {n}", [], f"storage engine choice {n}"
    if kind == "decision" and rng.random() < 0.4:
        start, end = sorted(rng.sample(["2025-01-01", "2025-06-01", "2025-12-01", "2099-03-01", "2099-06-01"], 2))
        body = f"valid-from: {start}\nvalid-until: {end}\n\n{body}"
    if kind in ("revise", "revert") and made["decision"] + made["correction"]:
        parents = [rng.choice(made["decision"] + made["correction"])]
        if kind == "revert":
            body = f"action: revert\n\n{body}"
        kind = "correction"
    elif kind == "close" and made["open"]:
        parents, kind = [rng.choice(made["open"])], "correction"
    elif kind in ("revise", "revert", "close"):
        kind = "note"
    for p in parents:  # a child is written after what it names
        when = max(when, led.show(p).ts + timedelta(seconds=1))
    e = led.log(Draft(kind=kind, summary=summary, body=body, parents=parents, ts=when.isoformat())).entry
    made.setdefault(kind, []).append(e.id)


def test_each_hits_status_and_successor_come_from_the_table_as_the_fold_says(repo):
    rng = random.Random(11)
    made: dict[str, list[str]] = {"decision": [], "correction": [], "open": []}
    led = open_ledger(repo)
    for n in range(70):
        step(led, rng, made, n)
        led.state()  # the cache brought to the head, an entry at a time
        fresh = open_ledger(repo)  # another process: reads the table, not the fold it holds
        standings = fresh.cache().standings(fresh.cache().ensure(fresh.head()), now=NOW)
        reference = truth.reduce(fresh.store.load().entries.values(), now=NOW)
        ids = {e for ids in made.values() for e in ids} | set(reference.superseded)
        for i in sorted(ids):
            assert standings.status(i) == status_of(reference, i), (n, i)
            assert standings.superseded(i) == (i in reference.superseded), (n, i)
            assert standings.successor(i) == successor_reference(reference, i), (n, i)
        fresh.cache().close()
        if n % 10 == 9:
            assert table(repo) == cold_table(repo), n
    assert len(made["correction"]) > 10 and len(made["open"]) > 3


def test_recalls_outputs_after_a_correction_and_a_decision_are_a_cold_rebuilds(repo):
    rng = random.Random(5)
    made: dict[str, list[str]] = {"decision": [], "correction": [], "open": []}
    led = open_ledger(repo)
    for n in range(30):
        step(led, rng, made, n)
    reverted = led.log(Draft(kind="decision", summary="storage engine choice to undo", body="soon")).entry.id
    assert cli(repo, "recall", QUERY).code == 0  # the cache built, then appended to
    revised = made["decision"][0]
    appended = [
        Draft(kind="correction", summary="storage engine choice revised", body="better", parents=[revised]),
        Draft(
            kind="correction", summary="storage engine choice undone", body="action: revert\n\nno", parents=[reverted]
        ),
        Draft(kind="decision", summary="storage engine choice, the newest", body="newest"),
    ]
    for draft in appended:
        led.log(draft)
        outputs = []
        for _ in ("incremental", "cold"):
            text = cli(repo, "recall", QUERY, "-k", "40")
            json_text = cli(repo, "recall", QUERY, "-k", "40", "--json")
            mcp = recall_answer(open_ledger(repo), QUERY, 40)
            assert text.code == json_text.code == 0 and "warning" not in text.err, text
            outputs.append((text.out, json_text.out, mcp))
            shutil.rmtree(repo / ".git" / "lifeline")
        assert outputs[0] == outputs[1], draft.summary
    statuses = {hit["status"] for hit in json.loads(outputs[0][1])["hits"]}
    assert {"in force", "superseded", "withdrawn", "closed", "expired", "pending", "open"} <= statuses, statuses
