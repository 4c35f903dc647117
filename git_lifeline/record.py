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
    parents: tuple
    dedup_key: Optional[str]

    @property
    def short(self) -> str:
        return self.id[:8]

    @classmethod
    def from_json(cls, text: str) -> "Record":
        d = json.loads(text)
        if not isinstance(d, dict) or not all(isinstance(d.get(k), str) for k in _TEXT_KEYS) \
                or not isinstance(d.get("parents"), list) or not all(isinstance(p, str) for p in d["parents"]):
            raise ValueError("not an entry object")
        ts = datetime.fromisoformat(d["ts"][:-1]).replace(tzinfo=timezone.utc)
        return cls(d["id"], ts, d["kind"], d["author"], d["agent"], d["provider"], d["model"],
                   d["summary"], d["body"], tuple(d["parents"]), d.get("dedup_key"))
