"""Recall quality on the committed labelled set (tests/data/recall_set.json)."""

from __future__ import annotations

import sys

from kit.run import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))

import eval_recall  # noqa: E402

from git_lifeline.app.draft import Draft


def test_recall_finds_the_answer_in_the_top_5_and_abstains_on_every_unrelated_query(ledger):
    data = eval_recall.load_set()
    ids = eval_recall.build(ledger, data)
    report = eval_recall.evaluate(ledger, data, ids)
    assert report["hit_at_5"] >= 0.9, report["misses"]
    # 9/10: the floors are now chosen on the blind set's tune half (docs/RECALL.md), not on
    # this set its author wrote; the one false alarm ("mobile app push notifications") shares
    # the ledger's rare word "mobile". The blind set holds abstention in test_recall_blind.py.
    assert report["abstention"] >= 0.9, report["false_alarms"]


def test_recency_in_the_ranking_does_not_lower_hit_at_5(ledger):
    data = eval_recall.load_set()
    ids = eval_recall.build(ledger, data)
    with_recency = eval_recall.evaluate(ledger, data, ids, recency=True)
    bm25_only = eval_recall.evaluate(ledger, data, ids, recency=False)
    assert with_recency["hit_at_5"] >= bm25_only["hit_at_5"]
    assert with_recency["abstention"] == bm25_only["abstention"] >= 0.9


def test_a_newer_entry_outranks_an_older_equally_relevant_one(ledger):
    old = ledger.log(
        Draft(kind="note", summary="Cache warmup strategy", body="Warm on deploy.", ts="2025-01-01T00:00:00Z")
    ).entry
    new = ledger.log(
        Draft(kind="note", summary="Cache warmup strategy revisited", body="Warm on deploy.", ts="2025-12-01T00:00:00Z")
    ).entry
    assert [h.id for h in ledger.recall("cache warmup")][:2] == [new.id, old.id]
