"""The side-by-side benchmark: git-lifeline against lifeline-context 0.6.1, same content.

    python bench/bench.py [--sizes 1000,10000,100000] [--runs 5] [--out results.json]

Run by hand (never in CI). For each size one chained ledger of realistic entries
(bench_import.make_file: varied kinds, multi-line bodies) is written in
lifeline-context's LIFELINE.md format, then imported by `git lifeline import` and
by `lifeline migrate` (the real lifeline-context from LIFELINE_SEED_PYTHON or
.venv-seed/). Every figure is a whole CLI process, interpreter start included,
as the median of --runs; ratios compare figures of the same run.

Measured: `log` (cold process) and the floor (a cold interpreter importing pygit2,
pydantic and click and writing one blob+tree+commit); `context` warm and cold
(cold: the cache under the git dir deleted first); `context --query` and `recall`;
`verify` (entries/s); import/migrate (entries/s); `git lifeline pull` of 1,000 new
entries next to a plain `git fetch` of the same objects; peak RSS of `context`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import import hermetic_env, make_file, seed_python  # noqa: E402

QUERY = "component risk decision"
FLOOR = ("import pygit2, pydantic, click, sys\n"
         "r = pygit2.Repository(sys.argv[1])\n"
         "b = r.create_blob(b'{}\\n'); tb = r.TreeBuilder(); tb.insert('x', b, pygit2.GIT_FILEMODE_BLOB)\n"
         "s = pygit2.Signature('b', 'b@e', 0, 0); r.create_commit(None, s, s, 'm', tb.write(), [])\n")


def run(cmd, cwd, env, check=True) -> tuple:
    """(seconds, peak RSS in KB of the process) for one command."""
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if check and proc.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    rss = int(proc.stderr.strip().splitlines()[-1]) if proc.stderr.strip() else 0
    return elapsed, rss


def median(cmd, cwd, env, runs, before=None) -> tuple:
    times, rss = [], []
    for _ in range(runs):
        if before:
            before()
        t, m = run(cmd, cwd, env)
        times.append(t)
        rss.append(m)
    return statistics.median(times), max(rss)


def ours(*args):
    return [sys.executable, "-m", "git_lifeline", *args]


def theirs(*args):
    return [seed_python(), "-m", "lifeline.cli", *args]


def bench_size(n: int, tmp: Path, env: dict, runs: int) -> dict:
    res: dict = {"entries": n}
    src = tmp / f"LIFELINE-{n}.md"
    make_file(src, n)
    repo, proj = tmp / f"repo-{n}", tmp / f"proj-{n}"
    repo.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "config", "lifeline.projection", "false"], check=True, env=env)
    seed_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    t, _ = run(ours("import", "--from", str(src)), repo, env)
    res["import_rate"] = n / t
    t, _ = run(theirs("migrate", "--from", str(src)), proj, seed_env)
    res["seed_migrate_rate"] = n / t
    subprocess.run(["git", "-C", str(repo), "gc", "-q"], check=True, env=env)

    cache = repo / ".git" / "lifeline"
    res["context_cold"], res["context_cold_rss_kb"] = median(
        ours("context"), repo, env, max(1, runs // 2), before=lambda: shutil.rmtree(cache, ignore_errors=True))
    res["context_warm"], res["context_warm_rss_kb"] = median(ours("context"), repo, env, runs)
    res["seed_context"], res["seed_context_rss_kb"] = median(theirs("context"), proj, seed_env, runs)
    res["context_query_warm"], _ = median(ours("context", "--query", QUERY), repo, env, runs)
    res["seed_context_query"], _ = median(theirs("context", "--query", QUERY), proj, seed_env, runs)
    res["recall_warm"], _ = median(ours("recall", QUERY), repo, env, runs)
    res["seed_recall"], _ = median(theirs("recall", QUERY), proj, seed_env, runs)
    t, _ = median(ours("verify"), repo, env, max(1, runs // 2))
    res["verify_rate"] = n / t
    res["floor"], _ = median([sys.executable, "-c", FLOOR, str(tmp / "floor")], tmp, env, runs)
    res["log"], _ = median(ours("log", "--kind", "note", "--summary", f"bench {time.time()}", "--body", "why"),
                           repo, env, runs)
    res["seed_log"], _ = median(theirs("log", "--kind", "note", "--summary", f"bench {time.time()}",
                                       "--body", "why"), proj, seed_env, runs)
    res["help"], _ = median(ours("-h"), repo, env, runs)
    res["pull_1000"], res["fetch_1000"] = bench_pull(repo, tmp, env, runs, n)
    return res


def bench_pull(repo: Path, tmp: Path, env: dict, runs: int, n: int) -> tuple:
    """Pull 1,000 new entries into a copy of `repo`, next to a plain git fetch of them."""
    probe = subprocess.run(ours("pull", "-h"), cwd=repo, env=env, capture_output=True)
    if probe.returncode != 0:
        return None, None  # sync not available in this build
    remote = tmp / f"remote-{n}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(remote)], check=True, env=env)
    subprocess.run(["git", "-C", str(remote), "fetch", "-q", str(repo), "refs/lifeline/*:refs/lifeline/*"],
                   check=True, env=env)
    other = tmp / f"other-{n}"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True, env=env)
    subprocess.run(["git", "-C", str(other), "fetch", "-q", "origin", "refs/lifeline/*:refs/lifeline/*"],
                   check=True, env=env)
    extra = tmp / f"extra-{n}.md"
    make_file(extra, 1000, salt="pull")
    subprocess.run(ours("import", "--from", str(extra)), cwd=other, env=env, check=True, capture_output=True)
    subprocess.run(["git", "-C", str(other), "push", "-q", "origin", "refs/lifeline/*:refs/lifeline/*"],
                   check=True, env=env)
    pulls, fetches = [], []
    for i in range(runs):
        a = tmp / f"pull-{n}-{i}"
        b = tmp / f"fetch-{n}-{i}"
        for d in (a, b):
            shutil.copytree(repo, d, symlinks=True)
            subprocess.run(["git", "-C", str(d), "remote", "add", "origin", str(remote)], env=env,
                           capture_output=True)
        t, _ = run(ours("pull", "origin"), a, env)
        pulls.append(t)
        t, _ = run(["git", "fetch", "-q", "origin", "+refs/lifeline/*:refs/remotes/origin/lifeline/*"], b, env)
        fetches.append(t)
        shutil.rmtree(a)
        shutil.rmtree(b)
    return statistics.median(pulls), statistics.median(fetches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        env = hermetic_env(tmp)
        (tmp / "floor").mkdir()
        subprocess.run(["git", "init", "-q", str(tmp / "floor")], check=True, env=env)
        for n in (int(x) for x in args.sizes.split(",")):
            res = bench_size(n, tmp, env, args.runs)
            results.append(res)
            print(json.dumps(res), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
