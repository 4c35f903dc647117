"""The side-by-side benchmark: git-lifeline against lifeline-context 0.6.1, same content.

    python bench/bench.py [--sizes 1000,10000,100000] [--runs 5] [--chains 1000,10000]
                          [--pairs 1000,10000] [--out results.json] [--md results.md]

Run by hand, never in CI. Needs LIFELINE_SEED_PYTHON (the python of a venv with
lifeline-context 0.6.1) or the .venv-seed/ that .ci/run creates.

For each size, bench/gen.py writes one realistic ledger (every kind in a real
ledger's shares, revisions, revision chains, reverts, threads with checkpoints,
open items closed later, pins) in lifeline-context's LIFELINE.md format; the same
file is imported by `git lifeline import` into a fresh git repository and by
`lifeline migrate` into a fresh database. Then, each a whole process (interpreter
start included), the median of --runs (bench/harness.py says how a figure is taken):

  import / migrate   entries per second, end to end, into an empty ledger
  context warm       the cache under .git/lifeline/ up to date
  context cold       after deleting .git/lifeline/ (a cache loss); the cold cache
                     build's time and peak RSS
  context clone      in a fresh clone that fetched refs/lifeline/* (no cache yet)
  context merge      after --older entries that sort before the whole ledger were
                     imported into a copy whose cache was warm (the fold starts over)
  query / recall     `context --query Q` and `recall Q`, warm
  verify             entries per second
  log                one append, next to the floor: a cold interpreter that only
                     imports pygit2, pydantic and click (taken in turn, a, b, a, b)
  pull               `git lifeline pull` of 1,000 new entries next to a plain
                     `git fetch` of the same objects
  post-commit hook   with nothing to say (the commit links an entry): the hook run
                     by itself, and `git commit --allow-empty` with and without it

and the pathological ledgers: one decision revised N times (--chains) and N
independent decision+correction pairs (--pairs), imported by both, then `context`
cold and warm (lifeline-context has no persistent cache: its figure is its only one).
A command that outlives --timeout is killed and reported as "> timeout". --skip
leaves groups out (at 100k, lifeline-context's context/recall/verify take minutes
each: `--skip seed,clone,merge,query,pull,hook` keeps a run near 15 minutes).

The results go to --out (JSON) and, rendered by bench/report.py, to stdout and --md.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
import report  # noqa: E402
from harness import (  # noqa: E402
    Failed,
    git,
    hermetic_env,
    load_average,
    machine,
    measure,
    measure_many,
    ours,
    run_once,
    seed_env,
    theirs,
)

QUERY = "storage retention decision"
FLOOR = "import pygit2, pydantic, click"
GROUPS = ("context", "clone", "merge", "query", "verify", "pull", "log", "hook", "seed")


def fresh_repo(path: Path, env: dict) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git("init", "-q", str(path), env=env)
    # the projection (LIFELINE.md in the work tree) is a separate concern: off, for both tools alike
    git("-C", path, "config", "lifeline.projection", "false", env=env)


def fresh_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)


def drop_cache(repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "lifeline", ignore_errors=True)


def drop_verdicts(repo: Path) -> None:
    for path in (repo / ".git" / "lifeline").glob("verdicts-*.bin"):
        path.unlink()


def first_id(ledger: Path) -> str:
    with open(ledger, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"- \*\*id\*\*: ([0-9a-f]{64})$", line.rstrip("\n"))
            if m:
                return m.group(1)
    raise SystemExit(f"{ledger}: no entry id")


class Bench:
    def __init__(self, tmp: Path, env: dict, args: argparse.Namespace):
        self.tmp, self.env, self.senv, self.args = tmp, env, seed_env(env), args
        self.skip = set(args.skip.split(",")) if args.skip else set()

    def m(self, cmd, cwd, runs=None, before=None, seed=False):
        if seed and "seed" in self.skip and "migrate" not in cmd:
            return None
        env = self.senv if seed else self.env
        return measure(cmd, cwd, env, runs or self.args.runs, before, self.args.timeout).to_json()

    # ---- one realistic ledger -------------------------------------------------------------
    def size(self, n: int) -> dict:
        a, tmp, env = self.args, self.tmp, self.env
        res: dict = {"entries": n, "scenario": a.scenario, "load_average": load_average()}
        src = tmp / f"ledger-{n}.md"
        res["ledger"] = gen.make(src, a.scenario, n, seed=a.seed)
        repo, proj = tmp / f"repo-{n}", tmp / f"proj-{n}"
        db = proj / "ledger.db"
        runs_import = a.import_runs
        res["import"] = self.m(ours("import", "--from", src), repo, runs_import, lambda: fresh_repo(repo, env))
        res["migrate"] = self.m(
            theirs(db, "migrate", "--from", src), proj, runs_import, lambda: fresh_dir(proj), seed=True
        )
        git("-C", repo, "gc", "-q", env=env)  # as a clone has it: one pack

        if "context" not in self.skip:
            res["context_cold"] = self.m(ours("context"), repo, before=lambda: drop_cache(repo))
            res["context_warm"] = self.m(ours("context"), repo)
            res["seed_context"] = self.m(theirs(db, "context"), proj, seed=True)
        if "clone" not in self.skip:
            res["context_clone"] = self.m(ours("context"), tmp / "clone", before=lambda: self._clone(repo))
            shutil.rmtree(tmp / "clone", ignore_errors=True)
        if "merge" not in self.skip:
            res["context_merge_older"] = self._merge_older(n, repo)
        if "query" not in self.skip:
            res["query_warm"] = self.m(ours("context", "--query", QUERY), repo)
            res["seed_query"] = self.m(theirs(db, "context", "--query", QUERY), proj, seed=True)
            res["recall_warm"] = self.m(ours("recall", QUERY), repo)
            res["seed_recall"] = self.m(theirs(db, "recall", QUERY), proj, seed=True)
        if "verify" not in self.skip:
            # the first verify of a clone judges every entry; later ones skip the secret scan and
            # header check for what an earlier run found clean (git/verdicts.py)
            res["verify_first"] = self.m(ours("verify"), repo, before=lambda: drop_verdicts(repo))
            res["verify"] = self.m(ours("verify"), repo)
            res["seed_verify"] = self.m(theirs(db, "verify"), proj, seed=True)
        if "pull" not in self.skip:
            res["pull"] = self._pull(n, repo)
        if "log" not in self.skip:
            floor, log = measure_many(
                [
                    [sys.executable, "-c", FLOOR],
                    ours("log", "--kind", "note", "--summary", "bench append", "--body", "why"),
                ],
                repo,
                env,
                a.runs,
            )
            res["floor"], res["log"] = floor.to_json(), log.to_json()
            res["seed_log"] = self.m(
                theirs(db, "log", "--kind", "note", "--summary", "bench append", "--body", "why"), proj, seed=True
            )
        if "hook" not in self.skip:
            res["hook"] = self._hook(repo, first_id(src))
        shutil.rmtree(proj, ignore_errors=True)
        shutil.rmtree(repo, ignore_errors=True)
        return res

    def _clone(self, repo: Path) -> None:
        dest = self.tmp / "clone"
        shutil.rmtree(dest, ignore_errors=True)
        git("clone", "-q", repo, dest, env=self.env)
        git("-C", dest, "fetch", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", env=self.env)
        git("-C", dest, "config", "lifeline.projection", "false", env=self.env)

    def _merge_older(self, n: int, repo: Path) -> dict:
        """`context` right after entries older than the whole ledger arrived (the fold starts over)."""
        a = self.args
        older = self.tmp / f"older-{n}.md"
        start = gen.T0 - timedelta(seconds=600 * (a.older + 10))
        gen.make(older, "realistic", a.older, seed=a.seed + 1, salt=" (older)", start=start)
        copy = self.tmp / "merge"
        run_once(ours("context"), repo, self.env)  # the original's cache is warm

        def before():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(repo, copy, symlinks=True)
            subprocess.run(ours("import", "--from", older), cwd=copy, env=self.env, check=True, capture_output=True)

        out = self.m(ours("context"), copy, before=before)
        out["older_entries"] = a.older
        shutil.rmtree(copy, ignore_errors=True)
        return out

    def _pull(self, n: int, repo: Path) -> dict:
        """Pull 1,000 new entries into a copy of `repo`, next to a plain git fetch of them."""
        tmp, env, a = self.tmp, self.env, self.args
        remote, other = tmp / "remote.git", tmp / "other"
        for d in (remote, other):
            shutil.rmtree(d, ignore_errors=True)
        git("init", "-q", "--bare", remote, env=env)
        git("-C", repo, "push", "-q", remote, "refs/lifeline/*:refs/lifeline/*", env=env)
        git("clone", "-q", remote, other, env=env)
        git("-C", other, "fetch", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", env=env)
        git("-C", other, "config", "lifeline.projection", "false", env=env)
        extra = tmp / "pulled.md"
        gen.make(
            extra,
            "realistic",
            1000,
            seed=a.seed + 2,
            salt=" (pulled)",
            start=gen.T0 + timedelta(seconds=600 * (n + 10)),
        )
        subprocess.run(ours("import", "--from", extra), cwd=other, env=env, check=True, capture_output=True)
        git("-C", other, "push", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", env=env)
        a_dir, b_dir = tmp / "pull-a", tmp / "pull-b"

        def copies():
            for d in (a_dir, b_dir):
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(repo, d, symlinks=True)
                git("-C", d, "remote", "add", "origin", remote, env=env)

        pull, fetch = [], []
        for _ in range(a.runs):
            copies()
            pull.append(measure(ours("pull", "origin"), a_dir, env, 1, timeout=a.timeout))
            fetch.append(
                measure(
                    ["git", "fetch", "-q", "origin", "+refs/lifeline/*:refs/remotes/origin/lifeline/*"],
                    b_dir,
                    env,
                    1,
                    timeout=a.timeout,
                )
            )
        for d in (a_dir, b_dir, remote, other):
            shutil.rmtree(d, ignore_errors=True)
        return {"pull": _median_of(pull), "fetch": _median_of(fetch), "new_entries": 1000}

    def _hook(self, repo: Path, entry_id: str) -> dict:
        """The post-commit hook when it has nothing to say, and when it reminds."""
        env, a = self.env, self.args
        subprocess.run(ours("hooks", "install"), cwd=repo, env=env, check=True, capture_output=True)
        hook = repo / ".git" / "hooks" / "post-commit"
        if not hook.exists():
            raise Failed("git lifeline hooks install wrote no post-commit hook")
        empty = self.tmp / "no-hooks"
        empty.mkdir(exist_ok=True)
        linked = ["commit", "-q", "--allow-empty", "-m", "work", "-m", f"Lifeline: {entry_id[:12]}"]
        with_hook, without = measure_many(
            [["git", *linked], ["git", "-c", f"core.hooksPath={empty}", *linked]], repo, env, a.runs
        )
        direct = run_once([hook], repo, env)
        silent = self.m([hook], repo)
        git(
            "-C", repo, "-c", f"core.hooksPath={empty}", "commit", "-q", "--allow-empty", "-m", "unlinked work", env=env
        )
        remind_run = run_once([hook], repo, env)
        remind = self.m([hook], repo)
        return {
            "silent": silent,
            "silent_output": (direct.out + direct.err).strip(),
            "commit_with_hook": with_hook.to_json(),
            "commit_without_hook": without.to_json(),
            "remind": remind,
            "remind_output": (remind_run.out + remind_run.err).strip()[:300],
        }

    # ---- pathological ledgers ---------------------------------------------------------------
    def pathological(self, scenario: str, n: int) -> dict:
        tmp, env = self.tmp, self.env
        res: dict = {"scenario": scenario, "n": n, "load_average": load_average()}
        src = tmp / f"{scenario}-{n}.md"
        res["ledger"] = gen.make(src, scenario, n, seed=self.args.seed)
        repo, proj = tmp / f"repo-{scenario}-{n}", tmp / f"proj-{scenario}-{n}"
        db = proj / "ledger.db"
        res["import"] = self.m(ours("import", "--from", src), repo, 1, lambda: fresh_repo(repo, env))
        res["migrate"] = self.m(theirs(db, "migrate", "--from", src), proj, 1, lambda: fresh_dir(proj), seed=True)
        cold_runs = self.args.cold_runs
        res["context_cold"] = self.m(ours("context"), repo, cold_runs, lambda: drop_cache(repo))
        if res["context_cold"]["s"] is not None:
            run_once(ours("context"), repo, env, self.args.timeout)
            res["context_warm"] = self.m(ours("context"), repo)
        res["seed_context"] = self.m(theirs(db, "context"), proj, cold_runs, seed=True)
        shutil.rmtree(proj, ignore_errors=True)
        shutil.rmtree(repo, ignore_errors=True)
        return res


def _median_of(timings: list) -> dict:
    import statistics

    done = [t for t in timings if t.seconds is not None]
    if not done:
        return {"s": None, "timed_out_after_s": timings[0].timed_out if timings else None}
    return {
        "s": round(statistics.median(t.seconds for t in done), 4),
        "cpu_s": round(statistics.median(t.cpu for t in done), 4),
        "rss_kb": max(t.rss_kb for t in done),
        "runs": [round(t.seconds, 4) for t in done],
    }


def _ints(text: str) -> list:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="ledgers of --scenario (entries); '' for none")
    ap.add_argument(
        "--scenario",
        default="realistic",
        choices=("realistic", "plain"),
        help="the shape of the --sizes ledgers (plain: the earlier benchmarks' chain of eight kinds)",
    )
    ap.add_argument("--chains", default="1000,10000", help="one decision revised N times; '' for none")
    ap.add_argument("--pairs", default="1000,10000", help="N decision+correction pairs; '' for none")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (the median is reported)")
    ap.add_argument("--import-runs", type=int, default=3, help="runs of import/migrate per size")
    ap.add_argument("--cold-runs", type=int, default=3, help="runs of a pathological ledger's context")
    ap.add_argument("--older", type=int, default=200, help="older entries merged for the 'context merge' figure")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a command is killed")
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed")
    ap.add_argument(
        "--skip",
        default="",
        help=f"comma-separated groups to skip: {', '.join(GROUPS)} (seed: every lifeline-context figure but migrate)",
    )
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    ap.add_argument("--md", type=Path, default=None, help="also write the markdown tables")
    args = ap.parse_args()
    results: dict = {
        "machine": machine(),
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "sizes": [],
        "pathological": [],
    }

    def save() -> None:
        if args.out:
            args.out.write_text(json.dumps(results, indent=1) + "\n")

    with tempfile.TemporaryDirectory(prefix="lifeline-bench-") as d:
        tmp = Path(d)
        b = Bench(tmp, hermetic_env(tmp), args)
        for n in _ints(args.sizes):
            print(f"# {args.scenario} ledger of {n} entries", file=sys.stderr, flush=True)
            results["sizes"].append(b.size(n))
            save()
        for scenario, sizes in (("chain", args.chains), ("pairs", args.pairs)):
            for n in _ints(sizes):
                print(f"# {scenario} {n}", file=sys.stderr, flush=True)
                results["pathological"].append(b.pathological(scenario, n))
                save()
    results["machine"]["load_average_at_end"] = load_average()
    save()
    md = report.render(results)
    if args.md:
        args.md.write_text(md)
    print(md)


if __name__ == "__main__":
    main()
