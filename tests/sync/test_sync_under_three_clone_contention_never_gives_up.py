"""`sync` under contention (issue 14.11): three clones of one bare remote (with the
pre-receive hook, whose verification widens the window between a clone's pull and its
push) each append and sync in a loop, all at once. Before the retries were spaced, 7 syncs
in 45 gave up ("REJECTED ... failed to update ref") after three back-to-back tries; now a
lost push is retried after a jittered, growing pause, and every sync succeeds."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from kit.repos import bare, init_repo, open_ledger
from kit.run import cli, git, subprocess_env

from git_lifeline.git.sync import retry_pause

CLONES = ("a", "b", "c")
ROUNDS = 8


@pytest.fixture
def three_clones(tmp_path, git_dispatch):
    remote = bare(tmp_path, "remote.git", hook=True)
    seed = init_repo(tmp_path / "seed")
    (seed / "README").write_text("hello\n")
    git(seed, "add", "README")
    git(seed, "commit", "-q", "-m", "initial")
    git(seed, "push", "-q", str(remote), "HEAD:main")
    clones = []
    for name in CLONES:
        git(tmp_path, "clone", "-q", str(remote), name)
        clones.append(tmp_path / name)
    return remote, clones


def _loop(clone: Path) -> subprocess.Popen:
    """A teammate's shell: append, sync, ROUNDS times; each failed sync's output is kept."""
    py = sys.executable
    script = (
        f"for i in $(seq {ROUNDS}); do "
        f"'{py}' -m git_lifeline log --kind note --summary \"{clone.name} $i\" --body b >/dev/null || exit 7; "
        f"'{py}' -m git_lifeline sync >out.$i 2>&1 || {{ echo $i >>failed; cat out.$i >>failures; }}; "
        "done"
    )
    return subprocess.Popen(["sh", "-c", script], cwd=str(clone), env=subprocess_env())


def test_three_clones_syncing_at_once_never_give_up_and_lose_nothing(three_clones, record_counts):
    remote, clones = three_clones
    procs = [_loop(c) for c in clones]
    for p in procs:
        assert p.wait(timeout=1200) == 0
    failures = {c.name: (c / "failures").read_text() for c in clones if (c / "failures").exists()}
    tried = ROUNDS * len(clones)
    failed = sum(len((c / "failed").read_text().split()) for c in clones if (c / "failed").exists())
    record_counts("sync under three-clone contention (syncs)", tried=tried, held=tried - failed, lost=0)
    assert not failures, failures
    for c in clones:
        assert cli(c, "sync").code == 0
    expected = {f"{c.name} {i}" for c in clones for i in range(1, ROUNDS + 1)}
    assert {e.summary for e in open_ledger(remote).entries()} == expected
    for c in clones:
        assert {e.summary for e in open_ledger(c).entries()} == expected
    assert cli(clones[0], "verify").code == 0


def test_retry_pauses_grow_are_jittered_and_capped():
    rng = random.Random(7)
    for attempt in range(2, 12):
        base = min(0.25 * 2 ** (attempt - 2), 4.0)
        draws = [retry_pause(attempt, rng) for _ in range(200)]
        assert all(0.5 * base <= d <= 1.5 * base for d in draws)
        assert len({round(d, 6) for d in draws}) > 150  # spread, not in step
    assert max(retry_pause(50, rng) for _ in range(100)) <= 6.0
