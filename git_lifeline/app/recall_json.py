"""Recall's answer as JSON, typed: `recall --json` dumps it and lifeline_recall's output
schema is built from it (mcp/recall_schema.py). A module of its own so that a plain
`recall` never imports pydantic (tests/core/test_core_stays_pure_and_light.py)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel

from ..core.json_input import JSONObject
from ..core.status import Status
from ..core.trust import Tier
from ..views.recall import Strength
from .recall import Found, Recalled
from .text import why_line


# No docstrings on the models: pydantic would send them as descriptions. A field left None
# is left out of the JSON (`AnswerJSON.as_json`).
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
