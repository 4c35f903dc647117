"""A light, read-only view of a stored entry, for read paths that must stay fast.

Built from a blob the cache already validated, so it skips pydantic entirely (the
CLI's `context` never imports it). It has the attributes the readers use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

_TEXT_KEYS = ("id", "ts", "kind", "author", "agent", "provider", "model", "summary", "body")


@dataclass(frozen=True)
class Record:
    id: str
    ts: datetime
    kind: str
    author: str
    agent: str
    provider: str
    model: str
    summary: str
    body: str
    parents: list
    dedup_key: Optional[str]

    @property
    def short(self) -> str:
        return self.id[:8]

    def to_json(self) -> bytes:
        from .canonical import encode_blob
        return encode_blob(self)

    def verify(self) -> bool:
        from .canonical import compute_id
        return self.id == compute_id(self.kind, self.author, self.agent, self.provider, self.model,
                                     self.summary, self.body, self.parents)

    @classmethod
    def from_json(cls, text: str) -> "Record":
        d = json.loads(text)
        if not isinstance(d, dict) or not all(isinstance(d.get(k), str) for k in _TEXT_KEYS) \
                or not isinstance(d.get("parents"), list) or not all(isinstance(p, str) for p in d["parents"]):
            raise ValueError("not an entry object")
        ts = datetime.fromisoformat(d["ts"][:-1]).replace(tzinfo=timezone.utc)
        return cls(d["id"], ts, d["kind"], d["author"], d["agent"], d["provider"], d["model"],
                   d["summary"], d["body"], list(d["parents"]), d.get("dedup_key"))
