"""The write-time rules of an entry, with no dependency beyond the standard library.

One set of rules serves both ways an entry is made: the pydantic `Entry` (the
Python API, import, MCP) runs them in its validator, and `new_record` runs them
for the CLI's hot path without importing pydantic. Either way the same problems
are refused with the same messages, and the same blob bytes are written.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone
from typing import Optional

from ..errors import InputError
from .canonical import HEX64, compute_id

KINDS: tuple = (
    "bootstrap", "decision", "feature", "fix", "incident", "milestone", "release",
    "note", "open", "correction", "service", "api", "test", "requirement", "debt",
    "relation", "checkpoint",
)

# Kinds whose entry may carry an empty body: a checkpoint's content is its blocks.
BODY_OPTIONAL_KINDS = frozenset({"checkpoint"})

MAX_SUMMARY_CHARS = 300
MAX_FIELD_CHARS = 200
MAX_BODY_BYTES = 64 * 1024
MAX_PARENTS = 64

# A commit's time is unsigned epoch seconds and the commit carries the entry's ts,
# so nothing earlier can be stored (and a year < 1000 would not even render as ISO-8601).
MIN_TS = datetime(1970, 1, 1, tzinfo=timezone.utc)

# Characters that end a line for some reader (str.splitlines, markdown, terminals).
_LINE_BREAKS = frozenset("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_BODY_CONTROLS_ALLOWED = frozenset("\t\n\r")
# Fast pre-checks: a value without any of these characters passes the per-character
# scans below, so the scans (and their precise messages) run only for suspicious input.
# Category Cc is exactly U+0000-U+001F and U+007F-U+009F; Cs is U+D800-U+DFFF.
_SUSPECT_SINGLE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SUSPECT_BODY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def parse_ts(text: str) -> datetime:
    """Parse an ISO-8601 timestamp; naive values are refused, not guessed."""
    raw = text.strip()
    if raw.endswith("Z"):
        raw = raw[:-1] + "+00:00"
    try:
        ts = datetime.fromisoformat(raw)
    except ValueError:
        raise InputError(f"invalid timestamp {text!r}: expected ISO-8601 with a UTC offset") from None
    if ts.tzinfo is None:
        raise InputError(f"invalid timestamp {text!r}: it has no UTC offset")
    return ts.astimezone(timezone.utc)


def _bad_single_line(value: str) -> Optional[str]:
    if _SUSPECT_SINGLE_LINE.search(value) is None:
        return "has leading or trailing whitespace" if value != value.strip() else None
    for ch in value:
        if ch in _LINE_BREAKS:
            return "contains a line break"
        cat = unicodedata.category(ch)
        if cat == "Cc":
            return f"contains control character U+{ord(ch):04X}"
        if cat == "Cs":
            return "contains an unpaired surrogate (not valid UTF-8)"
    if value != value.strip():
        return "has leading or trailing whitespace"
    return None


def _bad_body(value: str) -> Optional[str]:
    if _SUSPECT_BODY.search(value) is None:
        if len(value) * 4 > MAX_BODY_BYTES and len(value.encode("utf-8")) > MAX_BODY_BYTES:
            return f"is larger than {MAX_BODY_BYTES} bytes"
        return None
    for ch in value:
        cat = unicodedata.category(ch)
        if cat == "Cc" and ch not in _BODY_CONTROLS_ALLOWED:
            return f"contains control character U+{ord(ch):04X}"
        if cat == "Cs":
            return "contains an unpaired surrogate (not valid UTF-8)"
    if len(value.encode("utf-8")) > MAX_BODY_BYTES:
        return f"is larger than {MAX_BODY_BYTES} bytes"
    return None


def content_problems(e) -> list[str]:
    """Every write-time rule, as human-readable problems (empty when valid)."""
    problems = []
    if not e.summary.strip():
        problems.append("summary is empty")
    else:
        why = _bad_single_line(e.summary)
        if why:
            problems.append(f"summary {why}")
        if len(e.summary) > MAX_SUMMARY_CHARS:
            problems.append(f"summary is longer than {MAX_SUMMARY_CHARS} characters")
    for name in ("author", "agent", "provider", "model"):
        value = getattr(e, name)
        if not value:
            problems.append(f"{name} is empty")
            continue
        why = _bad_single_line(value)
        if why:
            problems.append(f"{name} {why}")
        if len(value) > MAX_FIELD_CHARS:
            problems.append(f"{name} is longer than {MAX_FIELD_CHARS} characters")
    if e.kind not in BODY_OPTIONAL_KINDS and not e.body.strip():
        problems.append(f"a {e.kind} needs its why: the body is empty")
    why = _bad_body(e.body)
    if why:
        problems.append(f"body {why}")
    if len(e.parents) > MAX_PARENTS:
        problems.append(f"more than {MAX_PARENTS} parents")
    if len(set(e.parents)) != len(e.parents):
        problems.append("a parent is listed twice")
    for p in e.parents:
        if not HEX64.fullmatch(p):
            problems.append(f"parent {p[:20]!r} is not a full 64-hex id")
    if e.dedup_key is not None:
        why = _bad_single_line(e.dedup_key) if e.dedup_key else "is empty"
        if why:
            problems.append(f"dedup_key {why}")
        elif len(e.dedup_key) > MAX_FIELD_CHARS:
            problems.append(f"dedup_key is longer than {MAX_FIELD_CHARS} characters")
    return problems



def new_record(kind: str, summary: str, author: str, body: str = "", agent: str = "human",
               provider: str = "none", model: str = "human", parents=(), dedup_key: Optional[str] = None,
               ts: Optional[datetime] = None):
    """A validated, sealed Record from plain values: the same rules and bytes as
    `Entry`, without pydantic (the CLI's `log` stays close to a bare interpreter)."""
    from .record import Record
    for name, value in (("kind", kind), ("summary", summary), ("author", author), ("body", body),
                        ("agent", agent), ("provider", provider), ("model", model)):
        if not isinstance(value, str):
            raise InputError(f"{name}: must be text")
    if dedup_key is not None and not isinstance(dedup_key, str):
        raise InputError("dedup_key: must be text")
    if kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    parents = sorted(parents)
    ts = utcnow() if ts is None else ts
    if ts.tzinfo is None:
        raise InputError("ts must carry a UTC offset")
    ts = ts.astimezone(timezone.utc)
    if ts < MIN_TS:
        raise InputError("ts is before 1970-01-01T00:00:00Z, which a git commit time cannot carry")
    draft = Record("", ts, kind, author, agent, provider, model, summary, body.strip(), list(parents), dedup_key)
    problems = content_problems(draft)
    if problems:
        raise InputError("; ".join(problems))
    from .secrets import refuse_credentials
    refuse_credentials(draft)  # the same gate as Entry's validator: nothing is written yet
    entry_id = compute_id(kind, author, agent, provider, model, summary, draft.body, parents)
    return Record(entry_id, ts, kind, author, agent, provider, model, summary, draft.body, list(parents),
                  dedup_key)


_BLOB_KEYS = frozenset({"agent", "author", "body", "dedup_key", "id", "kind", "model", "parents", "provider",
                        "summary", "ts"})
_BLOB_TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


def parse_blob(data: bytes):
    """A stored entry blob as a Record, held to every rule `Entry.from_json` applies
    (exact key set, types, kind, id and ts format, content rules), without pydantic:
    verify reads every blob of a ledger through here. Raises InputError."""
    import json

    from .record import Record
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise InputError("not a JSON object")
    keys = set(doc)
    if keys != _BLOB_KEYS:
        missing, extra = sorted(_BLOB_KEYS - keys), sorted(keys - _BLOB_KEYS)
        raise InputError("; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                                   + ([f"unexpected {', '.join(extra)}"] if extra else [])))
    for key in ("agent", "author", "body", "id", "kind", "model", "provider", "summary", "ts"):
        if not isinstance(doc[key], str):
            raise InputError(f"{key}: must be a string")
    if doc["dedup_key"] is not None and not isinstance(doc["dedup_key"], str):
        raise InputError("dedup_key: must be a string or null")
    parents = doc["parents"]
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise InputError("parents: must be a list of ids")
    if doc["kind"] not in KINDS:
        raise InputError(f"unknown kind {doc['kind']!r}")
    if not HEX64.fullmatch(doc["id"]):
        raise InputError("id must be 64 lowercase hex characters")
    if not _BLOB_TS.fullmatch(doc["ts"]):
        raise InputError(f"invalid timestamp {doc['ts']!r}")
    r = Record(doc["id"], parse_ts(doc["ts"]), doc["kind"], doc["author"], doc["agent"], doc["provider"],
               doc["model"], doc["summary"], doc["body"], sorted(parents), doc["dedup_key"])
    if r.ts < MIN_TS:
        raise InputError("ts is before 1970-01-01T00:00:00Z")
    if doc["body"] != doc["body"].strip() or parents != sorted(parents):
        raise InputError("not in canonical form (body not stripped or parents not sorted)")
    problems = content_problems(r)
    if problems:
        raise InputError("; ".join(problems))
    return r
