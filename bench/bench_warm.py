"""`context` with a warm cache, ours against lifeline-context 0.6.1, taken in turn.

    python bench/bench_warm.py [--size 10000] [--scenario plain] [--runs 21]
                               [--before DIR] [--out results.json]

Run by hand, never in CI. Needs LIFELINE_SEED_PYTHON (or the .venv-seed/ of .ci/run).
One ledger of bench/gen.py is imported by both tools (ours git gc'ed, projection off),
our cache is warmed once (the normal path also keeps its answer, views/context_kept.py,
so every warm run after it reads that kept answer; bench/bench_million.py takes the one
warm run that renders apart), then every command runs once per round, in turn (ours,
--before's, lifeline-context's, `python -c pass`), so that a change of the machine's
load hits all of them alike: the ratios are the figures to trust on a shared machine.
--before DIR runs another tree's `git_lifeline/` (e.g. `git archive <commit>`
unpacked) as a second "ours". bench/harness.py says how one figure is taken.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import git, hermetic_env, load_average, machine, measure_many, ours, run_once, theirs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--scenario", default="plain", choices=("realistic", "plain"))
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--before", type=Path, default=None, help="a tree whose git_lifeline/ to time as well")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as d:
        tmp = Path(d)
        env = hermetic_env(tmp)
        src = tmp / "ledger.md"
        gen.make(src, a.scenario, a.size, seed=a.seed)
        repo, proj = tmp / "repo", tmp / "proj"
        git("init", "-q", str(repo), env=env)
        git("-C", repo, "config", "lifeline.projection", "false", env=env)
        run_once(ours("import", "--from", src), repo, env)
        git("-C", repo, "gc", "-q", env=env)
        proj.mkdir()
        db = proj / "ledger.db"
        run_once(theirs(db, "migrate", "--from", src), proj, {k: v for k, v in env.items() if k != "PYTHONPATH"})
        run_once(ours("context"), repo, env)  # the cache, and its tip, for this head
        cmds = {"ours": ours("context")}
        if a.before is not None:
            cmds["before"] = ["env", f"PYTHONPATH={a.before.resolve()}", *ours("context")]
        # lifeline-context without our PYTHONPATH (bench/harness.py seed_env), by absolute --db
        cmds["lifeline-context"] = ["env", "-u", "PYTHONPATH", *map(str, theirs(db, "context"))]
        cmds["python -c pass"] = [sys.executable, "-c", "pass"]
        start = load_average()
        timings = measure_many(list(cmds.values()), repo, env, a.runs)
        res = {
            "machine": machine(),
            "size": a.size,
            "scenario": a.scenario,
            "runs": a.runs,
            "load_average": {"start": start, "end": load_average()},
            "figures": {k: t.to_json() for k, t in zip(cmds, timings, strict=True)},
        }
        shutil.rmtree(repo, ignore_errors=True)
    theirs_t = res["figures"]["lifeline-context"]
    for name, t in res["figures"].items():
        ratio = ""
        if name != "lifeline-context" and t["cpu_s"] and theirs_t["cpu_s"]:
            ratio = f"  ({theirs_t['cpu_s'] / t['cpu_s']:.1f}x CPU, {theirs_t['s'] / t['s']:.1f}x wall)"
        print(f"{name:18s} wall {t['s'] * 1000:7.0f} ms  CPU {t['cpu_s'] * 1000:5.0f} ms{ratio}")
    print(f"load average {res['load_average']['start']} -> {res['load_average']['end']}")
    if a.out:
        a.out.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
