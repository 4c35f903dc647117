"""Recall's answer to one question: the hits that answer it, each with its strength and the
score that strength stands on, or an abstention with its reason and the nearest entries
(marked as not answering).

One number per entry decides, per engine (`Answer.floor` is the bar):

- lexical: the entry's coverage (the share of the question's weight its words match) less
  UNSEEN_PENALTY times the share carried by words the ledger never uses (views/recall.py);
- semantic: a logistic model's probability that the entry answers (SEMANTIC_COEFFICIENTS
  over SEMANTIC_FEATURES: coverage, unseen share, summary share, rarest concept matched,
  lead over the next coverage, cosine, its z-score among the ledger's cosines, its lead over
  the fifth cosine, and the share it matches of the words the ledger uses), fitted leaving one
  blind domain out at a time (bench/eval_decision.py).
  One sum, so that neither a word the ledger never uses nor a low cosine vetoes the rest.

The question is answered when its best entry reaches the floor. A hit at the floor or above
is `strong` (it answers on its own); one below it but within WEAK_MARGIN (lexical: sharing
at least one of the question's words) is `weak`: related to the question, not an answer by
itself, and shown in the ranking's order. Entries below that are never shown: a ledger of two
entries does not return its bootstrap for every question. The constants were chosen on
held-out questions (docs/RECALL.md); the truth decides the order last.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from dataclasses import dataclass, field
from typing import Final, Optional

from .recall import (
    ANSWER_FLOOR,
    CANDIDATES,
    SEMANTIC_WEIGHT,
    UNSEEN_PENALTY,
    Dense,
    Hit,
    Lexical,
    Truth,
    concepts,
    lexical_evidence,
)

STRONG: Final = "strong"
WEAK: Final = "weak"
NEAREST = 3  # an abstention shows at most this many entries, as not answering
# The decision's logistic models (intercept, then one coefficient per feature), fitted with
# bench/eval_decision.py on the thirteen tuning sets (docs/RECALL.md gives the derivation).
# Semantic only: the lexical rule (coverage - UNSEEN_PENALTY * unseen >= ANSWER_FLOOR) stayed,
# no fit of the lexical features beat it leaving one domain out.
SEMANTIC_COEFFICIENTS: tuple[float, ...] = (-5.747, 4.422, -3.386, 0.393, -0.072, -5.507, 7.585, 0.301, 0.340, 2.363)
WEAK_MARGIN = 0.30  # semantic: a hit within this of the floor (in probability) is shown as weak
# A ledger of fewer entries than this has no distribution of cosines to rank a hit against
# (in two entries the z-score is +-1 and the lead over the "fifth" is over the other entry):
# there the one-sum rule decides: cosine + SMALL_LEXICAL * (coverage - UNSEEN_PENALTY *
# unseen) - SMALL_UNSEEN * unseen must reach SMALL_FLOOR, hits within SMALL_WEAK_MARGIN shown;
# a hit the lexical rule answers reaches it as well (its lexical difference, less ANSWER_FLOOR,
# above SMALL_FLOOR): in three entries "did we pick click over typer" has a cosine of 0.3.
RELATIVE_FROM = 20
SMALL_LEXICAL = 0.5
SMALL_UNSEEN = 0.4
SMALL_FLOOR = 0.43
SMALL_WEAK_MARGIN = 0.15


@dataclass
class Answer:
    """What recall says of one question. `hits` answer it (never empty unless it abstained);
    when it abstains, `reason` says why and `nearest` holds the closest entries, which do not
    answer it."""

    hits: list[Hit]
    abstained: bool
    reason: str = ""
    nearest: list[Hit] = field(default_factory=list)
    floor: float = ANSWER_FLOOR  # the answer score a strong hit reaches


LEXICAL_FEATURES = ("coverage", "unseen", "summary", "specific", "lead")
SEMANTIC_FEATURES = LEXICAL_FEATURES + ("cosine", "z", "over_fifth", "seen")


def lexical_features(found: Lexical, hits: list[Hit]) -> list[list[float]]:
    """Per hit, what the lexical decision reads (LEXICAL_FEATURES): its coverage, the unseen
    share, the share matched in its summary, whether it matches the question's rarest concept
    the ledger uses, and its coverage's lead over the best other hit's."""
    order = sorted((h.coverage for h in hits), reverse=True)
    first, second = (order + [0.0, 0.0])[:2]
    rows = []
    for h in hits:
        other = second if h.coverage == first else first
        rows.append([h.coverage, found.unseen, h.summary_coverage, 1.0 if h.specific else 0.0, h.coverage - other])
    return rows


def semantic_features(found: Lexical, hits: list[Hit], sims: dict[str, float]) -> list[list[float]]:
    """LEXICAL_FEATURES and, per hit, its cosine, that cosine's z-score against the cosines of
    every entry to this question, its lead over the fifth best cosine, and its seen share."""
    values = list(sims.values()) or [0.0]
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    fifth = heapq.nlargest(5, values)[-1]  # the fifth best, or the last of fewer
    rows = lexical_features(found, hits)
    for row, h in zip(rows, hits, strict=True):
        cosine = h.similarity or 0.0
        row += [cosine, (cosine - mean) / spread, cosine - fifth, seen_share(row[0], found.unseen)]
    return rows


def seen_share(coverage: float, unseen: float) -> float:
    """The share of the weight of the question's words the ledger uses that an entry matches:
    its coverage without the words the ledger never uses, so that one of those ("database" in a
    ledger that says "TSDB") does not weigh against the rest twice (it is `unseen` already)."""
    return coverage / max(1.0 - unseen, 0.1)


def probability(coefficients: tuple[float, ...], row: list[float]) -> float:
    """The decision's logistic model: coefficients[0] + the rest times the features."""
    logit = coefficients[0] + sum(c * x for c, x in zip(coefficients[1:], row, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit))))


def in_truth_order(hits: list[Hit], truth: Optional[Truth], k: int) -> list[Hit]:
    """In force before superseded (stable otherwise); a superseded hit brings the entry in
    force that replaced it in front of it, with its numbers and strength."""
    if truth is None:
        return hits[:k]
    # In force first, each part in the ranking's order. Once k hits in force are found the
    # rest cannot be shown (a replaced hit, and the entry it brings, come after them all),
    # so the truth is asked about those alone, not about every candidate.
    in_force: list[Hit] = []
    replaced: list[Hit] = []
    for h in hits:
        h.in_force = not truth.superseded(h.id)
        (in_force if h.in_force else replaced).append(h)
        if len(in_force) >= k:
            break
    ordered = in_force + replaced
    out: list[Hit] = []
    shown: set[str] = set()
    for h in ordered:
        if not h.in_force:
            successor = truth.successor(h.id)
            if successor and successor not in shown:
                shown.add(successor)
                out.append(
                    Hit(
                        successor,
                        h.score,
                        h.coverage,
                        True,
                        replaces=h.id,
                        similarity=h.similarity,
                        answer_score=h.answer_score,
                        strength=h.strength,
                    )
                )
        if h.id not in shown:
            shown.add(h.id)
            out.append(h)
    return out[:k]


def _fused(db: sqlite3.Connection, query: str, semantic: Dense, found: Lexical) -> tuple[list[Hit], dict[str, float]]:
    """The lexical hits (any coverage) and the nearest entries by cosine, ranked by
    w * cosine + (1 - w) * lexical / best lexical; and every entry's cosine to the question."""
    sims = semantic.similarities(db, query)
    lex = {h.id: h for h in found.hits}
    top = max((h.score for h in lex.values()), default=0.0) or 1.0
    ids = set(sorted(sims, key=lambda i: (-sims[i], i))[:CANDIDATES]) | set(lex)  # ties cut by id
    hits = []
    for entry_id in ids:
        h = lex.get(entry_id)
        hit = Hit(entry_id, 0.0, h.coverage if h else 0.0, similarity=sims.get(entry_id, 0.0))
        if h:
            hit.summary_coverage, hit.specific = h.summary_coverage, h.specific
        hit.score = SEMANTIC_WEIGHT * (hit.similarity or 0.0) + (1 - SEMANTIC_WEIGHT) * ((h.score / top) if h else 0.0)
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits, sims


@dataclass
class Ranked:
    """One question's candidates in the ranking's order, each with the features its decision
    reads (`rows`, in LEXICAL_FEATURES or SEMANTIC_FEATURES order) and its answer score."""

    found: Lexical
    hits: list[Hit]
    rows: list[list[float]]
    semantic: bool
    floor: float
    weak_margin: float = WEAK_MARGIN  # semantic: a hit within this of the floor is shown as weak


def ranked(db: sqlite3.Connection, query: str, recency: bool = True, semantic: Optional[Dense] = None) -> Ranked:
    """The candidates of `query` with their features and answer scores (the decision's
    probability that the entry answers it), before any floor is applied."""
    found = lexical_evidence(db, query, recency)
    if semantic is not None and query.strip() and found.total:
        hits, sims = _fused(db, query, semantic, found)
        rows = semantic_features(found, hits, sims)
        floor = semantic.floor
        if found.total < RELATIVE_FROM:
            for h in hits:
                lexical_difference = h.coverage - UNSEEN_PENALTY * found.unseen
                one_sum = (h.similarity or 0.0) + SMALL_LEXICAL * lexical_difference - SMALL_UNSEEN * found.unseen
                # what lexical recall answers, this answers too: a few entries' cosines say less
                h.answer_score = max(one_sum, SMALL_FLOOR + lexical_difference - ANSWER_FLOOR)
            return Ranked(found, hits, rows, True, SMALL_FLOOR, SMALL_WEAK_MARGIN)
        for h, row in zip(hits, rows, strict=True):
            h.answer_score = probability(SEMANTIC_COEFFICIENTS, row)
        return Ranked(found, hits, rows, True, floor)
    hits = list(found.hits)
    for h in hits:
        h.answer_score = h.coverage - UNSEEN_PENALTY * found.unseen
    return Ranked(found, hits, lexical_features(found, hits), False, ANSWER_FLOOR)


def _why_not(query: str, found: Lexical, best: Optional[Hit], floor: float, semantic: bool) -> str:
    if not concepts(query):
        return "the question has no word recall can look up (only common words)"
    if not found.total:
        return "the ledger has no entries"
    unseen = ""
    if found.unseen_words:
        names = ", ".join(f"'{w}'" for w in found.unseen_words[:5])
        unseen = f"; the ledger never uses {names}"
    if best is None:
        return "no entry shares a word with the question" + unseen
    if semantic:
        return (
            f"no entry answers it: the nearest scores {best.answer_score:.2f} (similarity "
            f"{best.similarity or 0.0:.2f}, its words cover {best.coverage:.2f} of the question){unseen}; "
            f"an answer needs {floor:.2f}"
        )
    return (
        f"no entry answers it: the nearest covers {best.coverage:.2f} of the question's weight{unseen}; "
        f"its score {best.answer_score:.2f} is below the {floor:.2f} an answer needs"
    )


def answer(
    db: sqlite3.Connection,
    query: str,
    k: int = 5,
    recency: bool = True,
    truth: Optional[Truth] = None,
    semantic: Optional[Dense] = None,
) -> Answer:
    """Recall's answer to `query` (see the module's docstring). `semantic`, when given, is a
    views.semantic.Index; without one (or when the question has nothing to embed) recall is
    lexical."""
    if k <= 0:
        return Answer([], False)
    candidates = ranked(db, query, recency, semantic)
    found, floor, use_semantic = candidates.found, candidates.floor, candidates.semantic
    # semantic: a hit well below the floor is not shown; lexical: every hit shares a word
    weak_floor = floor - candidates.weak_margin if use_semantic else float("-inf")
    ranked_hits = candidates.hits
    for h in ranked_hits:
        h.strength = STRONG if h.answer_score + 1e-9 >= floor else WEAK
    best = max(ranked_hits, key=lambda h: (h.answer_score, h.score), default=None)
    if best is None or best.strength != STRONG:
        nearest = in_truth_order(ranked_hits, truth, NEAREST)
        return Answer([], True, _why_not(query, found, best, floor, use_semantic), nearest, floor)
    # The ranking's order stands: putting strong hits before weak ones cost 2 to 4 points of
    # hit@5 on the blind set (a right answer often matches fewer of the question's words).
    shown = [h for h in ranked_hits if h.answer_score >= weak_floor]
    return Answer(in_truth_order(shown, truth, k), False, floor=floor)
