"""The tools' parameters as a model reads them: types it cannot misuse, and mistakes answered
in one sentence.

* `kind` is an enum of the ledger's kinds, read case-insensitively ("Decision" is a decision);
* what a write needs is required in the schema (the why, `body`, included);
* lists are lists of strings, and a string where a list belongs is named as such;
* the schema the client sees is compact: no generated titles, no `null` alternatives, one-line
  descriptions (every tool's schema is sent to the model on every turn);
* every argument is bounded (ARGUMENT_BOUNDS, one table for stdio and HTTP): a value over
  its bound is refused by name before any work, whatever the transport let through.

No MCP SDK import here: pydantic only, so the schema can be built and measured without it.
"""

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, Field, ValidationError

from ..app.agents import KINDS
from ..app.draft import MAX_BODY_BYTES, MAX_FIELD_CHARS, MAX_PARENTS, MAX_SUMMARY_CHARS

# Checkpoints have their own tool (sections, replacing the previous one); every other kind is appended.
APPEND_KINDS = tuple(k for k in KINDS if k != "checkpoint")


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


Kind = Annotated[
    Literal[APPEND_KINDS],  # type: ignore[valid-type]
    BeforeValidator(_lower),
    Field(description="The entry's kind (a checkpoint: lifeline_checkpoint)."),
]
Line = Annotated[str, Field(description="Another ledger line of this repository; empty: the server's.")]
Agent = Annotated[str, Field(description="Your agent's name (e.g. claude-code); the write policy is keyed on it.")]
Provider = Annotated[str, Field(description="Your model's provider (e.g. anthropic).")]
Model = Annotated[str, Field(description="Your model's name.")]
Items = Annotated[list[str], Field(description="One string per item.")]
# A fresh empty list per call, and the schema tells agents the default is [].
NO_ITEMS: Any = Field(default_factory=list, json_schema_extra={"default": []})
Budget = Annotated[int, Field(description="Hard limit on the answer, in characters.")]


@dataclass(frozen=True)
class Bound:
    """The most an argument may be: `chars` characters (a list: all its items together) and,
    for a list, `items` items."""

    chars: int
    items: int = 0


QUERY_CHARS = 4000  # a task or a question in a few sentences; recall reads no further anyway
SECTION = Bound(MAX_BODY_BYTES, 1000)  # a checkpoint's sections all go into one body
NAME = Bound(MAX_FIELD_CHARS)  # a line, a thread, an entry id, a date or commit, a kind
# What an entry can hold is the ledger's rule (core/content_rules.py); the entry's fields are
# bounded by it here, so a value that could never be written costs nothing to refuse.
ARGUMENT_BOUNDS: dict[str, Bound] = {
    "summary": Bound(MAX_SUMMARY_CHARS),
    "body": Bound(MAX_BODY_BYTES),
    "agent": Bound(MAX_FIELD_CHARS),
    "provider": Bound(MAX_FIELD_CHARS),
    "model": Bound(MAX_FIELD_CHARS),
    "parents": Bound(MAX_PARENTS * MAX_FIELD_CHARS, MAX_PARENTS),
    "query": Bound(QUERY_CHARS),
    "task_or_thread": Bound(QUERY_CHARS),
    **{name: SECTION for name in ("next", "done", "blocked", "tried", "goal")},
    **{name: NAME for name in ("kind", "line", "thread", "id", "parent_id", "as_of")},
}
UNKNOWN_BOUND = Bound(MAX_BODY_BYTES)  # an argument no tool takes (ignored): no larger than the largest


def _measure(value: object) -> tuple[int, int]:
    """(characters, items) of an argument's value; numbers and booleans count as nothing."""
    if isinstance(value, str):
        return len(value), 0
    if isinstance(value, list):
        return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in value), len(value)
    if isinstance(value, dict):
        return len(json.dumps(value)), 0
    return 0, 0


def oversized(tool: str, arguments: dict[str, Any]) -> Optional[str]:
    """The sentence refusing the arguments over their bound (ARGUMENT_BOUNDS), or None."""
    parts = []
    for name, value in arguments.items():
        bound = ARGUMENT_BOUNDS.get(name, UNKNOWN_BOUND)
        chars, items = _measure(value)
        if bound.items and items > bound.items:
            parts.append(f"{name} has {items} items, over its limit of {bound.items}")
        elif chars > bound.chars:
            parts.append(f"{name} is {chars} characters long, over its limit of {bound.chars}")
    if not parts:
        return None
    return f"{tool}: invalid arguments: {'; '.join(parts)}; nothing was done."


def readable(tool: str, exc: ValidationError) -> str:
    """A validation failure as one sentence naming each argument and what it must be."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err.get("loc", ()) if not isinstance(p, int)) or "the arguments"
        kind, given = err.get("type", ""), err.get("input")
        if kind == "missing":
            parts.append(f"{name} is required")
        elif kind == "list_type":
            got = "a string" if isinstance(given, str) else f"a {type(given).__name__}"
            parts.append(f'{name} must be a list of strings, one per item (e.g. ["first", "second"]), not {got}')
        elif kind in ("literal_error", "enum"):
            expected = (err.get("ctx") or {}).get("expected", "")
            parts.append(f"{name} must be one of {expected}, not {given!r}")
        elif kind.startswith("string"):
            parts.append(f"{name} must be a string")
        elif kind.startswith("int"):
            parts.append(f"{name} must be a whole number")
        elif kind.startswith("bool"):
            parts.append(f"{name} must be true or false")
        else:
            parts.append(f"{name}: {err.get('msg', 'invalid')}")
    return f"{tool}: invalid arguments: {'; '.join(dict.fromkeys(parts))}; nothing was done."


def compact(schema: dict) -> dict:
    """The schema without what only costs tokens: generated titles, `null` alternatives of
    optional parameters (left out is the way to say none), whitespace in descriptions."""

    def walk(node: object) -> object:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "title" and isinstance(value, str):
                    continue
                if key == "description" and isinstance(value, str):
                    value = " ".join(value.split())
                out[key] = walk(value)
            options = out.get("anyOf")
            if isinstance(options, list):
                kept = [o for o in options if o != {"type": "null"}]
                if len(kept) == 1 and len(kept) < len(options):
                    del out["anyOf"]
                    out = {**kept[0], **out}
                    if out.get("default", 0) is None:
                        del out["default"]
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    compacted = walk(schema)
    assert isinstance(compacted, dict), "a JSON schema is an object"
    return compacted


OptionalInt = Optional[int]
