"""`git lifeline verify` of one commit against another's, on the same ledgers, in turn.

    python bench/verify_ab.py --before <commit> [--sizes 10000,30000,50000,100000]
                              [--scenario realistic] [--runs 3] [--out verify-ab.json]

The before side is `git archive <commit> git_lifeline` unpacked in a temporary
directory; the after side is this checkout. For each size, bench/gen.py writes a ledger,
this checkout imports it into a fresh repository, and `git gc` packs it (as a clone has
it: deltified blobs in one pack). Then each side's `verify` runs in turn (before, after,
before, ...), each a whole process from bytecode (bench/harness.py: wall and CPU of the
process and its children, medians), so a change of the machine's load hits both alike.
Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import ROOT, git, hermetic_env, load_average, machine, measure_many  # noqa: E402


def unpack(commit: str, dest: Path) -> Path:
    """The package as of `commit`, compiled, under `dest`."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "git_lifeline"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(dest / "git_lifeline")], check=True, capture_output=True
    )
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the commit to compare this checkout with")
    ap.add_argument("--sizes", default="10000,30000,50000,100000")
    ap.add_argument("--scenario", default="realistic", choices=("realistic", "plain"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="JSON results")
    a = ap.parse_args()
    results: dict = {"machine": machine(), "before": a.before, "scenario": a.scenario, "runs": a.runs, "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = hermetic_env(tmp)
        old = unpack(a.before, tmp / "before")
        before_env = {**env, "PYTHONPATH": str(old)}
        for n in (int(s) for s in a.sizes.split(",") if s):
            src, repo = tmp / f"ledger-{n}.md", tmp / f"repo-{n}"
            gen.make(src, a.scenario, n, seed=a.seed)
            git("init", "-q", str(repo), env=env)
            git("-C", repo, "config", "lifeline.projection", "false", env=env)
            subprocess.run(
                [sys.executable, "-m", "git_lifeline", "import", "--from", str(src)],
                cwd=repo,
                env=env,
                check=True,
                capture_output=True,
            )
            git("-C", repo, "gc", "-q", env=env)
            load = load_average()
            timings = measure_many(
                [
                    ["env", f"PYTHONPATH={before_env['PYTHONPATH']}", sys.executable, "-m", "git_lifeline", "verify"],
                    [sys.executable, "-m", "git_lifeline", "verify"],
                ],
                repo,
                env,
                a.runs,
            )
            row = {"load_before": load, "load_after": load_average()}
            for side, t in zip(("before", "after"), timings, strict=True):
                row[side] = {
                    **t.to_json(),
                    "entries_per_s_cpu": round(n / t.cpu) if t.cpu else None,
                    "entries_per_s_wall": round(n / t.seconds) if t.seconds else None,
                }
            results["sizes"][str(n)] = row
            print(
                f"{n}: before {row['before']['cpu_s']} s CPU ({row['before']['s']} s wall), "
                f"after {row['after']['cpu_s']} s CPU ({row['after']['s']} s wall), load {load}",
                flush=True,
            )
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
