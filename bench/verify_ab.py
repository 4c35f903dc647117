"""`git lifeline verify` of one commit against another's, on the same ledgers, in turn,
beside lifeline-context's `verify` of the same ledger (with `--seed`).

    python bench/verify_ab.py --before <commit> [--sizes 10000,30000,50000,100000]
                              [--scenario realistic] [--runs 3] [--seed-tool] [--out verify-ab.json]

This checkout's verify is taken twice: as the first run of a clone (its remembered
verdicts, git/verdicts.py, deleted just before: the timing includes that `rm`) and as a
later run (they are kept).

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
from harness import ROOT, git, hermetic_env, load_average, machine, measure_many, seed_env, theirs  # noqa: E402


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
    ap.add_argument("--seed-tool", action="store_true", help="also lifeline-context's verify (LIFELINE_SEED_PYTHON)")
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
            cmds = [
                ["env", f"PYTHONPATH={before_env['PYTHONPATH']}", sys.executable, "-m", "git_lifeline", "verify"],
                ["sh", "-c", f"rm -f .git/lifeline/verdicts-*.bin; exec {sys.executable} -m git_lifeline verify"],
                [sys.executable, "-m", "git_lifeline", "verify"],
            ]
            sides = ["before", "after_first", "after"]
            if a.seed_tool:
                db = tmp / f"seed-{n}" / "ledger.db"
                db.parent.mkdir()
                subprocess.run(theirs(db, "migrate", "--from", src), env=seed_env(env), check=True, capture_output=True)
                # lifeline-context runs without our PYTHONPATH
                cmds.append(["env", "-u", "PYTHONPATH", *theirs(db, "verify")])
                sides.append("lifeline_context")
            load = load_average()
            timings = measure_many(cmds, repo, env, a.runs)
            row = {"load_before": load, "load_after": load_average()}
            for side, t in zip(sides, timings, strict=True):
                row[side] = {
                    **t.to_json(),
                    "entries_per_s_cpu": round(n / t.cpu) if t.cpu else None,
                    "entries_per_s_wall": round(n / t.seconds) if t.seconds else None,
                }
            results["sizes"][str(n)] = row
            print(
                f"{n}: "
                + ", ".join(f"{side} {row[side]['cpu_s']} s CPU ({row[side]['s']} s wall)" for side in sides)
                + f", load {load}",
                flush=True,
            )
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
