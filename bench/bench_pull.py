#!/usr/bin/env python3
"""Pull N new entries into a BASE-entry ledger, next to a plain `git fetch` of the same objects.

    python bench/bench_pull.py [--base 10000] [--new 1000] [--runs 5] [--keep DIR]

Needs `git lifeline` on PATH (the installed tool). Builds, with `git fast-import`,
a bare "origin" whose refs/lifeline/main holds BASE entries, one commit per entry
(the real layout), and a clone that has pulled it (`git lifeline clone`). Then
origin gets NEW more entries, one commit each, and for each run a fresh copy of
the clone is timed (wall clock, median of RUNS) doing:

  fetch      git fetch origin +refs/lifeline/*:refs/remotes/origin/lifeline/*
  pull (ff)  git lifeline pull origin    (fetch + verify the new commits + fast-forward
                                          + LIFELINE.md projection update)
  pull (merge) the same, after one local append, so the line has diverged and
             the pull writes a union merge commit

Every timed command is a fresh process, as a user runs it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from git_lifeline.app.ledger import commit_message  # noqa: E402
from git_lifeline.core.entry import new_entry  # noqa: E402

KINDS = ["decision", "note", "feature", "fix", "open", "test", "api"]
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)


def run(args, cwd, env=None, check=True):
    proc = subprocess.run(args, cwd=str(cwd), capture_output=True, env=env)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {cwd}:\n{proc.stderr.decode()}")
    return proc


def timed(args, cwd) -> float:
    start = time.perf_counter()
    run(args, cwd)
    return time.perf_counter() - start


def entry(i: int):
    return new_entry(
        kind=KINDS[i % len(KINDS)],
        summary=f"Entry {i}: a decision about component {i % 97}",
        body=f"Because measurement {i} showed it. " * 4,
        author="Bench <bench@example.com>",
        ts=T0 + timedelta(seconds=60 * i),
    )


def fast_import(bare: Path, start: int, count: int) -> None:
    """Append entries start..start+count-1 to refs/lifeline/main, one commit each."""
    chunks = []
    for n, i in enumerate(range(start, start + count)):
        e = entry(i)
        data = e.to_json()
        msg = commit_message([e]).encode("utf-8")
        when = int(e.ts.timestamp())
        chunks.append(b"blob\nmark :1\ndata %d\n" % len(data) + data + b"\n")
        head = b"commit refs/lifeline/main\ncommitter Bench <bench@example.com> %d +0000\n" % when
        head += b"data %d\n" % len(msg) + msg + b"\n"
        if n == 0 and start > 0:
            head += b"from refs/lifeline/main^0\n"
        path = f"entries/{e.id[0:2]}/{e.id[2:4]}/{e.id[4:]}".encode()
        chunks.append(head + b"M 100644 :1 " + path + b"\n\n")
    proc = subprocess.run(["git", "fast-import", "--quiet"], cwd=str(bare), input=b"".join(chunks), capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"git fast-import failed: {proc.stderr.decode()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=int, default=10_000)
    ap.add_argument("--new", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", default=None, help="work in this directory and keep it")
    opts = ap.parse_args()
    if shutil.which("git-lifeline") is None:
        raise SystemExit("git-lifeline is not on PATH")
    work = Path(opts.keep) if opts.keep else Path(tempfile.mkdtemp(prefix="bench-pull-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        origin = work / "origin.git"
        run(["git", "init", "--quiet", "--bare", str(origin)], work)
        t = time.perf_counter()
        fast_import(origin, 0, opts.base)
        run(["git", "gc", "--quiet"], origin)
        print(f"origin: {opts.base} entries written in {time.perf_counter() - t:.1f}s")
        t = time.perf_counter()
        run(["git", "lifeline", "clone", origin.as_uri(), "base"], work)
        print(
            f"clone of {opts.base} entries (git clone + full verification + projection): {time.perf_counter() - t:.2f}s"
        )
        fast_import(origin, opts.base, opts.new)
        run(["git", "repack", "-d", "--quiet"], origin)
        results = {"fetch": [], "pull (ff)": [], "pull (merge)": []}
        for i in range(opts.runs):
            copies = {}
            for name in results:
                dest = work / f"run{i}-{name.split()[-1].strip('()')}"
                shutil.copytree(work / "base", dest, symlinks=True)
                copies[name] = dest
            run(
                ["git", "lifeline", "log", "--kind", "note", "--summary", f"local {i}", "--body", "diverge"],
                copies["pull (merge)"],
            )
            results["fetch"].append(
                timed(
                    ["git", "fetch", "--quiet", "origin", "+refs/lifeline/*:refs/remotes/origin/lifeline/*"],
                    copies["fetch"],
                )
            )
            results["pull (ff)"].append(timed(["git", "lifeline", "pull", "origin"], copies["pull (ff)"]))
            results["pull (merge)"].append(timed(["git", "lifeline", "pull", "origin"], copies["pull (merge)"]))
            for dest in copies.values():
                shutil.rmtree(dest)
        print(
            f"\npull {opts.new} new entries ({opts.new} commits) into a {opts.base}-entry ledger, "
            f"median of {opts.runs} (min-max):"
        )
        for name, values in results.items():
            print(
                f"  {name:<13} {statistics.median(values) * 1000:8.0f} ms   "
                f"({min(values) * 1000:.0f}-{max(values) * 1000:.0f})"
            )
        start = timed(["git", "lifeline", "-h"], work)
        print(f"  (for scale: a cold `git lifeline -h` took {start * 1000:.0f} ms)")
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
