"""Cost of the truth fold: cold folds of revision chains and of independent pairs.

    python bench/bench_fold.py [--sizes 100,1000,10000] [--pairs 10000] [--runs 3]
                               [--baseline OTHER/git_lifeline/core/truth.py] [--process]

In-process figures: `truth.fold` of the entries plus the `State` a command builds
from it (decisions in force, conflicts), median of --runs. Entries are real
(content-addressed ids); nothing touches git. --baseline times another truth.py
(e.g. a checkout of an older version) on the same entries, up to 800 revisions.
--process also times a whole cold `git lifeline context` (cache deleted first) on
a real repository holding the chain.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lifeline.core import truth  # noqa: E402
from git_lifeline.core.entry import (
    Entry,  # noqa: E402
    compute_id,  # noqa: E402
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
AUTHOR = "Bench <bench@example.com>"


def record(kind: str, summary: str, body: str, parents: list, n: int) -> Entry:
    parents = sorted(parents)
    entry_id = compute_id(kind, AUTHOR, "human", "none", "human", summary, body, parents)
    return Entry(
        entry_id, T0 + timedelta(seconds=n), kind, AUTHOR, "human", "none", "human", summary, body, parents, None
    )


def chain(n: int) -> list:
    """A decision revised n times, each revision revising the one before."""
    out = [record("decision", "Use MongoDB", "Flexible schema.", [], 0)]
    for i in range(1, n + 1):
        out.append(record("correction", f"Use PostgreSQL {i}", f"Revision {i}.", [out[-1].id], i))
    return out


def pairs(n: int) -> list:
    out = []
    for i in range(n):
        d = record("decision", f"Decision {i}", f"Because {i}.", [], 2 * i)
        out += [d, record("correction", f"Decision {i}, revised", f"Revised {i}.", [d.id], 2 * i + 1)]
    return out


def fold_seconds(module, entries: list, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f = module.fold(entries)
        st = module.State(f, {e.id: e for e in entries}.get)
        _ = (st.decision_ids, st.conflicts)  # what a command reads
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_baseline(path: str):
    spec = importlib.util.spec_from_file_location("git_lifeline.core._baseline_truth", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def process_seconds(entries: list, runs: int) -> float:
    """A whole cold `git lifeline context` on a repository holding `entries`."""
    from git_lifeline.app.ledger import Ledger
    from git_lifeline.core.entry import new_entry
    from git_lifeline.git.repo import open_repo

    tmp = Path(tempfile.mkdtemp(prefix="bench-fold-"))
    try:
        subprocess.run(["git", "init", "-q", str(tmp)], check=True)
        ledger = Ledger(open_repo(str(tmp)))
        ledger.append(
            [
                new_entry(kind=e.kind, author=e.author, summary=e.summary, body=e.body, parents=e.parents, ts=e.ts)
                for e in entries
            ]
        )
        exe = shutil.which("git-lifeline") or str(Path(sys.executable).parent / "git-lifeline")
        times = []
        for _ in range(runs):
            shutil.rmtree(tmp / ".git" / "lifeline", ignore_errors=True)
            start = time.perf_counter()
            subprocess.run([exe, "context"], cwd=tmp, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", help="another truth.py to time on the same entries (up to 800 revisions)")
    ap.add_argument("--process", action="store_true", help="also time a cold `git lifeline context` process")
    args = ap.parse_args()
    baseline = load_baseline(args.baseline) if args.baseline else None
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        entries = chain(n)
        row = {"case": f"chain of {n} revisions", "fold_s": round(fold_seconds(truth, entries, args.runs), 4)}
        if baseline is not None and n <= 800:
            row["baseline_fold_s"] = round(fold_seconds(baseline, entries, 1), 4)
        if args.process:
            row["context_process_s"] = round(process_seconds(entries, args.runs), 3)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.pairs:
        entries = pairs(args.pairs)
        row = {
            "case": f"{args.pairs} decision+correction pairs",
            "fold_s": round(fold_seconds(truth, entries, args.runs), 4),
        }
        if baseline is not None and args.pairs <= 2000:
            row["baseline_fold_s"] = round(fold_seconds(baseline, entries, 1), 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if os.environ.get("BENCH_FOLD_OUT"):
        Path(os.environ["BENCH_FOLD_OUT"]).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
