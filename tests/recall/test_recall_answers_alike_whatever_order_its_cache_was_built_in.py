"""Recall answers a question the same on every clone, whatever order its cache was built
in. Entries that score alike in full-text search (same words, same length) were cut at
the candidate limit in the order SQLite happened to hold them: a cache advanced entry by
entry kept other candidates than one built from scratch, so the same question over the
same ledger gave other hits (seen as a flaky crash test comparing a healed cache with a
fresh one)."""

from __future__ import annotations

import json
import shutil

from kit.entries import make_entry
from kit.repos import init_repo, open_ledger
from kit.run import cli

from git_lifeline.views.recall import CANDIDATES


def hits(repo) -> list:
    res = cli(repo, "recall", "--json", "build note")
    assert res.code == 0, res
    return [h["id"] for h in json.loads(res.out)["hits"]]


def test_recall_gives_the_same_hits_from_a_cache_advanced_entry_by_entry_and_one_built_afresh(tmp_path):
    repo = init_repo(tmp_path / "repo")
    entries = [make_entry(i, summary=f"Build note {i}", body="About the build.") for i in range(2 * CANDIDATES + 50)]
    by_id = sorted(entries, key=lambda e: e.id)
    first, later = by_id[CANDIDATES:], by_id[:CANDIDATES]  # the cache holds the larger ids first
    led = open_ledger(repo)
    led.append(first)
    hits(repo)  # the cache is built here, then advanced by the later entries
    open_ledger(repo).append(later)
    advanced = hits(repo)
    shutil.rmtree(repo / ".git" / "lifeline")
    afresh = hits(repo)
    assert advanced and advanced == afresh
