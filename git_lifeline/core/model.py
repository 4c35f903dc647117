"""The entry: the ledger's atomic, immutable, content-addressed unit.

An `Entry` that exists in memory is valid: every rule a write path must enforce
lives in the model validator, so no face can forget one. The id is the sha256
of a length-prefixed canonical form, identical to lifeline-context 0.6.x, so a
ledger moves between the two tools with every id intact.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from ..errors import InputError
from .canonical import HEX64, MIN_PREFIX, TS_FORMAT, canonical_form, compute_id, encode_blob, format_ts  # noqa: F401
from .rules import (  # noqa: F401
    BODY_OPTIONAL_KINDS,
    KINDS,
    MAX_BODY_BYTES,
    MAX_FIELD_CHARS,
    MAX_PARENTS,
    MAX_SUMMARY_CHARS,
    MIN_TS,
    content_problems,
    parse_ts,
    utcnow,
)

Kind = Literal[KINDS]  # the 17 kinds (rules.KINDS)


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
    def _check_and_seal(self, info: ValidationInfo) -> "Entry":
        problems = content_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        if not (info.context or {}).get(_STORED):
            # New content: refuse credentials before any object can be written. Stored
            # blobs (read back, pulled) are not refused here: verify reports them.
            from .secrets import refuse_credentials
            refuse_credentials(self)
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
        return encode_blob(self)

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
        return _validate(doc, {_STORED: True})


# Validation context of a blob read back from git: every rule but the secret scan applies.
_STORED = "stored"


def build_entry(**fields) -> Entry:
    """Construct a new Entry (every write rule, the secret scan included), turning
    pydantic's errors into one clear InputError."""
    return _validate(fields, None)


def _validate(fields: dict, context: Optional[dict]) -> Entry:
    try:
        return Entry.model_validate(fields, context=context)
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
