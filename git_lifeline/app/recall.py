"""Recall as both faces give it: the hits that answer a question with their entries, or an
abstention with its reason and the nearest entries, which are never presented as answers.

`answer_json` gives the one shape of `recall --json` and of lifeline_recall's structured
content, the typed model `AnswerJSON` (docs/RECALL.md, "The answer an agent reads");
mcp/recall_schema.py builds the tool's output schema from that same model.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

from ..core.entry import Entry
from ..core.status import REPLACED, Status
from ..core.trust import Tier
from ..errors import InputError
from ..views.recall import Strength

if TYPE_CHECKING:  # annotations only
    from ..git.repo import GitRepo
    from ..git.store import LineStore
    from ..views.cache import LineCache
    from ..views.cache_standing import Standings
    from ..views.recall import Hit
    from ..views.recall_answer import Answer
    from ..views.semantic import Index


class Ledger(Protocol):
    """What recall reads of app.ledger.Ledger (named here, not imported: the ledger imports
    this module to answer `recall`)."""

    gr: GitRepo
    store: LineStore
    recall_mode: tuple[str, str]

    def note_if_empty(self, head: Optional[str]) -> None: ...

    def cache(self) -> LineCache: ...

    def semantic_index(self) -> Optional[Index]: ...


@dataclass(frozen=True)
class Found:
    """A recall hit, with the entry and whether it is still in force."""

    entry: Entry
    score: float  # views.recall.Hit's: the ranking's, relative to one question
    coverage: float  # the share of the question's weight it matches, in [0, 1]
    status: Status  # core/status.py
    similarity: Optional[float] = None  # the cosine to the question (semantic recall only)
    replaces: Optional[str] = None  # shown because it replaced this hit (whose numbers it carries)
    strength: Strength = "weak"  # "strong": answers on its own; "weak": related; "none": nearest only
    answer_score: float = 0.0  # the number the strength stands on (views/recall_answer.py)
    trust: Tier = "agent"  # core/trust.py: where it came from (never `human` unless it says so)

    @property
    def in_force(self) -> bool:
        """Not replaced by a correction (an entry superseded, withdrawn or closed is not)."""
        return self.status not in REPLACED


@dataclass(frozen=True)
class Recalled:
    """Recall's answer with its entries: `hits` answer the question; when it abstained,
    `reason` says why and `nearest` holds the closest entries (strength "none")."""

    hits: list[Found]
    abstained: bool
    reason: str
    nearest: list[Found]
    floor: float  # the answer score a strong hit reaches


def answer(ledger: Ledger, query: str, k: int = 5) -> Answer:
    """views.recall_answer.Answer for the question, in the ledger's cache."""
    return _answered(ledger, query, k)[0]


def _answered(ledger: Ledger, query: str, k: int) -> tuple[Answer, Standings]:
    """The answer, and the statuses it was ordered by (the cache's standing table, read for
    its candidates only: the fold is not read)."""
    from ..views import recall_answer
    from ..views.recall import MAX_QUESTION_CHARS, Truth, question_length

    if k < 1:
        raise InputError("-k must be at least 1")
    size = question_length(query)
    if size > MAX_QUESTION_CHARS:
        raise InputError(
            f"the question is {size} characters long as recall reads it (accents and compound "
            f"characters spelled out); recall takes at most {MAX_QUESTION_CHARS} "
            "(ask about one thing at a time)"
        )
    head = ledger.store.head()
    ledger.note_if_empty(head)
    cache = ledger.cache()
    db = cache.ensure(head)
    semantic = ledger.semantic_index()
    for rebuilt in (False, True):
        standings = cache.standings(db)
        try:
            truth = Truth(standings.superseded, standings.successor)
            answered = recall_answer.answer(db, query, k, truth=truth, semantic=semantic)
            break
        except sqlite3.DatabaseError as exc:  # a standing bucket that does not match its seal
            if rebuilt:
                raise
            db = cache.recover(exc)  # warned of and rebuilt, never served
    if semantic is not None:
        cache.restamp()  # the vectors it may have stored are ours, not damage
    return answered, standings


def ask(ledger: Ledger, query: str, k: int = 5) -> Recalled:
    """Recall's answer (views.recall_answer) with each hit's entry."""
    from .provenance import line_provenance

    answered, standings = _answered(ledger, query, k)
    cache = ledger.cache()
    provenance = line_provenance(ledger.gr, ledger.store)

    def found(hits: list[Hit], strength: Optional[Strength]) -> list[Found]:
        out = []
        for h in hits:
            e = cache.record(h.id)
            if e is not None:
                out.append(
                    Found(
                        e,
                        h.score,
                        h.coverage,
                        standings.status(h.id),
                        h.similarity,
                        h.replaces,
                        strength or h.strength,
                        h.answer_score,
                        provenance.tier(e),
                    )
                )
        return out

    return Recalled(
        found(answered.hits, None), answered.abstained, answered.reason, found(answered.nearest, "none"), answered.floor
    )


def strength_words(found: Found) -> str:
    """How a hit answers, in words: what the CLI and the MCP text show beside it."""
    if found.strength == "strong":
        return f"answers (score {found.answer_score:.2f})"
    if found.strength == "weak":
        return f"related, weak (score {found.answer_score:.2f})"
    return f"does not answer (score {found.answer_score:.2f})"
