"""Where one entry stands in the current truth: the one answer every view and face gives
(docs/FORMAT.md §9, "Status"), so `show`, recall, the context, the HTML page and the
MCP door never disagree about an entry.

Precedence, first match wins:
1. named by an acting correction: `closed` (an open item an acting revision answers),
   `superseded` (any other entry an acting revision replaces), else `withdrawn` (only
   acting reverts name it);
2. a carrier not superseded: `in force` inside its validity window, `expired` past its
   `valid-until`, `pending` before its `valid-from`;
3. an open item not superseded: `open`;
4. anything else (a note, a checkpoint, a revert that acts, ...): `recorded`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Protocol

from .supersession import not_acting

Status = Literal["in force", "superseded", "withdrawn", "closed", "expired", "open", "pending", "recorded"]
# Replaced by a correction: no longer to be acted on (what recall and the context mark).
REPLACED: frozenset[Status] = frozenset({"superseded", "withdrawn", "closed"})


@dataclass(frozen=True)
class Standing:
    """The sets one State's statuses are read from, computed once per State."""

    superseded: frozenset[str]
    revised: frozenset[str]  # named by an acting revision (not a revert)
    opens: frozenset[str]
    in_force: frozenset[str]
    expired: frozenset[str]
    live: frozenset[str]  # carriers not superseded, whatever their window

    @classmethod
    def of(
        cls,
        superseded: Iterable[str],
        corrections: list,
        opens: Iterable[str],
        in_force: Iterable[str],
        expired: Iterable[str],
        live: Iterable[str],
    ) -> Standing:
        """From a State's truth: `corrections` are the fold's [id, parents, is revert] rows."""
        idle = not_acting(corrections)
        revised = frozenset(
            p for cid, parents, revert in corrections if not revert and cid not in idle for p in parents
        )
        return cls(
            frozenset(superseded), revised, frozenset(opens), frozenset(in_force), frozenset(expired), frozenset(live)
        )

    def status(self, entry_id: str) -> Status:
        if entry_id in self.superseded:
            if entry_id not in self.revised:
                return "withdrawn"
            return "closed" if entry_id in self.opens else "superseded"
        if entry_id in self.in_force:
            return "in force"
        if entry_id in self.expired:
            return "expired"
        if entry_id in self.live:
            return "pending"  # a carrier whose validity window has not opened yet
        if entry_id in self.opens:
            return "open"
        return "recorded"


class Judged(Protocol):
    """A State (core/truth.py): what statuses are read from."""

    @property
    def standing(self) -> Standing: ...


def status_of(st: Judged, entry_id: str) -> Status:
    """Where `entry_id` stands in `st` (the precedence above)."""
    return st.standing.status(entry_id)
