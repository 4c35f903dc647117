"""`git lifeline verify` of one commit against another's, on the same ledgers, in turn,
beside lifeline-context's `verify` of the same ledger (with `--seed`).

    python bench/verify_ab.py --before <commit> [--sizes 10000,30000,50000,100000]
                              [--scenario realistic] [--runs 3] [--seed-tool] [--out verify-ab.json]
                              [--after <commit>] [--ledgers DIR]

This checkout's verify is taken twice: as the first run of a clone (its remembered
verdicts, git/verdicts.py, deleted just before: the timing includes that `rm`) and as a
later run (they are kept).

The before side is `git archive <commit> git_lifeline` unpacked in a temporary
directory; the after side is this checkout. For each size, bench/gen.py writes a ledger,
this checkout imports it into a fresh repository, and `git gc` packs it (as a clone has
it: deltified blobs in one pack). Then each side's `verify` runs in turn (before, after,
before, ...), each a whole process from bytecode (bench/harness.py: wall and CPU of the
process and its children, medians), so a change of the machine's load hits both alike.
With `--ledgers DIR` the ledgers are the generator's own, kept in DIR between runs:
`repo-N` written by `bench/gen.py --repo` (line `bench`: one pack without delta chains, as
`import` writes it) and, for `--seed-tool`, `seed-N.db` by `bench/gen.py --db` (the same
entries), each made when missing; both sides also take a first run there (verdicts
deleted). `--after <commit>` unpacks that commit as the after side, so the checkout can
change while the bench runs. Run by hand, never in CI.
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
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen  # noqa: E402
from harness import ROOT, git, hermetic_env, imported, load_average, machine, measure_many, seed_env, theirs  # noqa: E402


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


def ledgers(a: argparse.Namespace, tmp: Path, env: dict, n: int) -> tuple[Path, Optional[Path]]:
    """(repository, lifeline-context's database or None) of `n` entries: the generator's own
    under --ledgers (made when missing), else a LIFELINE.md imported and gc'd here."""
    db: Optional[Path] = None
    if a.ledgers:
        repo = a.ledgers / f"repo-{n}"
        if not repo.exists():
            git("init", "-q", str(repo), env=env)
            git("-C", repo, "config", "lifeline.projection", "false", env=env)
            gen.write_repo(repo, a.scenario, n, seed=a.seed)
        if a.seed_tool:
            db = a.ledgers / f"seed-{n}.db"
            if not db.exists():
                gen.write_db(db, a.scenario, n, seed=a.seed)
        return repo, db
    src, repo = tmp / f"ledger-{n}.md", tmp / f"repo-{n}"
    gen.make(src, a.scenario, n, seed=a.seed)
    imported(src, repo, env)
    if a.seed_tool:
        db = tmp / f"seed-{n}" / "ledger.db"
        db.parent.mkdir()
        subprocess.run(theirs(db, "migrate", "--from", src), env=seed_env(env), check=True, capture_output=True)
    return repo, db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the commit to compare this checkout with")
    ap.add_argument("--sizes", default="10000,30000,50000,100000")
    ap.add_argument("--scenario", default="realistic", choices=("realistic", "plain"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seed-tool", action="store_true", help="also lifeline-context's verify (LIFELINE_SEED_PYTHON)")
    ap.add_argument("--out", help="JSON results")
    ap.add_argument("--after", help="the commit to take as the after side (default: this checkout)")
    ap.add_argument("--ledgers", type=Path, help="keep the generator's ledgers here (gen.py --repo and --db)")
    a = ap.parse_args()
    results: dict = {"machine": machine(), "before": a.before, "scenario": a.scenario, "runs": a.runs, "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = hermetic_env(tmp)
        old = unpack(a.before, tmp / "before")
        before_env = {**env, "PYTHONPATH": str(old)}
        after_path = [f"PYTHONPATH={unpack(a.after, tmp / 'after')}"] if a.after else []
        results["after"] = a.after or "checkout"
        for n in (int(s) for s in a.sizes.split(",") if s):
            repo, db = ledgers(a, tmp, env, n)
            drop = "rm -f .git/lifeline/verdicts-*.bin; exec"
            before_py = f"env PYTHONPATH={before_env['PYTHONPATH']} {sys.executable} -m git_lifeline verify"
            after_py = f"env {' '.join(after_path)} {sys.executable} -m git_lifeline verify"
            cmds = [
                ["sh", "-c", f"{drop} {before_py}"] if a.ledgers else None,
                ["sh", "-c", f"{drop} {after_py}"],
                ["sh", "-c", f"exec {before_py}"],
                ["sh", "-c", f"exec {after_py}"],
            ]
            sides = ["before_first", "after_first", "before", "after"]
            if not a.ledgers:
                cmds, sides = cmds[1:], sides[1:]
            if db is not None:
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
                + ", ".join(
                    f"{side} {row[side]['cpu_s']} s CPU (least {row[side].get('cpu_min_s')}, "
                    f"{row[side]['s']} s wall, {row[side]['rss_kb'] // 1024} MB)"
                    for side in sides
                )
                + f", load {load} -> {row['load_after']}",
                flush=True,
            )
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
