"""SIGKILL at random points of append, import and merge never leaves a broken ledger.

Seeded trials: a real process (forked from a warm zygote) runs the write and is killed
with SIGKILL after a random delay. After every trial: the ref names a complete commit,
verify passes, an import is all-or-nothing, the projection holds nothing the ref does
not, the cache answers what a fresh rebuild answers, and the next write succeeds.
The counts are quoted in docs/RELIABILITY.md.
"""

from __future__ import annotations

import random
import time

import pytest
from kit.entries import make_entry
from kit.faults import Zygote, assert_ledger_whole
from kit.repos import init_repo, open_ledger, open_workspace, remote_and_clones
from kit.run import git

from git_lifeline.app import exchange, interop
from git_lifeline.app.draft import Draft
from git_lifeline.core import seed

SEED = 8
APPEND_TRIALS = 30
IMPORT_TRIALS = 20
IMPORT_SIZE = 200
PULL_TRIALS = 12
PULLED_PER_TRIAL = 5


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    yield z
    z.close()


def stale_ref_lock(repo, line="main"):
    return repo / ".git" / "refs" / "lifeline" / f"{line}.lock"


STALE_AFTER = 1  # lifeline.staleRefLockSeconds for these repos (default 5), to keep trials short


def crash_repo(path):
    repo = init_repo(path)
    git(repo, "config", "lifeline.staleRefLockSeconds", str(STALE_AFTER))
    return repo


def after_trial(repo, outcomes: list, outcome: str) -> None:
    """The checks every trial ends with; a ref lock left by the killed process is
    removed by the next writer once it is stale (that write is checked in the test)."""
    outcomes.append(outcome)
    assert outcome in ("killed", "completed"), outcome
    if stale_ref_lock(repo).exists():
        outcomes.append("stale-ref-lock")
    assert_ledger_whole(repo)


def test_sigkill_during_appends(tmp_path, zygote, record_counts):
    repo = crash_repo(tmp_path / "repo")
    rng = random.Random(SEED)
    outcomes: list = []
    before = 0
    for trial in range(APPEND_TRIALS):
        pid = zygote.start("append", repo, tag=f"t{trial}")
        time.sleep(rng.uniform(0.0, 0.08))
        after_trial(repo, outcomes, zygote.kill(pid))
        led = open_ledger(repo)
        summaries = [e.summary for e in led.entries() if e.summary.startswith(f"t{trial} ")]
        # the trial's appends are a prefix of its sequence: none lost in the middle
        assert summaries == [f"t{trial} note {i}" for i in range(len(summaries))]
        before += len(summaries)
        assert len(led.entries()) == before
    led = open_ledger(repo)
    led.log(Draft(kind="note", summary="after every crash", body="the ledger is still writable"))
    assert_ledger_whole(repo)
    assert outcomes.count("killed") == APPEND_TRIALS
    record_counts(
        "crash-append",
        tried=APPEND_TRIALS,
        held=APPEND_TRIALS,
        lost=0,
        entries=before,
        stale_ref_locks=outcomes.count("stale-ref-lock"),
    )


@pytest.fixture(scope="module")
def seed_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("seed") / "LIFELINE.md"
    entries = [make_entry(10_000 + i, summary=f"Imported decision {i}") for i in range(IMPORT_SIZE)]
    path.write_text(seed.render_seed_markdown(entries, "main"), encoding="utf-8")
    return path, {e.id for e in entries}


def test_sigkill_during_imports_is_all_or_nothing(tmp_path, zygote, seed_file, record_counts):
    source, ids = seed_file
    rng = random.Random(SEED + 1)
    outcomes: list = []
    # how long one import takes here, to spread the kills over it
    probe = init_repo(tmp_path / "probe")
    t0 = time.perf_counter()
    pid = zygote.start("import", probe, source=str(source))
    while git(probe, "rev-parse", "-q", "--verify", "refs/lifeline/main", check=False) == "":
        time.sleep(0.005)
        if time.perf_counter() - t0 > 60:
            raise AssertionError("the probe import did not finish")
    span = time.perf_counter() - t0
    zygote.kill(pid)
    for trial in range(IMPORT_TRIALS):
        repo = crash_repo(tmp_path / f"repo{trial}")
        open_ledger(repo).append([make_entry(trial, summary=f"Already here {trial}")])
        pid = zygote.start("import", repo, source=str(source))
        time.sleep(rng.uniform(0.0, span * 1.2))
        after_trial(repo, outcomes, zygote.kill(pid))
        present = {e.id for e in open_ledger(repo).entries()} & ids
        assert present in (set(), ids), f"trial {trial}: {len(present)} of {len(ids)} imported entries"
        outcomes.append("all" if present else "none")
        # importing again completes what was interrupted
        res = interop.import_from(open_ledger(repo), source)
        assert res.added + res.existing == len(ids)
        assert ids <= {e.id for e in open_ledger(repo).entries()}
    assert outcomes.count("all") + outcomes.count("none") == IMPORT_TRIALS
    record_counts(
        "crash-import",
        tried=IMPORT_TRIALS,
        held=IMPORT_TRIALS,
        lost=0,
        killed_before_publish=outcomes.count("none"),
        published=outcomes.count("all"),
        killed=outcomes.count("killed"),
        completed=outcomes.count("completed"),
        stale_ref_locks=outcomes.count("stale-ref-lock"),
    )


def test_sigkill_during_pull_merges_is_all_or_nothing(tmp_path, zygote, record_counts):
    remote, a, b = remote_and_clones(tmp_path)
    git(a, "config", "lifeline.staleRefLockSeconds", str(STALE_AFTER))
    rng = random.Random(SEED + 2)
    outcomes: list = []

    def diverge(trial):
        writer = open_ledger(b)
        incoming = [
            writer.log(Draft(kind="note", summary=f"pull trial {trial} remote {i}", body="from b")).entry.id
            for i in range(PULLED_PER_TRIAL)
        ]
        exchange.sync_with(open_workspace(b), "origin")
        open_ledger(a).log(Draft(kind="note", summary=f"pull trial {trial} local", body="diverges a from the remote"))
        return incoming

    diverge("probe")  # how long one merging pull takes here, to spread the kills over it
    t0 = time.perf_counter()
    assert zygote.wait(zygote.start("pull", a, remote="origin")) == "completed"
    span = time.perf_counter() - t0
    for trial in range(PULL_TRIALS):
        incoming = diverge(trial)
        pid = zygote.start("pull", a, remote="origin")
        # anywhere in a pull: fetch, verification, merge, ref move, projection
        time.sleep(rng.uniform(0.0, span))
        after_trial(a, outcomes, zygote.kill(pid))
        present = {e.id for e in open_ledger(a).entries()} & set(incoming)
        assert present in (set(), set(incoming)), f"trial {trial}: {len(present)} of {len(incoming)} pulled"
        outcomes.append("merged" if present else "not-merged")
        exchange.pull(open_workspace(a), "origin")  # the next pull completes what was interrupted
        assert set(incoming) <= {e.id for e in open_ledger(a).entries()}
    assert_ledger_whole(a)
    record_counts(
        "crash-pull-merge",
        tried=PULL_TRIALS,
        held=PULL_TRIALS,
        lost=0,
        killed=outcomes.count("killed"),
        completed=outcomes.count("completed"),
        merged_before_kill=outcomes.count("merged"),
        not_merged=outcomes.count("not-merged"),
        stale_ref_locks=outcomes.count("stale-ref-lock"),
    )
