"""What semantic recall's first question costs in a fresh process, model load included.

    python bench/bench_recall_first_question.py --model DIR [--size 10000] [--runs 5]

Builds a realistic ledger of --size entries (bench/gen.py, imported with `git lifeline
import`), embeds it once (the cost a ledger pays entry by entry as it grows, not per
question), then starts a fresh Python process per run that opens the ledger and asks one
question: the time from before the first import of git_lifeline to the answer, and the same
for `git lifeline recall` as a whole process. docs/RECALL.md gives the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

_ASK = r"""
import sys, time
t = time.perf_counter()
from git_lifeline.app.workspace import Workspace
led = Workspace.open(sys.argv[1]).ledger()
hits = led.recall(sys.argv[2], k=5)
print(time.perf_counter() - t, len(hits), led.recall_mode[0])
"""
# The same, in parts: import, the state, the model (numpy and the weights), the question;
# wall time, then CPU time (the machine is shared: CPU time is what the process itself cost).
_PARTS = r"""
import sys, time
c, t = time.process_time(), time.perf_counter()
from git_lifeline.app.workspace import Workspace
c1, t1 = time.process_time(), time.perf_counter()
led = Workspace.open(sys.argv[1]).ledger()
led.state()
c2, t2 = time.process_time(), time.perf_counter()
led.semantic_index()
c3, t3 = time.process_time(), time.perf_counter()
led.recall(sys.argv[2], k=5)
c4, t4 = time.process_time(), time.perf_counter()
print(t1 - t, t2 - t1, t3 - t2, t4 - t3, c1 - c, c2 - c1, c3 - c2, c4 - c3)
"""


def store_random_vectors(repo: Path, model: Path) -> None:
    """A vector per entry as semantic recall stores it (views/semantic.py), drawn at random."""
    import numpy as np

    from git_lifeline.app.workspace import Workspace
    from git_lifeline.views import semantic

    led = Workspace.open(str(repo)).ledger()
    db = led.cache().ensure(led.store.head())
    ids = [r[0] for r in db.execute("SELECT id FROM entries WHERE ok = 1")]
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((len(ids), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    db.execute(semantic._TABLE)
    fingerprint = semantic.fingerprint(model)
    db.executemany(
        "INSERT OR REPLACE INTO vectors(id, model, v) VALUES (?, ?, ?)",
        [(i, fingerprint, v.tobytes()) for i, v in zip(ids, vectors, strict=True)],
    )
    db.commit()
    led.cache().restamp()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--question", default="how do couriers sign in on their phones")
    ap.add_argument("--keep", type=Path, help="build the ledger here and keep it (for profiling)")
    ap.add_argument(
        "--random-vectors",
        action="store_true",
        help="store random unit vectors instead of embedding every entry (same cost per question, minutes less)",
    )
    args = ap.parse_args()
    args.model = str(Path(args.model).resolve())  # the repository's config is read from its own directory
    import gen

    # An installed package has its bytecode; a checkout run with PYTHONDONTWRITEBYTECODE
    # compiles 64 modules in every process (0.65 s measured on a loaded host).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "git_lifeline")], check=True, capture_output=True
    )
    env = {**os.environ, "GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env.update(GIT_COMMITTER_NAME="B", GIT_COMMITTER_EMAIL="b@example.com", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        repo = Path(d) / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "config", "lifeline.projection", "off"], check=True)
        src = Path(d) / "LIFELINE.md"
        gen.make(src, "realistic", args.size, seed=1)
        ours = [sys.executable, "-m", "git_lifeline"]
        subprocess.run([*ours, "import", "--from", str(src)], cwd=repo, env=env, check=True, capture_output=True)
        subprocess.run(["git", "-C", str(repo), "config", "lifeline.semantic.model", args.model], check=True)
        if args.random_vectors:
            store_random_vectors(repo, Path(args.model))
        t = time.perf_counter()
        subprocess.run([*ours, "recall", "warm the vectors"], cwd=repo, env=env, check=True, capture_output=True)
        embed_all = time.perf_counter() - t
        in_process, whole, parts = [], [], []
        for _ in range(args.runs):
            parts.append(
                [
                    float(x)
                    for x in subprocess.run(
                        [sys.executable, "-c", _PARTS, str(repo), args.question],
                        env=env,
                        check=True,
                        capture_output=True,
                        text=True,
                    ).stdout.split()
                ]
            )
            out = subprocess.run(
                [sys.executable, "-c", _ASK, str(repo), args.question],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            assert out[2] == "semantic", out
            in_process.append(float(out[0]))
            t = time.perf_counter()
            subprocess.run([*ours, "recall", args.question], cwd=repo, env=env, check=True, capture_output=True)
            whole.append(time.perf_counter() - t)
        print(
            json.dumps(
                {
                    "entries": args.size,
                    "embed_every_entry_once_s": round(embed_all, 1),
                    "first_question_in_process_s": {
                        "median": round(statistics.median(in_process), 3),
                        "all": in_process,
                    },
                    "recall_command_s": {"median": round(statistics.median(whole), 3), "all": whole},
                    "parts_median_s": dict(
                        zip(
                            ("import", "state", "model", "question"),
                            (round(statistics.median(p[i] for p in parts), 3) for i in range(4)),
                            strict=True,
                        )
                    ),
                    "parts_median_cpu_s": dict(
                        zip(
                            ("import", "state", "model", "question"),
                            (round(statistics.median(p[i] for p in parts), 3) for i in range(4, 8)),
                            strict=True,
                        )
                    ),
                    "first_question_cpu_s": round(statistics.median(sum(p[4:8]) for p in parts), 3),
                    "load_average": os.getloadavg()[0],
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
