"""What the warm `context` pays to know that nothing was fetched since (docs/SYNC.md, "Reads
catch up with git fetch"): the same warm read with the check and with it switched off.

    python bench/bench_catch_up.py [--size 2000] [--runs 21] [--calls 2000] [--out results.json]

Run by hand, never in CI (LIFELINE_SEED_PYTHON set: bench/harness.py names the tools' versions). One ledger of bench/gen.py is imported into a clone of a bare
remote, pushed, then one more entry is appended here (the line is ahead of origin, so the
check reads the tracking ref and `<cache>.fetched`, the case that costs the most), and
`git gc` packs the refs (the tracking ref is then a packed-refs line). The cache is warmed
by one normal read, which also records what the line's head contains.

Two figures:

* **process**: warm `context` as `git-lifeline` runs it, taken in turn with the check and
  without it (the same driver with `reffiles.tracking_commits` answering "no remote"), and
  `python -c pass`; medians of wall and CPU time (user + system) over --runs rounds
  (bench/harness.py). The difference is within the noise of a shared machine: read it with
  the in-process figure.
* **in process**: the check alone (`tracking_commits` + `holds_fetched`, what
  app/warm_context.py runs), median and minimum per call over --calls calls.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import ROOT, git, hermetic_env, load_average, machine, measure_many, ours, run_once  # noqa: E402

# The entry point git-lifeline runs (cli.run: the warm path first), with the check on or off.
_DRIVER = (
    "import sys\n"
    "if sys.argv[1] == 'off':\n"
    "    from git_lifeline.git import reffiles\n"
    "    reffiles.tracking_commits = lambda common_dir, line: []  # as if no remote were configured\n"
    "sys.argv = ['git-lifeline', 'context']\n"
    "from git_lifeline.cli import run\n"
    "try:\n"
    "    code = run()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "if 'pygit2' in sys.modules:  # only the normal path loads it: the warm one did not answer\n"
    "    sys.exit('the normal path answered, not the warm one')\n"
    "sys.exit(code)\n"
)


def check_alone(repo: Path, calls: int) -> dict:
    """The warm path's check, in this process: seconds per call (median, min)."""
    sys.path.insert(0, str(ROOT))
    from git_lifeline.git import reffiles
    from git_lifeline.views import cache_warm

    common = str(repo / ".git")
    head = reffiles.read_ref(common, "refs/lifeline/main")
    cache_path = cache_warm.cache_file(reffiles.lifeline_dir_of(common), "main")
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fetched = reffiles.tracking_commits(common, "main")
        held = fetched is not None and head is not None and cache_warm.holds_fetched(cache_path, head, fetched)
        times.append(time.perf_counter() - t)
        if not held:
            raise SystemExit("the check did not find the fetched head held: the set-up is wrong")
    return {"median_us": round(statistics.median(times) * 1e6, 1), "min_us": round(min(times) * 1e6, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-catch-up-") as d:
        tmp = Path(d)
        env = hermetic_env(tmp)
        src = tmp / "ledger.md"
        gen.make(src, "plain", a.size, seed=a.seed)
        remote, repo = tmp / "remote.git", tmp / "repo"
        git("init", "-q", "--bare", str(remote), env=env)
        git("init", "-q", str(repo), env=env)
        git("-C", repo, "config", "lifeline.projection", "false", env=env)
        git("-C", repo, "commit", "-q", "--allow-empty", "-m", "start", env=env)
        git("-C", repo, "remote", "add", "origin", remote.as_uri(), env=env)
        run_once(ours("remote-setup", "origin"), repo, env)
        run_once(ours("import", "--from", src), repo, env)
        run_once(ours("push", "origin"), repo, env)
        git("-C", repo, "fetch", "-q", "origin", env=env)
        run_once(ours("log", "--kind", "note", "--summary", "ahead of origin", "--body", "b"), repo, env)
        git("-C", repo, "gc", "-q", env=env)
        run_once(ours("context"), repo, env)  # warms the cache and records what the head contains
        packed = (repo / ".git" / "packed-refs").read_text()
        assert "refs/remotes/origin/lifeline/main" in packed, "the tracking ref should be packed"
        driver = [sys.executable, "-c", _DRIVER]
        cmds = {
            "check on": [*driver, "on"],
            "check off": [*driver, "off"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        on = run_once(cmds["check on"], repo, env).out
        if on != run_once(cmds["check off"], repo, env).out:
            raise SystemExit("the two reads differ: the check is not what is measured")
        start = load_average()
        timings = measure_many(list(cmds.values()), repo, env, a.runs)
        alone = check_alone(repo, a.calls)
        res = {
            "machine": machine(),
            "size": a.size + 1,
            "runs": a.runs,
            "calls": a.calls,
            "cpus": os.cpu_count(),
            "load_average": {"start": start, "end": load_average()},
            "figures": {k: t.to_json() for k, t in zip(cmds, timings, strict=True)},
            "check_alone": alone,
        }
        shutil.rmtree(repo, ignore_errors=True)
    for name, t in res["figures"].items():
        print(f"{name:16s} wall {t['s'] * 1000:7.1f} ms  CPU {t['cpu_s'] * 1000:6.1f} ms")
    on_t, off_t = res["figures"]["check on"], res["figures"]["check off"]
    print(
        f"difference       wall {(on_t['s'] - off_t['s']) * 1000:+7.1f} ms  CPU {(on_t['cpu_s'] - off_t['cpu_s']) * 1000:+6.1f} ms"
    )
    print(f"the check alone  median {alone['median_us']} us, min {alone['min_us']} us per call ({a.calls} calls)")
    print(f"load average {res['load_average']['start']} -> {res['load_average']['end']}")
    if a.out:
        a.out.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
