"""8 processes x 50 appends to one line: exactly 400 entries, no fork, verify OK, the
projection and the cache agree with the ref. (The same with a pull running at the same
time is in this file too once sync is there.)"""

from __future__ import annotations

from git_lifeline import projection
from helpers import append_concurrently, assert_ledger_whole, git, init_repo, open_ledger

PROCESSES = 8
EACH = 50


def test_eight_processes_times_fifty_appends_give_exactly_four_hundred_entries(tmp_path, record_counts):
    repo = init_repo(tmp_path / "repo")
    results = append_concurrently(repo, PROCESSES, EACH)
    assert all(code == 0 for code, _ in results), results
    led = open_ledger(repo)
    summaries = sorted(e.summary for e in led.entries())
    assert summaries == sorted(f"worker {w} note {i}" for w in range(PROCESSES) for i in range(EACH))
    parents = [len(line.split()) - 1 for line in git(repo, "rev-list", "--parents", "refs/lifeline/main").splitlines()]
    assert len(parents) == PROCESSES * EACH and max(parents) == 1, "one commit per append, no fork"
    reflog = git(repo, "reflog", "show", "--format=%H", "refs/lifeline/main").split()
    assert len(reflog) == PROCESSES * EACH
    assert_ledger_whole(repo)
    text = (repo / "LIFELINE.md").read_text(encoding="utf-8")
    assert text == projection.render("main", led.entries(), led.store.entries_tree_id(led.head()))
    record_counts("concurrent-appends", tried=PROCESSES * EACH, held=len(summaries),
                  lost=PROCESSES * EACH - len(summaries), processes=PROCESSES)
