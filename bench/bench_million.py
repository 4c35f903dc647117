"""Issue 30's figures at 10k / 100k / 1M entries, in one run: whole processes, wall and
CPU time and peak RSS of each (bench/harness.py), lifeline-context beside where it has
the operation.

    python bench/bench_million.py [--sizes 10000,100000,1000000] [--runs 3] [--out r.json]
                                  [--skip core,seed,clone,pull,lines,import] [--ledger DIR]

Run by hand, never in CI. For each size N:

  generate          bench/gen.py --repo: N realistic entries straight into git (or, with
                    --ledger DIR and one size, a copy of a repository it made before: the
                    1M generator alone takes ~230 s of CPU)
  import            N/8 entries of a lifeline-context SQLite ledger (bench/gen.py --db)
                    into an empty line, and into a line of 7N/8: appending should cost
                    what the new entries cost, not the line
  core: context cold  after deleting .git/lifeline/ (the cache build)
  context warm      rendered from the cache (its answer kept), then from the kept answer;
                    and `recall`, the cache up to date
  context after log `context` right after one `log` (the cache catches up one entry), and
                    the warm `context` after that one (it renders, then keeps)
  verify            the whole line, verdicts dropped first
  clone             `git clone` + fetch of refs/lifeline/* (git alone) over a file:// URL,
                    so that git packs and sends what a teammate's clone receives (a plain
                    path hard-links the objects instead), and the pack's size
  pull             `git lifeline pull` of 1,000 new entries (and a plain `git fetch` of them)
  lines             a repository of 300 lines (N/300 entries each): `lines`, `context`, `log`
  seed              lifeline-context on the same SQLite ledger: context, recall, verify

A command that outlives --timeout is killed and reported as a timeout, never as a number.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import Timing, git, hermetic_env, load_average, machine, measure, ours, seed_env, theirs  # noqa: E402

QUERY = "storage retention decision"
GROUPS = ("core", "import", "seed", "clone", "pull", "lines")
GEN = str(Path(__file__).resolve().parent / "gen.py")


def fresh_repo(path: Path, env: dict) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    git("init", "-q", path, env=env)
    git("-C", path, "commit", "-q", "--allow-empty", "-m", "init", env=env)
    git("-C", path, "config", "lifeline.projection", "false", env=env)
    return path


def drop(repo: Path) -> None:
    """The rebuildable cache and verdicts: what a cold run starts without."""
    shutil.rmtree(repo / ".git" / "lifeline", ignore_errors=True)


def drop_kept(repo: Path) -> None:
    """The warm `context`'s kept answers: what makes the next one render from the fold."""
    for path in (repo / ".git" / "lifeline").glob("*.context"):
        path.unlink()


def drop_verdicts(repo: Path) -> None:
    """What verify remembers of earlier runs: a timed verify checks everything."""
    for path in (repo / ".git" / "lifeline").glob("verdicts-*.bin"):
        path.unlink()


class Million:
    def __init__(self, tmp: Path, env: dict, args: argparse.Namespace):
        self.tmp, self.env, self.args = tmp, env, args

    def m(self, cmd: list, cwd: Path, runs: int = 0, before=None, seed: bool = False) -> dict:
        env = seed_env(self.env) if seed else self.env
        t: Timing = measure(cmd, cwd, env, runs or self.args.runs, before, self.args.timeout)
        return t.to_json()

    def gen(self, repo: Path, n: int, line: str = "bench", seed: int = 1, salt: str = "") -> dict:
        cmd = [sys.executable, GEN, "--size", str(n), "--seed", str(seed), "--repo", ".", "--line", line]
        if salt:
            cmd += ["--salt", salt]
        return self.m(cmd, repo, runs=1)

    def size(self, n: int) -> dict:
        a, tmp = self.args, self.tmp
        out: dict = {"entries": n}
        repo = fresh_repo(tmp / f"r{n}", self.env)
        if a.ledger is not None:
            shutil.rmtree(repo)
            shutil.copytree(a.ledger, repo, symlinks=True)
            out["generate"] = f"copied from a repository gen.py --repo made ({a.ledger.name})"
        else:
            out["generate"] = self.gen(repo, n)
        git("-C", repo, "config", "lifeline.defaultLine", "bench", env=self.env)
        if "core" not in a.skip:
            self._core(repo, out)
        if "clone" not in a.skip:
            out["clone"] = self._clone(repo)
        if "pull" not in a.skip:
            out["pull"] = self._pull(n, repo)
        if "import" not in a.skip or "seed" not in a.skip:
            part = tmp / f"part-{n}.db"
            gen.write_db(part, "realistic", max(1, n // 8), seed=2, salt=" (part)")
            if "import" not in a.skip:
                out["import"] = self._import(n, part)
            if "seed" not in a.skip:
                out["seed"] = self._seed(n)
            part.unlink()
        if "lines" not in a.skip:
            out["lines"] = self._lines(n)
        shutil.rmtree(repo, ignore_errors=True)
        return out

    def _core(self, repo: Path, out: dict) -> None:
        """context (cold, warm, after a log), recall, log and verify on the line."""
        out["context_cold"] = self.m(ours("context"), repo, before=lambda: drop(repo))
        # the first warm `context` renders from the cache's fold and keeps its answer
        # (views/context_kept.py); every later one reads the kept answer
        out["context_warm_render"] = self.m(ours("context"), repo, runs=1, before=lambda: drop_kept(repo))
        out["context_warm"] = self.m(ours("context"), repo)
        out["recall"] = self.m(ours("recall", QUERY), repo)
        counter = iter(range(10**6))

        def one_log() -> None:
            k = next(counter)
            subprocess.run(
                ours("log", "--kind", "note", "--summary", f"Bench note {k}", "--body", f"why ({k})"),
                cwd=repo,
                env=self.env,
                check=True,
                capture_output=True,
            )

        out["context_after_log"] = self.m(ours("context"), repo, before=one_log)
        # the normal path after a `log` leaves the cache and its tip at the new head: the
        # next `context` renders warm once, then reads what it kept
        one_log()
        subprocess.run(ours("context"), cwd=repo, env=self.env, check=True, capture_output=True)
        out["context_after_log_then_warm"] = self.m(ours("context"), repo, runs=1)
        out["log"] = self.m(ours("log", "--kind", "note", "--summary", "Timed note", "--body", "why"), repo)
        out["verify"] = self.m(ours("verify"), repo, runs=1, before=lambda: drop_verdicts(repo))

    def _import(self, n: int, part: Path) -> dict:
        empty = fresh_repo(self.tmp / "imp-empty", self.env)
        into_empty = self.m(ours("--line", "bench", "import", "--from", part), empty, runs=1)
        shutil.rmtree(empty, ignore_errors=True)
        big = fresh_repo(self.tmp / "imp-big", self.env)
        self.gen(big, n - n // 8)
        into_big = self.m(ours("--line", "bench", "import", "--from", part), big, runs=1)
        shutil.rmtree(big, ignore_errors=True)
        return {"entries": n // 8, "into_empty": into_empty, f"into_{n - n // 8}": into_big}

    def _seed(self, n: int) -> dict:
        db = self.tmp / f"seed-{n}.db"
        gen.write_db(db, "realistic", n, seed=1)
        out = {
            "context": self.m(theirs(db, "context"), self.tmp, seed=True),
            "recall": self.m(theirs(db, "recall", QUERY), self.tmp, seed=True),
            "verify": self.m(theirs(db, "verify"), self.tmp, runs=1, seed=True),
        }
        db.unlink()
        return out

    def _clone(self, repo: Path) -> dict:
        dest = self.tmp / "clone"

        def before() -> None:
            shutil.rmtree(dest, ignore_errors=True)

        url = repo.resolve().as_uri()
        script = f"git clone -q '{url}' '{dest}' && git -C '{dest}' fetch -q origin 'refs/lifeline/*:refs/lifeline/*'"
        out = self.m(["sh", "-c", script], self.tmp, runs=1, before=before)
        packs = sum(p.stat().st_size for p in (dest / ".git" / "objects" / "pack").glob("*.pack"))
        out["pack_bytes"] = packs
        shutil.rmtree(dest, ignore_errors=True)
        return out

    def _pull(self, n: int, repo: Path) -> dict:
        tmp, env = self.tmp, self.env
        remote, other, copy = tmp / "remote.git", tmp / "other", tmp / "pull-a"
        for d in (remote, other, copy):
            shutil.rmtree(d, ignore_errors=True)
        git("init", "-q", "--bare", remote, env=env)
        git("-C", repo, "push", "-q", remote, "refs/lifeline/*:refs/lifeline/*", env=env)
        git("clone", "-q", "--no-checkout", remote, other, env=env)
        git("-C", other, "fetch", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", env=env)
        extra = tmp / "pulled.md"
        # after the line's last entry: gen.py spaces N entries within SPAN_SECONDS (a million at
        # 600 s apart would end in 2042, and the import rightly refuses entries from the future)
        start = gen.T0 + timedelta(seconds=min(gen.STEP_SECONDS, gen.SPAN_SECONDS // n) * (n + 10))
        gen.make(extra, "realistic", 1000, seed=3, salt=" (pulled)", start=start)
        subprocess.run(
            ours("--line", "bench", "import", "--from", extra), cwd=other, env=env, check=True, capture_output=True
        )
        git("-C", other, "push", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", env=env)

        def before() -> None:
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(repo, copy, symlinks=True)
            git("-C", copy, "remote", "add", "origin", remote, env=env)

        out = {"pull": self.m(ours("pull", "origin"), copy, runs=1, before=before)}
        out["fetch"] = self.m(
            ["git", "fetch", "-q", "origin", "+refs/lifeline/*:refs/remotes/origin/lifeline/*"],
            copy,
            runs=1,
            before=before,
        )
        for d in (remote, other, copy):
            shutil.rmtree(d, ignore_errors=True)
        return out

    def _lines(self, n: int) -> dict:
        repo = fresh_repo(self.tmp / "lines300", self.env)
        each = max(2, n // 300)
        for k in range(300):
            gen.write_repo(repo, "realistic", each, seed=10 + k, line=f"team-{k:03d}", salt=f" (team {k})")
        git("-C", repo, "config", "lifeline.defaultLine", "team-000", env=self.env)
        out = {
            "entries_per_line": each,
            "lines": self.m(ours("lines"), repo),
            "context": self.m(ours("context"), repo),
            "log": self.m(ours("log", "--kind", "note", "--summary", "Timed note", "--body", "why"), repo),
        }
        shutil.rmtree(repo, ignore_errors=True)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--skip", default="", help=f"leave groups out: {','.join(GROUPS)}")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--ledger", type=Path, default=None, help="with one size: copy this gen.py --repo repository")
    args = ap.parse_args()
    if args.ledger is not None and "," in args.sizes:
        ap.error("--ledger is a repository of one size: give one --sizes")
    args.skip = {s for s in args.skip.split(",") if s}
    unknown = args.skip - set(GROUPS)
    if unknown:
        ap.error(f"unknown group(s) {', '.join(sorted(unknown))}; known: {', '.join(GROUPS)}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-million-"))
    env = hermetic_env(tmp)
    results: dict = {"machine": machine(), "sizes": []}
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            results["sizes"].append(Million(tmp, env, args).size(n))
            results["sizes"][-1]["load_average"] = load_average()
            text = json.dumps(results, indent=1)
            if args.out:
                args.out.write_text(text)
            print(text, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
