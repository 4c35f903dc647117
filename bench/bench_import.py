"""Import rate: `git lifeline import` next to lifeline-context's own `migrate`, same file.

    python bench/bench_import.py [--sizes 10000,100000] [--runs 3]

For each size, one LIFELINE.md in lifeline-context's format (bench/gen.py's realistic
ledger: every kind, revisions, threads, pins, multi-line bodies) is imported into a
fresh git repository by `git lifeline import` and into a fresh project by
`lifeline migrate` (the real lifeline-context from LIFELINE_SEED_PYTHON, or
.venv-seed/). Both are timed end to end as separate processes (interpreter start
included; ours also writes the projection). The median of --runs is reported, as
wall-clock time and as CPU time (user + system, the tool and its children, e.g.
git fast-import): on a shared machine the second is the steadier figure.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import hermetic_env, seed_python  # noqa: E402,F401  (re-exported for older scripts)


def make_file(path: Path, n: int, salt: str = "") -> None:
    """A realistic ledger of `n` entries (bench/gen.py), in lifeline-context's format."""
    gen.make(path, "realistic", n, seed=1, salt=salt)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_ours(src: Path, tmp: Path, env: dict) -> tuple:
    repo = Path(tempfile.mkdtemp(dir=tmp))
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    c = _cpu()
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "git_lifeline", "import", "--from", str(src)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed, cpu = time.perf_counter() - t, _cpu() - c
    if out.returncode != 0:
        sys.exit(f"git lifeline import failed: {out.stderr}")
    return elapsed, cpu


def time_seed(src: Path, tmp: Path, env: dict) -> tuple:
    proj = Path(tempfile.mkdtemp(dir=tmp))
    seed_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    c = _cpu()
    t = time.perf_counter()
    out = subprocess.run(
        [seed_python(), "-m", "lifeline", "--db", str(proj / "ledger.db"), "migrate", "--from", str(src)],
        cwd=proj,
        env=seed_env,
        capture_output=True,
        text=True,
    )
    elapsed, cpu = time.perf_counter() - t, _cpu() - c
    if out.returncode != 0:
        sys.exit(f"lifeline migrate failed: {out.stdout}{out.stderr}")
    return elapsed, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(
        f"{'entries':>8}  {'tool':<26} {'wall s':>7} {'entries/s':>9} {'cpu s':>7} {'entries/cpu-s':>13}"
        "   runs (wall/cpu)"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        env = hermetic_env(tmp)
        for n in (int(x) for x in args.sizes.split(",")):
            src = tmp / f"LIFELINE-{n}.md"
            make_file(src, n)
            for name, fn in (("git lifeline import", time_ours), ("lifeline-context migrate", time_seed)):
                runs = [fn(src, tmp, env) for _ in range(args.runs)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                print(
                    f"{n:>8}  {name:<26} {wall:>7.2f} {n / wall:>9.0f} {cpu:>7.2f} {n / cpu:>13.0f}   "
                    + " ".join(f"{w:.1f}/{c:.1f}" for w, c in runs),
                    flush=True,
                )


if __name__ == "__main__":
    main()
