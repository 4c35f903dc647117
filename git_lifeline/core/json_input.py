"""The one reader of JSON that arrives from outside: a remote's records, an entry blob, a
seed payload, a policy, the work tree's `.mcp.json` and `.claude/settings.json`, an agent
client's stdin, the files under `.git/lifeline`.

Each is bounded before anything else looks at it: in size (each caller says how large its
input can be) and in depth. A document nested a thousand levels deep is valid JSON, and the
parser, or any recursive code after it, would raise RecursionError: one such record on a
remote crashed every teammate's pull. Past MAX_DEPTH levels it is refused here, whatever
the parser managed, so nothing recursive downstream ever meets one.
"""

from __future__ import annotations

import json
from typing import Mapping, Optional, Sequence, Union

MAX_DEPTH = 64  # levels of objects and arrays; our deepest format (Claude Code's hooks) has 6
_PLAIN = json.JSONDecoder()

JSONValue = Union[dict, list, str, int, float, bool, None]  # what the reader gives: checked by its caller

# What we write as JSON (a report's `to_json`, a `--json` answer): every value is JSON.
# Mapping and Sequence (read-only, so covariant): a list[str] or a dict[str, int] is JSON.
JSON = Union[Mapping[str, "JSON"], Sequence["JSON"], str, int, float, bool, None]
JSONObject = dict[str, JSON]


class JSONInputError(ValueError):
    """Input that is not JSON within its bounds; the message says which bound."""


def read_json(data: Union[bytes, str], max_bytes: int, decoder: Optional[json.JSONDecoder] = None) -> JSONValue:
    """The JSON value in `data` (UTF-8 when bytes), at most `max_bytes` long and MAX_DEPTH
    deep, or JSONInputError. `decoder` parses (one with hooks, such as a duplicate-key
    check, raises what its hooks raise)."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise JSONInputError(f"larger than it can be ({size} bytes; at most {max_bytes})")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        doc = (decoder or _PLAIN).decode(data)
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise JSONInputError(f"not valid JSON here: nested deeper than {MAX_DEPTH} levels") from None
    # each level opens with a bracket, so a text with no more brackets than the limit
    # cannot nest past it: two C counts instead of a walk of every value (~5 µs an entry blob)
    if data.count("{") + data.count("[") > MAX_DEPTH and _deeper_than(doc, MAX_DEPTH):
        raise JSONInputError(f"not valid JSON here: nested deeper than {MAX_DEPTH} levels")
    return doc


def _deeper_than(doc: JSONValue, limit: int) -> bool:
    """Whether `doc` nests objects and arrays more than `limit` levels (iteratively: a
    recursive walk would fail on the very input it is there to refuse)."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def read_json_object(data: Union[bytes, str], max_bytes: int) -> dict[str, JSONValue]:
    """`read_json` for the formats whose document is an object: anything else is refused."""
    doc = read_json(data, max_bytes)
    if not isinstance(doc, dict):
        raise JSONInputError("not a JSON object")
    return doc
