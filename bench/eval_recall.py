"""Recall quality on the labelled set in tests/data/recall_set.json.

Prints hit@5 (answerable queries with an expected entry in the top 5) and the
abstention rate (unanswerable queries that return nothing). Usable as a module
(`evaluate(ledger)`) by the tests and by hand: python bench/eval_recall.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

# The checkout this script is in, before any installed git_lifeline: run from a worktree, it
# measures that worktree's recall (the tests do the same), not the installed copy's.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "recall_set.json"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def load_set() -> dict:
    return json.loads(SET.read_text(encoding="utf-8"))


def build(ledger, data: dict) -> dict:
    """Append the set's entries; returns summary -> id."""
    from git_lifeline.app.draft import Draft

    ids = {}
    for e in data["entries"]:
        out = ledger.log(
            Draft(kind=e["kind"], summary=e["summary"], body=e["body"], ts=(T0 + timedelta(days=e["days"])).isoformat())
        )
        ids[e["summary"]] = out.entry.id
    return ids


def evaluate(ledger, data: dict, ids: dict, k: int = 5, recency: bool = True) -> dict:
    from git_lifeline.views import recall_answer

    db = ledger.cache().ensure(ledger.head())

    def ask(q):
        return recall_answer.answer(db, q, k, recency=recency).hits

    answerable = [q for q in data["queries"] if q["expect"]]
    unanswerable = [q for q in data["queries"] if not q["expect"]]
    hits, misses, false_alarms = 0, [], []
    for q in answerable:
        got = [h.id for h in ask(q["q"])]
        if any(ids[s] in got for s in q["expect"]):
            hits += 1
        else:
            misses.append(q["q"])
    abstained = 0
    for q in unanswerable:
        if not ask(q["q"]):
            abstained += 1
        else:
            false_alarms.append(q["q"])
    return {
        "hit_at_5": hits / len(answerable),
        "abstention": abstained / len(unanswerable),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "misses": misses,
        "false_alarms": false_alarms,
    }


def main() -> None:
    from git_lifeline.app.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        for k, v in (("user.name", "Eval"), ("user.email", "eval@example.com"), ("lifeline.projection", "false")):
            subprocess.run(["git", "-C", tmp, "config", k, v], check=True)
        ledger = Workspace.open(tmp).ledger()
        data = load_set()
        ids = build(ledger, data)
        report = {
            "with_recency": evaluate(ledger, data, ids, recency=True),
            "bm25_only": evaluate(ledger, data, ids, recency=False),
        }
        json.dump(report, sys.stdout, indent=2)
        print()


if __name__ == "__main__":
    main()
