"""Recall's answer to one question: the hits that answer it, each with its strength and the
score that strength stands on, or an abstention with its reason and the nearest entries
(marked as not answering).

One number per entry decides, per engine (`Answer.floor` is the bar):

- lexical: the entry's coverage (the share of the question's weight its words match) less
  UNSEEN_PENALTY times the share carried by words the ledger never uses (views/recall.py);
- semantic: its cosine to the question plus SEMANTIC_LEXICAL times that same lexical
  difference, less SEMANTIC_UNSEEN times the unseen share. One sum, so that neither a word
  the ledger never uses nor a low cosine vetoes the rest of the evidence.

The question is answered when its best entry reaches the floor. A hit at the floor or above
is `strong` (it answers on its own); one below it but within WEAK_MARGIN (lexical: sharing
at least one of the question's words) is `weak`: related to the question, not an answer by
itself, and shown in the ranking's order. Entries below that are never shown: a ledger of two
entries does not return its bootstrap for every question. The constants were chosen on
held-out questions (docs/RECALL.md); the truth decides the order last.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Optional

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

STRONG = "strong"
WEAK = "weak"
NEAREST = 3  # an abstention shows at most this many entries, as not answering
SEMANTIC_LEXICAL = 0.5  # semantic answer score: cosine + this * lexical difference ...
SEMANTIC_UNSEEN = 0.4  # ... - this * the unseen share
WEAK_MARGIN = 0.15  # semantic: a hit within this of the floor is shown as weak


@dataclass
class Answer:
    """What recall says of one question. `hits` answer it (never empty unless it abstained);
    when it abstains, `reason` says why and `nearest` holds the closest entries, which do not
    answer it."""

    hits: list
    abstained: bool
    reason: str = ""
    nearest: list = field(default_factory=list)
    floor: float = ANSWER_FLOOR  # the answer score a strong hit reaches


def lexical_score(found: Lexical, hit: Hit) -> float:
    return hit.coverage - UNSEEN_PENALTY * found.unseen


def semantic_score(found: Lexical, hit: Hit) -> float:
    return (hit.similarity or 0.0) + SEMANTIC_LEXICAL * lexical_score(found, hit) - SEMANTIC_UNSEEN * found.unseen


def in_truth_order(hits: list[Hit], truth: Optional[Truth], k: int) -> list[Hit]:
    """In force before superseded (stable otherwise); a superseded hit brings the entry in
    force that replaced it in front of it, with its numbers and strength."""
    if truth is None:
        return hits[:k]
    for h in hits:
        h.in_force = h.id not in truth.superseded
    ordered = sorted(hits, key=lambda h: not h.in_force)
    out: list = []
    shown = set()
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


def _fused(db: sqlite3.Connection, query: str, semantic: Dense, found: Lexical) -> list[Hit]:
    """The lexical hits (any coverage) and the nearest entries by cosine, ranked by
    w * cosine + (1 - w) * lexical / best lexical, each with its semantic answer score."""
    sims = semantic.similarities(db, query)
    lex = {h.id: h for h in found.hits}
    top = max((h.score for h in lex.values()), default=0.0) or 1.0
    ids = set(sorted(sims, key=lambda i: (-sims[i], i))[:CANDIDATES]) | set(lex)  # ties cut by id
    hits = []
    for entry_id in ids:
        h = lex.get(entry_id)
        hit = Hit(entry_id, 0.0, h.coverage if h else 0.0, similarity=sims.get(entry_id, 0.0))
        hit.score = SEMANTIC_WEIGHT * (hit.similarity or 0.0) + (1 - SEMANTIC_WEIGHT) * ((h.score / top) if h else 0.0)
        hit.answer_score = semantic_score(found, hit)
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits


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
    found = lexical_evidence(db, query, recency)
    use_semantic = semantic is not None and bool(query.strip()) and bool(found.total)
    if semantic is not None and use_semantic:
        floor = semantic.floor
        ranked = _fused(db, query, semantic, found)
        weak_floor = floor - WEAK_MARGIN
    else:
        floor = ANSWER_FLOOR
        ranked = list(found.hits)
        for h in ranked:
            h.answer_score = lexical_score(found, h)
        weak_floor = float("-inf")  # a lexical hit shares at least one of the question's words
    for h in ranked:
        h.strength = STRONG if h.answer_score + 1e-9 >= floor else WEAK
    best = max(ranked, key=lambda h: (h.answer_score, h.score), default=None)
    if best is None or best.strength != STRONG:
        nearest = in_truth_order(ranked, truth, NEAREST)
        return Answer([], True, _why_not(query, found, best, floor, use_semantic), nearest, floor)
    # The ranking's order stands: putting strong hits before weak ones cost 2 to 4 points of
    # hit@5 on the blind set (a right answer often matches fewer of the question's words).
    shown = [h for h in ranked if h.answer_score >= weak_floor]
    return Answer(in_truth_order(shown, truth, k), False, floor=floor)
