"""The output schema of lifeline_recall: the shape app/recall.py's answer_json gives both
faces (docs/RECALL.md, "The answer an agent reads"). Pydantic only, as schema.py: the schema
is built without the MCP SDK, and a client that validates structured content checks every
answer against it."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from .schema import compact


class RecallHit(BaseModel):
    """One entry of an answer: a hit (`answers: true`) or, when recall abstained, a nearest
    entry (`answers: false`, strength "none")."""

    id: str
    kind: str
    summary: str
    in_force: bool = Field(description="False for a superseded entry: do not act on it.")
    answers: bool = Field(description="False for a nearest entry of an abstention: it does not answer.")
    strength: Literal["strong", "weak", "none"] = Field(
        description="strong: answers the question on its own; weak: related, not an answer by itself; none: nearest only."
    )
    answer_score: float = Field(description="The number the strength stands on; strong from answer_floor up.")
    coverage: float = Field(description="The share of the question's weight the entry's words match, in [0, 1].")
    similarity: Optional[float] = Field(default=None, description="Its cosine to the question (semantic recall).")
    rank_score: float = Field(description="Orders this answer's hits only; never a measure of relevance.")
    replaces: Optional[str] = Field(default=None, description="Shown in front of this superseded hit it replaced.")


class RecallAnswer(BaseModel):
    """What lifeline_recall answers."""

    mode: Literal["lexical", "semantic"]
    model: Optional[str] = Field(default=None, description="The model directory (semantic recall).")
    mode_reason: Optional[str] = Field(default=None, description="Why recall is lexical, and how to make it semantic.")
    abstained: bool = Field(description="True when nothing in the ledger answers: hits is then empty.")
    answer_floor: float
    hits: list[RecallHit] = Field(description="What answers the question, best first; the truth orders last.")
    reason: Optional[str] = Field(default=None, description="Why recall abstained.")
    nearest: Optional[list[RecallHit]] = Field(
        default=None,
        description="When it abstained: at most 3 entries closest to the question, which do not answer it.",
    )
    text: str
    warnings: list[str]


OUTPUT_SCHEMA = compact(RecallAnswer.model_json_schema())
