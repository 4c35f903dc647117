"""8 processes x 50 appends to one line: exactly 400 entries, no fork, verify OK, the
projection and the cache agree with the ref; and the same while a pull runs at the same
time, merging entries another clone keeps pushing."""

from __future__ import annotations

from kit.faults import assert_ledger_whole
from kit.races import PULL_WORKER, REMOTE_WRITER, append_concurrently
from kit.repos import init_repo, open_ledger, open_workspace, remote_and_clones
from kit.run import finish_script, git, start_script

from git_lifeline.app import exchange
from git_lifeline.views import projection

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
    assert text == projection.render("main", led.entries(), led.store.tree_id(led.head()))
    record_counts(
        "concurrent-appends",
        tried=PROCESSES * EACH,
        held=len(summaries),
        lost=PROCESSES * EACH - len(summaries),
        processes=PROCESSES,
    )


REMOTE_ENTRIES = 12


def test_the_same_with_a_pull_merging_at_the_same_time(tmp_path, record_counts):
    remote, a, b = remote_and_clones(tmp_path)
    stop = tmp_path / "stop"
    writer = start_script(REMOTE_WRITER, b, REMOTE_ENTRIES)  # another clone keeps pushing
    puller = start_script(PULL_WORKER, a, stop)  # a pull loop on the appenders' clone
    results = append_concurrently(a, PROCESSES, EACH)
    finish_script(writer)
    stop.touch()
    pulls, merges = map(int, finish_script(puller).split())
    assert all(code == 0 for code, _ in results), results
    exchange.pull(open_workspace(a), "origin")  # what the remote got after the loop's last pull
    summaries = {e.summary for e in open_ledger(a).entries()}
    appended = {f"worker {w} note {i}" for w in range(PROCESSES) for i in range(EACH)}
    remote_side = {f"remote note {i}" for i in range(REMOTE_ENTRIES)}
    assert appended <= summaries and remote_side <= summaries, "an entry was lost"
    assert len(summaries) == PROCESSES * EACH + REMOTE_ENTRIES + 1
    assert_ledger_whole(a)  # verify: append-only at every merge, and no reflog value left behind
    assert merges >= 1, "the pull never had anything to merge: the race was not exercised"
    record_counts(
        "concurrent-appends-with-pull",
        tried=PROCESSES * EACH + REMOTE_ENTRIES,
        held=len(appended & summaries) + len(remote_side & summaries),
        lost=len(appended - summaries) + len(remote_side - summaries),
        pulls=pulls,
        merges=merges,
    )
