"""The output schema of lifeline_recall, built from the model of the answer both faces give
(app/recall_json.py's AnswerJSON). Pydantic only, as schema.py: built without the MCP SDK. It keeps
only what decides how to act on an answer (DECIDING: every other field is documented in
docs/RECALL.md, "The answer an agent reads"), without descriptions: tools/list is read at
every session's start and tests/mcp/test_mcp.py holds its token budget. A client that
validates structured content checks every answer against it."""

from __future__ import annotations

from ..app.recall_json import AnswerJSON, HitJSON
from .schema import compact

# The fields an agent acts on, per model: the answer's, and each hit's (or nearest entry's).
DECIDING = {
    AnswerJSON.__name__: ("abstained", "hits", "nearest"),
    HitJSON.__name__: ("id", "in_force", "answers", "strength"),
}


def _deciding(schema: dict) -> dict:
    """`schema` with only the DECIDING properties of each model, renamed as the tool shows them
    (`Hit`), and no descriptions."""

    def kept(node: dict, name: str) -> dict:
        names = DECIDING[name]
        properties = {k: v for k, v in node["properties"].items() if k in names}
        for value in properties.values():
            value.pop("description", None)
            value.pop("default", None)
        return {
            "properties": properties,
            "required": [k for k in node.get("required", []) if k in names],
            "type": "object",
        }

    out = kept(schema, AnswerJSON.__name__)
    hit = {"$ref": "#/$defs/Hit"}  # a list of hits, or of nearest entries, each a Hit
    out["properties"] = {k: {**v, "items": hit} if "items" in v else v for k, v in out["properties"].items()}
    nearest = out["properties"].get("nearest", {})
    if "anyOf" in nearest:  # Optional: its list alternative is a list of hits too
        nearest["anyOf"] = [{**o, "items": hit} if "items" in o else o for o in nearest["anyOf"]]
    return compact({"$defs": {"Hit": kept(schema["$defs"][HitJSON.__name__], HitJSON.__name__)}, **out})


OUTPUT_SCHEMA = _deciding(AnswerJSON.model_json_schema())
