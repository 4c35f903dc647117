"""The cold cache build alone: `context` after deleting `.git/lifeline/`, at each size.

    python bench/bench_cold_cache.py --sizes 10000,100000 --runs 3 --work /tmp/cold \
        --out bench/results/cold-cache-after.json
    python bench/bench_cold_cache.py --gen --seed --log --sizes 1000,10000,100000 --runs 9 \
        --work /tmp/startup --out bench/results/issue30-startup-after.json   # issue 30's start-up goals

The realistic ledgers of bench/gen.py (seed 1) are imported once into `--work` (kept
between invocations, so a before and an after run measure the same repositories) and
packed (`git gc`), as a clone has them. Each figure is one whole CLI process, taken as
every figure of bench/bench.py is (bench/harness.py: wall time, CPU time, peak RSS).
With `--profile`, one more cold run of each size under cProfile prints its top
functions by own and cumulative time.

With `--gen` the ledgers are written by `bench/gen.py --repo` (seed 1, line `bench`)
straight into a repository with one empty code commit (without one HEAD is unborn and no
answer is ever kept: docs/PERFORMANCE.md) and `lifeline.defaultLine bench`, as
bench/bench_million.py makes them. `--seed` takes lifeline-context's `context` on a
`gen.py --db` ledger of the same size and seed in turn with ours (ours cold, theirs, ours
cold, ...). `--log` takes one `log` (a note) in turn with the floor, an interpreter that
only imports pygit2, pydantic and click: the goal is `log` within 1.2x of it. Every
figure has its median and its least CPU time (`cpu_s`, `cpu_min_s`).
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
from harness import (  # noqa: E402
    git,
    hermetic_env,
    imported,
    load_average,
    machine,
    measure,
    measure_each,
    measure_many,
    ours,
    run_once,
    seed_env,
    theirs,
)

FLOOR = "import pygit2, pydantic, click"  # what `log` is compared with (bench/bench.py's floor)


def prepared(work: Path, n: int, env: dict) -> Path:
    repo = work / f"repo-{n}"
    if (repo / ".git" / "refs" / "lifeline").exists() or (repo / ".git" / "packed-refs").exists():
        return repo
    src = work / f"ledger-{n}.md"
    gen.make(src, "realistic", n, seed=1)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    return imported(src, repo, env)


def generated(work: Path, n: int, env: dict) -> Path:
    """A repository whose line `bench` holds gen.py's realistic ledger of `n` entries."""
    repo = work / f"gen-{n}"
    if (repo / ".git" / "refs" / "lifeline" / "bench").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    git("init", "-q", str(repo), env=env)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "init", env=env)
    for key, value in (("lifeline.projection", "false"), ("lifeline.defaultLine", "bench")):
        git("-C", repo, "config", key, value, env=env)
    run_once([sys.executable, gen.__file__, "--size", n, "--seed", 1, "--repo", ".", "--line", "bench"], repo, env)
    return repo


def seed_db(work: Path, n: int, env: dict) -> Path:
    """lifeline-context's SQLite ledger of the same content (gen.py --db)."""
    db = work / f"seed-{n}.db"
    if not db.exists():
        run_once([sys.executable, gen.__file__, "--size", n, "--seed", 1, "--db", db], work, env)
    return db


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
    ap.add_argument("--gen", action="store_true", help="ledgers by gen.py --repo, with one code commit")
    ap.add_argument("--seed", action="store_true", help="lifeline-context's context in turn with ours cold")
    ap.add_argument("--log", action="store_true", help="one log in turn with the import floor")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = hermetic_env(args.work)
    if not args.seed:  # lifeline-context is not measured: machine() need not find it
        os.environ.setdefault("LIFELINE_SEED_PYTHON", sys.executable)
    results: dict = {
        "machine": {k: v for k, v in machine().items() if args.seed or not k.startswith(("seed", "lifeline"))},
        "config": {"sizes": args.sizes, "runs": args.runs, "gen": args.gen, "seed": args.seed, "log": args.log},
        "sizes": [],
    }
    for n in [int(x) for x in args.sizes.split(",") if x.strip()]:
        repo = generated(args.work, n, env) if args.gen else prepared(args.work, n, env)
        row: dict = {"entries": n, "load_average": load_average()}
        drop = lambda r=repo: drop_cache(r)  # noqa: E731
        if args.seed:
            db = seed_db(args.work, n, env)
            cold, seed = measure_each(
                [(ours("context"), repo, env, drop), (theirs(db, "context"), args.work, seed_env(env), None)],
                args.runs,
                args.timeout,
            )
            row["context_cold"], row["seed_context"] = cold.to_json(), seed.to_json()
        else:
            row["context_cold"] = measure(ours("context"), repo, env, args.runs, drop, args.timeout).to_json()
        row["context_warm"] = measure(ours("context"), repo, env, args.runs, None, args.timeout).to_json()
        if args.log:
            floor, log = measure_many(
                [
                    [sys.executable, "-c", FLOOR],
                    ours("log", "--kind", "note", "--summary", "bench append", "--body", "why"),
                ],
                repo,
                env,
                args.runs,
                None,
                args.timeout,
            )
            row["floor"], row["log"] = floor.to_json(), log.to_json()
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
