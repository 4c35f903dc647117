"""Entry fields that arrive from outside the process, validated by pydantic.

Where the shape of the input is unknown (a record read from another tool's ledger, a
tool call's arguments, a dict from a file), pydantic checks every field's type at
once and names each bad one; the result is built by the one builder, `Entry.new`,
so every write rule and the secret scan still apply. This module is imported only
at those boundaries: the CLI's own paths never load pydantic.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from .entry import Entry


class EntryFields(BaseModel):
    """The fields a caller may give for a new entry; nothing else is accepted."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    kind: str
    summary: str
    author: str
    body: str = ""
    agent: str = "human"
    provider: str = "none"
    model: str = "human"
    parents: list[str] = Field(default_factory=list)
    dedup_key: Optional[str] = None
    ts: Optional[datetime] = None
    id: Optional[str] = None

    def to_entry(self, require_why: bool = True) -> Entry:
        return Entry.new(kind=self.kind, summary=self.summary, author=self.author, body=self.body,
                         agent=self.agent, provider=self.provider, model=self.model, parents=self.parents,
                         dedup_key=self.dedup_key, ts=self.ts, id=self.id, require_why=require_why)


def entry_from_dict(doc: Any, require_why: bool = True) -> Entry:
    """A new Entry from an untrusted mapping; raises InputError naming every bad field.
    `require_why` False: another tool's stored entry, whose body may be empty."""
    if not isinstance(doc, dict):
        raise InputError("an entry must be given as an object of fields")
    try:
        fields = EntryFields.model_validate(doc)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc)) from None
    return fields.to_entry(require_why)


def describe_validation_error(exc: ValidationError) -> str:
    """pydantic's errors as one readable sentence: `field: problem; field: problem`."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        msg = err.get("msg", "invalid")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)
