"""The entry: the ledger's atomic, immutable, content-addressed unit.

An `Entry` that exists in memory is valid: every rule a write path must enforce
lives in the model validator, so no face can forget one. The id is the sha256
of a length-prefixed canonical form, identical to lifeline-context 0.6.x, so a
ledger moves between the two tools with every id intact.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import datetime, timezone
from typing import Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .canonical import HEX64, MIN_PREFIX, TS_FORMAT, canonical_form, compute_id, format_ts  # noqa: F401
from .errors import InputError

Kind = Literal[
    "bootstrap", "decision", "feature", "fix", "incident", "milestone", "release",
    "note", "open", "correction", "service", "api", "test", "requirement", "debt",
    "relation", "checkpoint",
]
KINDS: tuple[str, ...] = get_args(Kind)

# Kinds whose entry may carry an empty body: a checkpoint's content is its blocks.
BODY_OPTIONAL_KINDS = frozenset({"checkpoint"})

MAX_SUMMARY_CHARS = 300
MAX_FIELD_CHARS = 200
MAX_BODY_BYTES = 64 * 1024
MAX_PARENTS = 64

# A commit's time is unsigned epoch seconds and the commit carries the entry's ts,
# so nothing earlier can be stored (and a year < 1000 would not even render as ISO-8601).
MIN_TS = datetime(1970, 1, 1, tzinfo=timezone.utc)
# One encoder for every blob: json.dumps with non-default options builds a new one per call.
_BLOB_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))

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


class Entry(BaseModel):
    """One immutable record of the project's reasoning."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    id: str = ""
    ts: datetime = Field(default_factory=utcnow)
    kind: Kind
    author: str
    agent: str = "human"
    provider: str = "none"
    model: str = "human"
    summary: str
    body: str = ""
    parents: list[str] = Field(default_factory=list)
    dedup_key: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data):
        # The id hashes body.strip(); storing the stripped body keeps one
        # representation per id. Parents are stored sorted for the same reason.
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("body"), str):
                data["body"] = data["body"].strip()
            if isinstance(data.get("parents"), list) and all(isinstance(p, str) for p in data["parents"]):
                data["parents"] = sorted(data["parents"])
        return data

    @model_validator(mode="after")
    def _check_and_seal(self) -> "Entry":
        problems = content_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        if self.ts.tzinfo is None:
            raise ValueError("ts must carry a UTC offset")
        if self.ts.utcoffset().total_seconds() != 0:
            object.__setattr__(self, "ts", self.ts.astimezone(timezone.utc))
        if self.ts < MIN_TS:
            raise ValueError("ts is before 1970-01-01T00:00:00Z, which a git commit time cannot carry")
        if not self.id:
            object.__setattr__(self, "id", self.compute_id())
        elif not HEX64.fullmatch(self.id):
            raise ValueError("id must be 64 lowercase hex characters")
        return self

    def compute_id(self) -> str:
        return compute_id(self.kind, self.author, self.agent, self.provider, self.model,
                          self.summary, self.body, self.parents)

    def verify(self) -> bool:
        """True when the stored id still matches the content."""
        return self.id == self.compute_id()

    @property
    def short(self) -> str:
        return self.id[:8]

    def to_json(self) -> bytes:
        """Canonical JSON blob: sorted keys, UTF-8, compact, newline-terminated."""
        doc = {
            "agent": self.agent, "author": self.author, "body": self.body,
            "dedup_key": self.dedup_key, "id": self.id, "kind": self.kind,
            "model": self.model, "parents": list(self.parents), "provider": self.provider,
            "summary": self.summary, "ts": format_ts(self.ts),
        }
        return (_BLOB_ENCODER.encode(doc) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> "Entry":
        """Parse a stored blob; raises InputError describing what is wrong."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise InputError("not a JSON object")
        if isinstance(doc.get("ts"), str):
            doc["ts"] = parse_ts(doc["ts"])
        return build_entry(**doc)


def content_problems(e: Entry) -> list[str]:
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


def build_entry(**fields) -> Entry:
    """Construct an Entry, turning pydantic's errors into one clear InputError."""
    try:
        return Entry(**fields)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        msg = err.get("msg", "invalid")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if err.get("type") == "literal_error" and loc == "kind":
            msg = f"unknown kind {err.get('input')!r}; known kinds: {', '.join(KINDS)}"
            loc = ""
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)
