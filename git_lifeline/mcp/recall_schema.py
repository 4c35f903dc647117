"""The output schema of lifeline_recall: what an agent weighs in the shape app/recall.py's
answer_json gives both faces. Pydantic only, as schema.py: built without the MCP SDK. It
names only what decides how to act on an answer (every other field is documented in
docs/RECALL.md, "The answer an agent reads"), without descriptions: tools/list is read at
every session's start and tests/mcp/test_mcp.py holds its token budget. A client that
validates structured content checks every answer against it."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel

from .schema import compact


# A hit (answers) or, when recall abstained, a nearest entry (answers false, strength none).
# No docstrings: pydantic would send them as descriptions.
class Hit(BaseModel):
    id: str
    in_force: bool
    answers: bool
    strength: Literal["strong", "weak", "none"]


class RecallAnswer(BaseModel):
    abstained: bool
    hits: list[Hit]
    nearest: Optional[list[Hit]] = None


OUTPUT_SCHEMA = compact(RecallAnswer.model_json_schema())
