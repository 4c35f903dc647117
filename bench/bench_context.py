"""What the context shows at each budget, on realistic ledgers.

    python bench/bench_context.py [--budgets 4000,8000,12000,16000] [--big N]

Run by hand (never in CI). Ledgers: the 152-entry ledger of the tests
(tests/kit/realistic_ledger.py: 57 decisions in force, 10 of them corrections,
15 open items, 6 threads, incidents, requirements, debt), the same project at three
times the size, its first 60 entries (a young ledger), and --big N entries of
bench_mcp's synthetic mix (a ledger far larger than any budget; default 10,000).
For each ledger and budget, in-process (no interpreter start): decisions named / in
force, decisions with a why, corrections (the current truth of a change) with a why,
open items named, checkpoints named / in full, incidents / requirements / debt shown,
recent entries, characters used, and the time to assemble (median of 5, warm cache).
Run it with PYTHONPATH pointing at another checkout to measure that one.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

ANCHOR = re.compile(r"`\[([0-9a-f]{8})\]`")


def make_repo(root: Path, name: str, entries: list) -> Path:
    from git_lifeline.app.workspace import Workspace

    path = root / name
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com"), ("lifeline.projection", "false")):
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    Workspace.open(str(path)).ledger().append(entries)
    return path


def sections(text: str) -> dict:
    out: dict = {}
    for block in re.split(r"\n(?=## )", text):
        if block.startswith("## "):
            title = block.split("\n", 1)[0][3:]
            out[re.sub(r" \(\d+\)$", "", title)] = block
    return out


def items(block: str) -> list:
    """(anchor, lines under it) for each `- ` item of a section."""
    out = []
    for line in block.splitlines()[1:]:
        m = ANCHOR.search(line) if line.startswith("- ") else None
        if m:
            out.append([m.group(1), []])
        elif out and line.startswith("  "):
            out[-1][1].append(line)
    return out


def stats(led, text: str) -> dict:
    st = led.state()
    secs = sections(text)
    dec = items(secs.get("Decisions in force", ""))
    fixes = {c[:8] for c, _parents, _revert in st.fold.corrections}
    in_force = {i[:8] for i in st.decision_ids}
    why = {a for a, lines in dec if any(ln.startswith("  > ") for ln in lines)}
    named = {a for a, _ in dec} & in_force
    resume = items(secs.get("Resume", ""))
    kinds = dict(st.kinds)

    def shown(title: str) -> int:
        return len(items(secs.get(title, "")))

    return {
        "decisions": f"{len(named)}/{len(in_force)}",
        "with why": str(len(why & in_force)),
        "corr. why": f"{len(why & fixes & in_force)}/{len(fixes & in_force)}",
        "open": f"{shown('Open')}/{len(st.open_ids)}",
        "checkpoints (full)": f"{len(resume)}/{len(st.checkpoint_ids)} ({sum(1 for _, ln in resume if ln)})",
        "inc/req/debt": f"{shown('Incidents and their lessons')}/{shown('Requirements')}/{shown('Debt')}"
        f" of {kinds.get('incident', 0)}/{kinds.get('requirement', 0)}/{kinds.get('debt', 0)}",
        "recent": str(shown("Recent")),
        "chars": str(len(text)),
    }


def timed(led, budget: int) -> tuple:
    times = []
    for _ in range(5):
        t = time.perf_counter()
        parts = led.context(budget=budget)
        times.append((time.perf_counter() - t) * 1000)
    return parts.text, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="4000,8000,12000,16000")
    ap.add_argument("--big", type=int, default=10000, help="entries of the synthetic ledger (0: none)")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]

    from kit.realistic_ledger import build

    from git_lifeline.app.workspace import Workspace

    tally, _ = build(1)
    ledgers = [("tally (152)", tally), ("tally x3", build(3)[0]), ("tally, first 60", tally[:60])]
    if args.big:
        from bench_mcp import build_entries

        ledgers.append((f"synthetic {args.big:,}", build_entries(args.big)))
    cols = [
        "ledger",
        "budget",
        "decisions",
        "with why",
        "corr. why",
        "open",
        "checkpoints (full)",
        "inc/req/debt",
        "recent",
        "chars",
        "ms",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    os.environ["GIT_LIFELINE_NO_GC"] = "1"  # no background gc writing into the repositories being removed
    with tempfile.TemporaryDirectory(prefix="lifeline-bench-context-", ignore_cleanup_errors=True) as tmp:
        for n, (name, entries) in enumerate(ledgers):
            led = Workspace.open(str(make_repo(Path(tmp), f"r{n}", entries))).ledger()
            led.context(budget=budgets[0])  # builds the cache
            for budget in budgets:
                text, ms = timed(led, budget)
                row = {"ledger": name, "budget": f"{budget:,}", **stats(led, text), "ms": f"{ms:.0f}"}
                print("| " + " | ".join(row[c] for c in cols) + " |", flush=True)


if __name__ == "__main__":
    main()
