"""Fit and cross-validate recall's answer/refuse decision (views/recall_answer.py) on the
blind tuning sets: leave one domain out at a time.

    python bench/eval_decision.py dump --model DIR --out FEATURES.pkl   # candidates and features
    python bench/eval_decision.py fit FEATURES.pkl                      # coefficients, CV figures

`dump` asks every question of every tuning set through `recall_answer.ranked` (the code the
decision runs) and keeps each candidate's features and whether it carries one of the
question's topics. `fit` fits a logistic model per engine (numpy, Newton steps, a small L2
penalty) on the candidates of six domains, picks the floor on those six, and scores the
seventh; it prints the per-domain figures and the coefficients fitted on all seven.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_blind  # noqa: E402

TESTS_DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
# Every blind set: all are tuning data since issue 29's fifth pass (docs/RECALL.md).
DOMAINS = ("blind",) + tuple(sorted(p.name for p in TESTS_DATA.glob("blind_*") if p.is_dir()))
KEEP = 40  # candidates kept per question, in the ranking's order (the decision reads the best few)


def dump(model: str | None, out: Path, domains: tuple[str, ...]) -> None:
    from git_lifeline.views import recall_answer

    data: dict = {}
    for domain in domains:
        entries, questions = eval_blind.load((TESTS_DATA / domain).resolve())
        with tempfile.TemporaryDirectory() as d:
            engines = {"lexical": eval_blind.fresh_ledger(Path(d) / "lexical")}
            ids = eval_blind.build(engines["lexical"], entries)
            if model:
                engines["semantic"] = eval_blind.fresh_ledger(Path(d) / "semantic", model)
                eval_blind.build(engines["semantic"], entries)
            for engine, led in engines.items():
                db = led.cache().ensure(led.store.head())
                index = led.semantic_index() if engine == "semantic" else None
                width = len(recall_answer.SEMANTIC_FEATURES if index else recall_answer.LEXICAL_FEATURES)
                rows = []
                for q in questions:
                    got = recall_answer.ranked(db, q["q"], semantic=index)
                    relevant = eval_blind.relevant(entries, ids, q)
                    top = got.hits[:KEEP]
                    rows.append(
                        {
                            "id": q["id"],
                            "file": q["file"],
                            "refuse": eval_blind.must_refuse(q),
                            "x": np.array(got.rows[:KEEP], dtype=float).reshape(len(top), width),
                            "relevant": np.array([h.id in relevant for h in top], dtype=bool),
                        }
                    )
                data[(domain, engine)] = rows
                print(domain, engine, len(rows), file=sys.stderr)
    out.write_bytes(pickle.dumps(data))


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Weighted logistic regression by Newton's method; returns (intercept, coefficients...)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ beta, -60, 60)))
        grad = a.T @ (w * (p - y)) + penalty * beta
        hess = (a * (w * p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def training_rows(questions: list, use: list[int], depth: int) -> tuple:
    """Candidate rows: the relevant candidates among an answerable question's first `depth`
    (label 1) and the first `depth` of a question to refuse (label 0); each question weighs 1
    in all, and each domain's refusals weigh as much as its answers."""
    xs, ys, ws = [], [], []
    for q in questions:
        x = q["x"][:depth, use]
        if not len(x):
            continue
        if q["refuse"]:
            xs.append(x)
            ys.append(np.zeros(len(x)))
            ws.append(np.full(len(x), q["weight"] / len(x)))
        else:
            rel = q["relevant"][:depth]
            if rel.any():
                xs.append(x[rel])
                ys.append(np.ones(rel.sum()))
                ws.append(np.full(rel.sum(), q["weight"] / rel.sum()))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def evaluate(questions: list, beta: np.ndarray, use: list[int], floor: float, weak: float | None) -> tuple:
    """hit@5 and abstention of the decision: answered when a candidate reaches `floor`; the
    hits shown are the ranking's, those below `floor - weak` left out (semantic)."""
    hit = ans = ref = ok = 0
    for q in questions:
        x = q["x"][:, use]
        p = 1.0 / (1.0 + np.exp(-np.clip(beta[0] + x @ beta[1:], -60, 60))) if len(x) else np.zeros(0)
        answered = len(p) and p.max() + 1e-9 >= floor
        if q["refuse"]:
            ref += 1
            ok += not answered
            continue
        ans += 1
        if answered:
            shown = q["relevant"] if weak is None else q["relevant"][p >= floor - weak]
            hit += bool(shown[:5].any())
    return hit / max(ans, 1), ok / max(ref, 1), hit, ok


def choose_floor(by_domain: dict, beta: np.ndarray, use: list[int], weak: float | None, aim: float) -> float:
    """The floor that maximises the mean hit@5 over the domains while their mean abstention
    reaches `aim`."""
    best = (-1.0, 0.5)
    for floor in np.arange(0.05, 0.96, 0.01):
        figures = [evaluate(qs, beta, use, floor, weak) for qs in by_domain.values()]
        hit5 = float(np.mean([f[0] for f in figures]))
        abst = float(np.mean([f[1] for f in figures]))
        if abst >= aim and hit5 > best[0]:
            best = (hit5, float(floor))
    return best[1]


def weigh(questions: list) -> list:
    answerable = sum(1 for q in questions if not q["refuse"]) or 1
    refuse = sum(1 for q in questions if q["refuse"]) or 1
    for q in questions:
        q["weight"] = 0.5 / refuse if q["refuse"] else 0.5 / answerable
    return questions


def cross_validate(
    data: dict, engine: str, use: list[int], depth: int, aim: float, weak: float | None, l2: float
) -> None:
    domains = [d for d, e in data if e == engine]
    by_domain = {d: weigh(data[(d, engine)]) for d in domains}
    print(f"{engine}: features {use}, depth {depth}, aim {aim}, weak {weak}, l2 {l2}")
    totals = []
    for held in domains:
        train = {d: qs for d, qs in by_domain.items() if d != held}
        x, y, w = training_rows([q for qs in train.values() for q in qs], use, depth)
        beta = fit_logistic(x, y, w, l2)
        floor = choose_floor(train, beta, use, weak, aim)
        h5, ab, _, _ = evaluate(by_domain[held], beta, use, floor, weak)
        totals.append((h5, ab))
        print(f"  held out {held:18} hit@5 {h5:.3f} abstention {ab:.3f} (floor {floor:.2f})")
    print(
        f"  mean over held-out domains: hit@5 {np.mean([t[0] for t in totals]):.3f} "
        f"abstention {np.mean([t[1] for t in totals]):.3f}"
    )
    x, y, w = training_rows([q for qs in by_domain.values() for q in qs], use, depth)
    beta = fit_logistic(x, y, w, l2)
    floor = choose_floor(by_domain, beta, use, weak, aim)
    print("  fitted on all:", tuple(round(float(b), 3) for b in beta), "floor", round(floor, 2))
    for d, qs in by_domain.items():
        h5, ab, hit, ok = evaluate(qs, beta, use, floor, weak)
        print(f"    in-sample {d:18} hit@5 {h5:.3f} ({hit}) abstention {ab:.3f} ({ok})")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--model")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--domains", nargs="*", default=list(DOMAINS))
    f = sub.add_parser("fit")
    f.add_argument("features", type=Path)
    f.add_argument("--engine", default="lexical")
    f.add_argument("--use", default="0,1,2,3,4", help="feature columns, comma separated")
    f.add_argument("--depth", type=int, default=5)
    f.add_argument("--aim", type=float, default=0.88)
    f.add_argument("--weak", type=float, default=None)
    f.add_argument("--l2", type=float, default=1.0)
    f.add_argument("--beta", help="evaluate these coefficients (comma separated) at --floor instead of fitting")
    f.add_argument("--floor", type=float, default=0.5)
    args = ap.parse_args()
    if args.cmd == "dump":
        for k, v in (("GIT_AUTHOR_NAME", "Eval"), ("GIT_AUTHOR_EMAIL", "eval@example.com")):
            os.environ.setdefault(k, v)
        os.environ.setdefault("GIT_COMMITTER_NAME", "Eval")
        os.environ.setdefault("GIT_COMMITTER_EMAIL", "eval@example.com")
        dump(args.model, args.out, tuple(args.domains))
    else:
        data = pickle.loads(args.features.read_bytes())
        use = [int(c) for c in args.use.split(",")]
        if args.beta:
            beta = np.array([float(b) for b in args.beta.split(",")])
            for (domain, engine), qs in data.items():
                if engine == args.engine:
                    h5, ab, hit, ok = evaluate(qs, beta, use, args.floor, args.weak)
                    print(f"{domain:18} hit@5 {h5:.3f} ({hit}) abstention {ab:.3f} ({ok})")
            return
        cross_validate(data, args.engine, use, args.depth, args.aim, args.weak, args.l2)


if __name__ == "__main__":
    sys.exit(main())
