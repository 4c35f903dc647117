"""The floor under `git lifeline verify`: what reading, parsing and hashing every entry costs
with nothing else around it, in one process.

    python bench/verify_floor.py REPO [--line main]

Reads every blob of refs/lifeline/<line> with `git ls-tree -r` and one `git cat-file
--batch`, splits the output, `json.loads` each blob, builds its canonical form and
sha256s it (and checks that equals the stored id). Prints each stage's CPU (this
process, and git's), so verify's figures can be put against it (docs/PERFORMANCE.md,
"Verify, issue 30"), and what starting an interpreter costs (`python -c pass`, and with
the imports any verify needs: pygit2 through the package's one door, git/libgit2.py),
which a whole `verify` process pays on top. Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> tuple:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _canonical(doc: dict) -> bytes:
    fields = [doc[k] for k in ("kind", "author", "agent", "provider", "model", "summary")]
    fields += [doc["body"].strip(), *sorted(doc["parents"])]
    return "".join(["v2\n", *(f"{len(v.encode())}:{v}\n" for v in fields)]).encode()


def start_cpu(code: str, runs: int = 5) -> float:
    """The least CPU (user + system) of `runs` interpreters that run `code` and exit."""
    best = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("--line", default="main")
    a = ap.parse_args()
    wall, t0 = time.perf_counter(), _cpu()
    listing = subprocess.run(
        ["git", "-C", a.repo, "ls-tree", "-r", f"refs/lifeline/{a.line}"], capture_output=True, check=True
    ).stdout
    oids = [line.split()[2] for line in listing.splitlines()]
    t1 = _cpu()
    out = subprocess.run(
        ["git", "-C", a.repo, "cat-file", "--batch"], input=b"\n".join(oids) + b"\n", capture_output=True, check=True
    ).stdout
    t2 = _cpu()
    blobs, pos = [], 0
    while pos < len(out):
        nl = out.index(b"\n", pos)
        size = int(out[out.rindex(b" ", pos, nl) + 1 : nl])
        blobs.append(out[nl + 1 : nl + 1 + size])
        pos = nl + 2 + size
    t3 = _cpu()
    docs = [json.loads(b) for b in blobs]
    t4 = _cpu()
    bad = sum(hashlib.sha256(_canonical(d)).hexdigest() != d["id"] for d in docs)
    t5 = _cpu()
    print(
        f"{len(blobs)} blobs ({bad} not matching their id): git ls-tree {t1[1] - t0[1]:.3f} s, "
        f"git cat-file {t2[1] - t1[1]:.3f} s; split {t3[0] - t2[0]:.3f} s, json {t4[0] - t3[0]:.3f} s, "
        f"canonical form + sha256 {t5[0] - t4[0]:.3f} s; this process {t5[0]:.3f} s, git {t5[1]:.3f} s, "
        f"in all {t5[0] + t5[1]:.3f} s CPU, {time.perf_counter() - wall:.3f} s wall"
    )
    bare = start_cpu("pass")
    imports = start_cpu("import git_lifeline.git.libgit2")
    print(
        f"start-up: `python -c pass` {bare:.3f} s CPU, with pygit2 imported {imports:.3f} s; "
        f"the floor of a whole process: {t5[0] + t5[1] + imports - bare:.3f} s CPU"
    )


if __name__ == "__main__":
    main()
