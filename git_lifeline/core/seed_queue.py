"""lifeline-context's review queue: the pending proposals its SQLite ledger keeps beside the
entries (the `proposals` table), read only and bounded like the entries (core/seed.py), and
the entry each would become. app/interop.py files them in the line's review trail.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from ..errors import InputError
from .entry import Entry, parse_ts
from .json_input import read_json
from .seed import MAX_PAYLOAD_BYTES, MAX_SEED_SECONDS

SqlValue = Union[str, int, float, bytes, None]  # what a SQLite column of another tool's file holds


@dataclass
class SeedProposal:
    """One pending proposal of lifeline-context's review queue (its `proposals` table), as stored."""

    where: str  # "proposal #3"
    kind: SqlValue
    author: SqlValue
    agent: SqlValue
    provider: SqlValue
    model: SqlValue
    summary: SqlValue
    body: SqlValue
    parents: SqlValue  # JSON text of a list of ids, as the seed stores it
    ts: SqlValue


# lifeline-context's review queue holds what agents proposed and no human decided yet: a
# handful, but the file is another tool's, so the rows read are bounded too.
MAX_SEED_PROPOSALS = 100_000
_PROPOSAL_COLUMNS = ("kind", "author", "agent", "provider", "model", "summary", "body", "parents", "ts")


def read_seed_proposals(path: Path) -> list[SeedProposal]:
    """The pending proposals of a lifeline-context SQLite ledger, oldest first (none when it has
    no `proposals` table: a ledger no agent proposed to). Read only, bounded like the entries."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot open the SQLite file: {exc}") from None
    deadline = time.monotonic() + MAX_SEED_SECONDS
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    # each column only when it is no larger than an entry can be (NULL otherwise: refused below)
    bounded = ", ".join(f"CASE WHEN length(CAST({c} AS BLOB)) <= ? THEN {c} END" for c in _PROPOSAL_COLUMNS)
    try:
        row = con.execute("SELECT type, sql FROM sqlite_master WHERE name = 'proposals' COLLATE NOCASE").fetchone()
        if row is None:
            return []
        if row[0] != "table" or re.match(r"\s*create\s+virtual\b", str(row[1] or ""), re.I):
            raise InputError(
                f"{path}: its proposals is not a stored table (only a table is read); nothing was imported"
            )
        rows = con.execute(
            f"SELECT pid, {bounded} FROM proposals WHERE status = 'pending' ORDER BY pid LIMIT ?",
            (*([MAX_PAYLOAD_BYTES] * len(_PROPOSAL_COLUMNS)), MAX_SEED_PROPOSALS + 1),
        ).fetchall()
    except sqlite3.Error as exc:
        if time.monotonic() > deadline:
            raise InputError(f"{path}: reading its proposals took longer than {MAX_SEED_SECONDS:g} s") from None
        raise InputError(f"{path}: its proposals table cannot be read ({exc}); nothing was imported") from None
    finally:
        con.close()
    if len(rows) > MAX_SEED_PROPOSALS:
        raise InputError(f"{path} holds more than {MAX_SEED_PROPOSALS} pending proposals; nothing was imported")
    return [SeedProposal(f"proposal #{r[0]}", *r[1:]) for r in rows]


def proposal_entry(p: SeedProposal) -> Entry:
    """The entry a pending proposal would become, by the one builder (every rule, the secret
    scan without an override: a proposal is an agent's); InputError names what is wrong."""
    try:
        parents = read_json(_text(p.parents, "parents"), MAX_PAYLOAD_BYTES)
    except ValueError as exc:
        raise InputError(f"its parents are not JSON ({exc})") from None
    if not isinstance(parents, list) or not all(isinstance(x, str) for x in parents):
        raise InputError("its parents are not a list of ids")
    return Entry.new(
        kind=_text(p.kind, "kind"),
        author=_text(p.author, "author"),
        agent=_text(p.agent, "agent"),
        provider=_text(p.provider, "provider"),
        model=_text(p.model, "model"),
        summary=_text(p.summary, "summary"),
        body=_text(p.body if p.body is not None else "", "body"),
        parents=parents,
        ts=parse_ts(_text(p.ts, "ts")),
        require_why=False,
        honour_override=False,
    )


def _text(value: SqlValue, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"its {name} is {'missing (or larger than an entry can be)' if value is None else 'not text'}")
    return value
