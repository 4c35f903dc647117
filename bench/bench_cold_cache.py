"""The cold cache build alone: `context` after deleting `.git/lifeline/`, at each size.

    python bench/bench_cold_cache.py --sizes 10000,100000 --runs 3 --work /tmp/cold \
        --out bench/results/cold-cache-after.json

The realistic ledgers of bench/gen.py (seed 1) are imported once into `--work` (kept
between invocations, so a before and an after run measure the same repositories) and
packed (`git gc`), as a clone has them. Each figure is one whole CLI process, taken as
every figure of bench/bench.py is (bench/harness.py: wall time, CPU time, peak RSS).
With `--profile`, one more cold run of each size under cProfile prints its top
functions by own and cumulative time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen  # noqa: E402
from harness import git, hermetic_env, load_average, machine, measure, ours, run_once  # noqa: E402


def prepared(work: Path, n: int, env: dict) -> Path:
    repo = work / f"repo-{n}"
    if (repo / ".git" / "refs" / "lifeline").exists() or (repo / ".git" / "packed-refs").exists():
        return repo
    src = work / f"ledger-{n}.md"
    gen.make(src, "realistic", n, seed=1)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git("init", "-q", str(repo), env=env)
    git("-C", repo, "config", "lifeline.projection", "false", env=env)
    run_once(ours("import", "--from", src), repo, env)
    git("-C", repo, "gc", "-q", env=env)
    return repo


def drop_cache(repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "lifeline", ignore_errors=True)


def profile(repo: Path, env: dict, out: Path) -> str:
    drop_cache(repo)
    run_once([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "git_lifeline", "context"], repo, env)
    import io
    import pstats

    buf = io.StringIO()
    st = pstats.Stats(str(out), stream=buf)
    st.sort_stats("tottime").print_stats(15)
    st.sort_stats("cumulative").print_stats(25)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--work", type=Path, required=True, help="where the imported repositories are kept")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = hermetic_env(args.work)
    # lifeline-context is not measured here: machine() need not find it
    os.environ.setdefault("LIFELINE_SEED_PYTHON", sys.executable)
    results: dict = {
        "machine": {k: v for k, v in machine().items() if not k.startswith(("seed", "lifeline"))},
        "config": {"sizes": args.sizes, "runs": args.runs},
        "sizes": [],
    }
    for n in [int(x) for x in args.sizes.split(",") if x.strip()]:
        repo = prepared(args.work, n, env)
        row: dict = {"entries": n, "load_average": load_average()}
        row["context_cold"] = measure(
            ours("context"), repo, env, args.runs, lambda r=repo: drop_cache(r), args.timeout
        ).to_json()
        row["context_warm"] = measure(ours("context"), repo, env, args.runs, None, args.timeout).to_json()
        cache = repo / ".git" / "lifeline"
        row["cache_bytes"] = sum(p.stat().st_size for p in cache.iterdir()) if cache.exists() else 0
        row["load_average_after"] = load_average()
        print(json.dumps(row), flush=True)
        results["sizes"].append(row)
        if args.profile:
            print(profile(repo, env, args.work / f"cold-{n}.prof"), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
