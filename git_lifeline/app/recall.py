"""Recall as both faces give it: the hits that answer a question with their entries, or an
abstention with its reason and the nearest entries, which are never presented as answers.

`answer_json` gives the one shape of `recall --json` and of lifeline_recall's structured
content, the typed model `AnswerJSON` (docs/RECALL.md, "The answer an agent reads");
mcp/recall_schema.py builds the tool's output schema from that same model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional, Protocol

from pydantic import BaseModel

from ..core.entry import Entry
from ..core.json_input import JSONObject
from ..core.status import REPLACED, Status, status_of
from ..core.trust import Tier
from ..errors import InputError
from ..views.recall import Strength
from .text import why_line

if TYPE_CHECKING:  # annotations only
    from ..core.truth import State
    from ..git.repo import GitRepo
    from ..git.store import LineStore
    from ..views.cache import LineCache
    from ..views.recall import Hit
    from ..views.recall_answer import Answer
    from ..views.semantic import Index


class Ledger(Protocol):
    """What recall reads of app.ledger.Ledger (named here, not imported: the ledger imports
    this module to answer `recall`)."""

    gr: GitRepo
    store: LineStore
    recall_mode: tuple[str, str]

    def state(self) -> State: ...

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
    from ..views import recall, recall_answer

    if k < 1:
        raise InputError("-k must be at least 1")
    size = recall.question_length(query)
    if size > recall.MAX_QUESTION_CHARS:
        raise InputError(
            f"the question is {size} characters long as recall reads it (accents and compound "
            f"characters spelled out); recall takes at most {recall.MAX_QUESTION_CHARS} "
            "(ask about one thing at a time)"
        )
    st = ledger.state()
    db = ledger.cache().ensure(ledger.store.head())
    semantic = ledger.semantic_index()
    answered = recall_answer.answer(db, query, k, truth=recall.truth_of(st), semantic=semantic)
    if semantic is not None:
        ledger.cache().restamp()  # the vectors it may have stored are ours, not damage
    return answered


def ask(ledger: Ledger, query: str, k: int = 5) -> Recalled:
    """Recall's answer (views.recall_answer) with each hit's entry."""
    from .provenance import line_provenance

    answered = answer(ledger, query, k)
    st = ledger.state()
    provenance = line_provenance(ledger.gr, ledger.store)

    def found(h: Hit, strength: Strength) -> Found:
        return Found(
            st.by_id[h.id],
            h.score,
            h.coverage,
            status_of(st, h.id),
            h.similarity,
            h.replaces,
            strength,
            h.answer_score,
            provenance.tier(st.by_id[h.id]),
        )

    return Recalled(
        [found(h, h.strength) for h in answered.hits if h.id in st.by_id],
        answered.abstained,
        answered.reason,
        [found(h, "none") for h in answered.nearest if h.id in st.by_id],
        answered.floor,
    )


# The answer's JSON, typed: `recall --json` dumps it and lifeline_recall's output schema is
# built from it (mcp/recall_schema.py). No docstrings on the models: pydantic would send them
# as descriptions. A field left None is left out of the JSON (`AnswerJSON.as_json`).
class HitJSON(BaseModel):
    id: str
    kind: str
    summary: str
    in_force: bool
    status: Status
    answers: bool  # false for a nearest entry of an abstention
    strength: Strength
    answer_score: float
    coverage: float
    trust: Tier
    similarity: Optional[float] = None  # semantic recall only
    rank_score: float
    replaces: Optional[str] = None  # shown for the superseded hit it replaced: those are its numbers
    why: Optional[str] = None  # the CLI's, the first line of the why


class AnswerJSON(BaseModel):
    mode: Literal["lexical", "semantic"]
    model: Optional[str] = None  # semantic: the model directory
    mode_reason: Optional[str] = None  # lexical: why (`reason` is why recall abstained)
    abstained: bool
    answer_floor: float
    hits: list[HitJSON]
    reason: Optional[str] = None  # when it abstained
    nearest: Optional[list[HitJSON]] = None  # when it abstained: at most 3, `answers` false

    def as_json(self) -> JSONObject:
        """The answer as JSON, without the fields that do not apply to it."""
        return self.model_dump(exclude_none=True)


def hit_json(found: Found, why_chars: int = 0) -> HitJSON:
    """One hit as a program reads it. `strength` and `answer_score` say how well it answers
    (strong: at or above the answer floor on its own); `coverage` is the share of the
    question's weight its words match and `similarity` its cosine (semantic recall only);
    `rank_score` only orders this one answer (BM25's idf is about 0 in a ledger of one or two
    entries: never a measure of relevance). `answers` is false for a nearest entry."""
    e = found.entry
    return HitJSON(
        id=e.id,
        kind=e.kind,
        summary=e.summary,
        in_force=found.in_force,
        status=found.status,
        answers=found.strength != "none",
        strength=found.strength,
        answer_score=round(found.answer_score, 3),
        coverage=round(found.coverage, 3),
        trust=found.trust,
        similarity=None if found.similarity is None else round(found.similarity, 3),
        rank_score=float(f"{found.score:.4g}"),  # significant digits: a tiny ledger's are ~1e-6
        replaces=found.replaces or None,
        why=why_line(e.body, why_chars) if why_chars else None,
    )


def answer_json(recalled: Recalled, recall_mode: tuple[str, str], why_chars: int = 0) -> AnswerJSON:
    """The whole answer: `abstained`, `hits` (what answers; empty when it abstained), and
    when it abstained `reason` and `nearest` (at most 3, `answers: false`); `mode` with the
    model, or `mode_reason` saying why recall was lexical (Ledger.recall_mode)."""
    mode, detail = recall_mode
    semantic = mode == "semantic"
    return AnswerJSON(
        mode="semantic" if semantic else "lexical",
        model=detail if semantic else None,
        mode_reason=None if semantic else detail,
        abstained=recalled.abstained,
        answer_floor=round(recalled.floor, 3),
        hits=[hit_json(f, why_chars) for f in recalled.hits],
        reason=recalled.reason if recalled.abstained else None,
        nearest=[hit_json(f, why_chars) for f in recalled.nearest] if recalled.abstained else None,
    )


def strength_words(found: Found) -> str:
    """How a hit answers, in words: what the CLI and the MCP text show beside it."""
    if found.strength == "strong":
        return f"answers (score {found.answer_score:.2f})"
    if found.strength == "weak":
        return f"related, weak (score {found.answer_score:.2f})"
    return f"does not answer (score {found.answer_score:.2f})"
