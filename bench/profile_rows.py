"""Profiles (cProfile) of the two worst rows: cold `context` of a revision chain, and `verify`.

    python bench/profile_rows.py [--chain 1000] [--size 10000] [--top 15] [--keep DIR]

Each profile is one real CLI process run under `python -m cProfile`, on a ledger
from bench/gen.py imported by `git lifeline import`:

  chain    one decision revised --chain times; `context` after deleting the cache
  verify   a realistic ledger of --size entries (packed by `git gc`); `verify`

Prints, for each, the functions with the most own time (tottime) and the package's
functions with the most time including their callees (cumtime). Profiler overhead inflates the totals (more so
for many small calls); the ranking is what to read. --keep keeps the .prof files
(open them with `python -m pstats FILE` or snakeviz).
"""

from __future__ import annotations

import argparse
import io
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import (  # noqa: E402
    ROOT,
    hermetic_env,
    imported,
)


def profile(cmd: list, cwd: Path, env: dict, out: Path) -> float:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "git_lifeline", *cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - t


def top(prof: Path, key: str, n: int) -> str:
    """The top `n` by own time (everything), or by cumulative time (this package's functions
    only: the frames above them, runpy and click, say nothing)."""
    buf = io.StringIO()
    stats = pstats.Stats(str(prof), stream=buf)
    if key == "tottime":
        stats.strip_dirs().sort_stats(key).print_stats(n)
    else:
        stats.sort_stats(key).print_stats(r"git_lifeline[/\\]", n)
    lines = [line.replace(str(ROOT) + "/", "") for line in buf.getvalue().splitlines()]
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    total = next((line.strip() for line in lines if "function calls" in line), "")
    return "\n".join([total, *lines[start:]]).rstrip()


def prepare(tmp: Path, env: dict, name: str, scenario: str, size: int) -> Path:
    src = tmp / f"{name}.md"
    gen.make(src, scenario, size, seed=1)
    repo = tmp / name
    repo.mkdir()
    return imported(src, repo, env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chain", type=int, default=1000)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--keep", type=Path, default=None, help="directory for the .prof files")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lifeline-profile-") as d:
        tmp = Path(d)
        env = hermetic_env(tmp)
        jobs = []
        if args.chain:
            repo = prepare(tmp, env, "chain", "chain", args.chain)
            shutil.rmtree(repo / ".git" / "lifeline", ignore_errors=True)
            jobs.append((f"`context`, cold, one decision revised {args.chain:,} times", ["context"], repo, "chain"))
        if args.size:
            repo = prepare(tmp, env, "verify", "realistic", args.size)
            jobs.append((f"`verify`, realistic ledger of {args.size:,} entries", ["verify"], repo, "verify"))
        for title, cmd, repo, name in jobs:
            prof = tmp / f"{name}.prof"
            wall = profile(cmd, repo, env, prof)
            print(f"## {title} (under the profiler: {wall:.1f} s wall)\n")
            for key in ("tottime", "cumulative"):
                print(f"### by {key}\n```\n{top(prof, key, args.top)}\n```\n")
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(prof, args.keep / prof.name)


if __name__ == "__main__":
    main()
