"""Real processes racing each other on one repository: writers appending at the same
moment, pulls racing appends made on another clone. Each is a `python -c` script started
with kit.run.start_script."""

from __future__ import annotations

from pathlib import Path

from kit.run import LONG_TIMEOUT, start_script

# ---- concurrent writers -----------------------------------------------------------
APPEND_WORKER = """
import os, sys, time
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
repo, worker, count, gate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
led = Workspace.open(repo).ledger()
while not os.path.exists(gate):
    time.sleep(0.002)
for i in range(count):
    led.log(Draft(kind="note", summary=f"worker {worker} note {i}", body=f"written by process {worker}"))
"""


def append_concurrently(repo: Path, processes: int, each: int) -> list[tuple[int, str]]:
    """Start `processes` real processes that append `each` entries at the same moment."""
    gate = repo.parent / f"gate-{processes}-{each}"
    procs = [start_script(APPEND_WORKER, repo, w, each, gate) for w in range(processes)]
    gate.touch()
    results: list[tuple[int, str]] = []
    for p in procs:
        out, err = p.communicate(timeout=LONG_TIMEOUT)
        results.append((p.returncode, err.decode("utf-8", "replace")))
    return results


# ---- pulls racing appends -------------------------------------------------------------------
PULL_WORKER = """
import os, sys, time
from git_lifeline.app import exchange
from git_lifeline.app.workspace import Workspace
repo, stop = sys.argv[1], sys.argv[2]
pulls = merges = 0
while not os.path.exists(stop):
    lines = exchange.pull(Workspace.open(repo), "origin").lines
    pulls += 1
    merges += sum(1 for pl in lines if pl.action == "merged")
    time.sleep(0.1)  # a busy user's pace, not a fetch storm (each pull runs git fetch)
print(pulls, merges)
"""

REMOTE_WRITER = """
import sys
from git_lifeline.app import exchange
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
clone, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    ws = Workspace.open(clone)
    ws.ledger().log(Draft(kind="note", summary=f"remote note {i}", body="written on another clone"))
    exchange.sync_with(ws, "origin")
"""
