"""Recall quality on the blind set (tests/data/blind/): a ledger and questions written apart.

The ledger (ledger.json) was written by one helper from a topic list; the questions
(questions.json) by another who saw only that topic list, never an entry. A question is
answered when one of its top-k hits is an entry labelled with one of the question's topics;
an "abstain" question (a topic the ledger never covers) is answered correctly by nothing.

Three question files, each written by a helper from topics.md alone: questions.json (ids
q001..) and questions_fresh.json (h001..) — the floors were chosen on these two (split
`tune`) — and questions_held_out.json (g001..), written afterwards and never tuned on
(split `held-out`: docs/RECALL.md reports it), and questions_later.json (k001..), written
at the end of the round and run once to measure the same settings again (split `later`).
The next round widened the vocabulary from the misses of all four, measured it once on two
files written afterwards (questions_m.json, questions_n.json: split `mn`), then chose the
abstention rule on all six and measured it once on two more files written after that
choice (questions_o.json, questions_p.json: split `op`). The third round widened the
vocabulary again from the misses of all eight and kept the rule they chose, then measured it
once on four files written afterwards (questions_r/s/t/u.json: split `rstu`), then chose the
rule again on all twelve (one criterion per engine) and measured it once on four more files
written meanwhile (questions_v/w/x/y.json: split `report`).
Usage:

    python bench/eval_blind.py [--model DIR] [--seed-python PATH] [--split tune|held-out|later|mn|op|rstu|report|all]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The checkout this script is in, before any installed git_lifeline: run from a worktree, it
# measures that worktree's recall (the tests do the same), not the installed copy's.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "blind"


def load(data: Path = DATA) -> tuple:
    """The ledger and every question file of a blind set, each question marked with its file.
    Another domain's set (`--data`) is every questions*.json of its directory."""
    ledger = json.loads((data / "ledger.json").read_text(encoding="utf-8"))
    if data != DATA:
        questions = []
        for path in sorted(data.glob("questions*.json")):
            questions += [{**q, "file": path.stem} for q in json.loads(path.read_text(encoding="utf-8"))]
        return ledger, questions
    questions = [{**q, "file": "questions"} for q in json.loads((DATA / "questions.json").read_text(encoding="utf-8"))]
    for name in (
        "questions_fresh.json",
        "questions_held_out.json",
        "questions_later.json",
        "questions_m.json",
        "questions_n.json",
        "questions_o.json",
        "questions_p.json",
        "questions_r.json",
        "questions_s.json",
        "questions_t.json",
        "questions_u.json",
        "questions_v.json",
        "questions_w.json",
        "questions_x.json",
        "questions_y.json",
    ):
        if not (DATA / name).exists():
            continue
        questions += [{**q, "file": name[:-5]} for q in json.loads((DATA / name).read_text(encoding="utf-8"))]
    return ledger, questions


SPLITS = ("tune", "held-out", "later", "mn", "op", "rstu", "report")


def split_of(q: dict) -> str:
    return {
        "g": "held-out",
        "k": "later",
        "m": "mn",
        "n": "mn",
        "o": "op",
        "p": "op",
        "r": "rstu",
        "s": "rstu",
        "t": "rstu",
        "u": "rstu",
        "v": "report",
        "w": "report",
        "x": "report",
        "y": "report",
    }.get(q["id"][0], "tune")


def in_split(q: dict, split: str) -> bool:
    return split == "all" or split_of(q) == split or q.get("file") == split


def must_refuse(q: dict) -> bool:
    """A question about a topic the ledger never covers: "abstain", or a "near_miss" that shares
    words with real entries (the later domains' files mark those apart)."""
    return q["type"] in ("abstain", "near_miss")


def build(ledger_obj, entries: list) -> dict:
    """Append the set's entries to a Ledger; returns label -> entry id."""
    from git_lifeline.app.draft import Draft

    ids: dict = {}
    for e in entries:
        out = ledger_obj.log(
            Draft(
                kind=e["kind"],
                summary=e["summary"],
                body=e.get("body", ""),
                parents=tuple(ids[p] for p in e.get("parents", [])),
                author=e.get("author"),
                ts=e["ts"],
            )
        )
        ids[e["label"]] = out.entry.id
    return ids


def relevant(entries: list, ids: dict, q: dict) -> set:
    topics = set(q.get("topics") or [])
    return {ids[e["label"]] for e in entries if topics & set(e.get("topics") or [])}


def score(results: dict, entries: list, ids: dict, questions: list, split: str) -> dict:
    """results: question id -> ranked entry ids."""
    chosen = [q for q in questions if in_split(q, split)]
    answerable = [q for q in chosen if not must_refuse(q)]
    refuse = [q for q in chosen if must_refuse(q)]
    h1 = sum(1 for q in answerable if results[q["id"]][:1] and results[q["id"]][0] in relevant(entries, ids, q))
    h5 = sum(1 for q in answerable if set(results[q["id"]][:5]) & relevant(entries, ids, q))
    answered = sum(1 for q in answerable if results[q["id"]])
    ab = sum(1 for q in refuse if not results[q["id"]])
    return {
        "split": split,
        "answerable": len(answerable),
        "must_abstain": len(refuse),
        "hit@1": round(h1 / len(answerable), 3),
        "hit@5": round(h5 / len(answerable), 3),
        "answered": round(answered / len(answerable), 3),
        "abstention": round(ab / len(refuse), 3) if refuse else 1.0,
        "misses": [q["id"] for q in answerable if not set(results[q["id"]][:5]) & relevant(entries, ids, q)],
        "false_alarms": [q["id"] for q in refuse if results[q["id"]]],
    }


def ours(ledger_obj, questions: list, k: int = 5) -> dict:
    return {q["id"]: [h.id for h in ledger_obj.recall(q["q"], k=k)] for q in questions}


_SEED_SCRIPT = r"""
import asyncio, json, sys
from lifeline.cli import cmd_recall
db, k = sys.argv[1], int(sys.argv[2])
questions = json.load(sys.stdin)
out = {}
for q in questions:
    hits = asyncio.run(cmd_recall(db, q["q"], k))
    ids = []
    for h in hits:
        e = h.get("entry") if isinstance(h, dict) else getattr(h, "entry", h)
        i = (e.get("id") if isinstance(e, dict) else getattr(e, "id", None)) if e is not None else None
        ids.append(i or (h.get("id") if isinstance(h, dict) else None))
    out[q["id"]] = [i for i in ids if i]
json.dump(out, sys.stdout)
"""


def seed(seed_python: str, markdown: str, questions: list, k: int = 5) -> dict:
    """lifeline-context 0.6.1's recall on the same ledger (its own migrate of our export)."""
    with tempfile.TemporaryDirectory() as d:
        md = Path(d) / "LIFELINE.md"
        md.write_text(markdown, encoding="utf-8")
        db = str(Path(d) / "ledger.db")
        subprocess.run(
            [seed_python, "-m", "lifeline", "--db", db, "migrate", "--from", str(md)],
            check=True,
            capture_output=True,
            cwd=d,
        )
        proc = subprocess.run(
            [seed_python, "-c", _SEED_SCRIPT, db, str(k)],
            input=json.dumps(questions),
            capture_output=True,
            text=True,
            check=True,
            cwd=d,
        )
        return json.loads(proc.stdout)


def fresh_ledger(workdir: Path, model: str | None = None):
    from git_lifeline.app.workspace import Workspace

    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    subprocess.run(["git", "-C", str(workdir), "config", "lifeline.projection", "off"], check=True)
    if model:
        subprocess.run(["git", "-C", str(workdir), "config", "lifeline.semantic.model", model], check=True)
    return Workspace.open(str(workdir)).ledger()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="a sentence-transformers model directory (semantic recall)")
    ap.add_argument(
        "--seed-python",
        default=os.environ.get("LIFELINE_SEED_PYTHON"),
        type=lambda p: os.path.abspath(p) if os.sep in p else (shutil.which(p) or p),
    )
    ap.add_argument("--split", default="all", help=f"one of {', '.join(SPLITS)}, all, or a question file's name")
    ap.add_argument("--data", type=Path, default=DATA, help="a blind set's directory (default: tests/data/blind)")
    ap.add_argument("--by-file", action="store_true", help="a row per question file")
    args = ap.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "Eval")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "eval@example.com")
    os.environ.setdefault("GIT_COMMITTER_NAME", "Eval")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "eval@example.com")
    entries, questions = load(args.data.resolve())
    if args.by_file:
        splits = sorted({q["file"] for q in questions})
    elif args.split == "all":
        splits = (
            [s for s in SPLITS if any(split_of(q) == s for q in questions)] if args.data.resolve() == DATA else ["all"]
        )
    else:
        splits = [args.split]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        led = fresh_ledger(Path(d) / "lexical")
        ids = build(led, entries)
        t = time.perf_counter()
        res = ours(led, questions)
        ms = (time.perf_counter() - t) * 1000 / len(questions)
        for split in splits:
            rows.append(("git-lifeline lexical", score(res, entries, ids, questions, split), ms))
        if args.model:
            sem = fresh_ledger(Path(d) / "semantic", args.model)
            build(sem, entries)
            sem.recall("warm up the model", k=1)
            t = time.perf_counter()
            res = ours(sem, questions)
            ms = (time.perf_counter() - t) * 1000 / len(questions)
            for split in splits:
                rows.append(("git-lifeline semantic", score(res, entries, ids, questions, split), ms))
        if args.seed_python:
            from git_lifeline.app import interop

            res = seed(args.seed_python, interop.export_seed(led), questions)
            for split in splits:
                rows.append(("lifeline-context 0.6.1", score(res, entries, ids, questions, split), None))
    for name, r, ms in rows:
        per = f"{ms:.1f} ms/query" if ms is not None else ""
        print(
            f"{name:24} {r['split']:6} hit@1 {r['hit@1']:.2f} hit@5 {r['hit@5']:.2f} "
            f"abstention {r['abstention']:.2f} ({r['answerable']} answerable, {r['must_abstain']} must abstain) {per}"
        )
        print(f"{'':24} misses {r['misses']} false alarms {r['false_alarms']}")


if __name__ == "__main__":
    sys.exit(main())
