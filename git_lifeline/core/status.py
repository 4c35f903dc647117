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
from typing import Iterable, Literal, Mapping, Optional, Protocol

from .dates import window_state
from .facts import Facts
from .supersession import Derived, not_acting

Status = Literal["in force", "superseded", "withdrawn", "closed", "expired", "open", "pending", "recorded"]
# Replaced by a correction: no longer to be acted on (what recall and the context mark).
REPLACED: frozenset[Status] = frozenset({"superseded", "withdrawn", "closed"})
# What an entry's status is apart from the clock: replaced (one of REPLACED), a carrier not
# superseded (its validity window says which at a given time), or an open item.
Class = Literal["superseded", "withdrawn", "closed", "carrier", "open"]


def revised_by(corrections: list) -> frozenset[str]:
    """The ids an acting revision (not a revert) names: of the fold's [id, parents, is revert]
    rows."""
    idle = not_acting(corrections)
    return frozenset(p for cid, parents, revert in corrections if not revert and cid not in idle for p in parents)


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
        return cls(
            frozenset(superseded),
            revised_by(corrections),
            frozenset(opens),
            frozenset(in_force),
            frozenset(expired),
            frozenset(live),
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


@dataclass(frozen=True)
class Kept:
    """One entry's standing apart from the clock, as the cache keeps it by id
    (views/cache_standing.py): its class, a carrier's validity window ("" for no bound),
    and for a replaced entry the end of its chain of revisions ("" when the chain ends in
    nothing, a revert or a cycle)."""

    kind: Class
    valid_from: str = ""
    valid_until: str = ""
    successor: str = ""

    def status(self, now: str) -> Status:
        """Where the entry stands at `now` (what `Standing.status` says of a State made then)."""
        if self.kind != "carrier":
            return self.kind
        window = window_state(self.window(), now)
        return "in force" if window == "valid" else "expired" if window == "expired" else "pending"

    def window(self) -> Facts:
        facts: Facts = {}
        if self.valid_from:
            facts["valid-from"] = self.valid_from
        if self.valid_until:
            facts["valid-until"] = self.valid_until
        return facts


def _revision_ends(superseded: frozenset[str], corrections: list) -> dict[str, str]:
    """superseded id -> where following the newest revision naming it, then the newest naming
    that, ... ends: the first id not superseded, or "" when a step finds no revision (a revert
    restores; it replaces nothing with a new truth) or comes back to an id already passed.
    Each id is walked once (a chain of N revisions is O(N), not O(N^2))."""
    later: dict[str, str] = {}
    for cid, parents, revert in corrections:  # in fold order: the last one is the newest
        if not revert:
            for p in parents:
                later[p] = cid
    ends: dict[str, str] = {}
    for start in superseded:
        path: list[str] = []
        passed: set[str] = set()
        cur: Optional[str] = start
        end = ""
        while cur is not None:
            if cur in ends:
                end = ends[cur]
                break
            if cur not in superseded:
                end = cur
                break
            if cur in passed:
                break  # a cycle of revisions (only a forged entry set holds one): ends superseded
            passed.add(cur)
            path.append(cur)
            cur = later.get(cur)
        for i in path:
            ends[i] = end
    return ends


class KeptStandings:
    """Every entry's `Kept` in one fold's truth (the rows of the cache's standing table):
    the ids of superseded entries, carriers not superseded and open items, and each one's
    standing. The sets are made when first asked for, so that the few ids an append adds
    cost what they are, and the whole table is made once."""

    def __init__(self, derived: Derived, corrections: list, opens: list[str], facts: Mapping[str, Facts]):
        self._derived = derived
        self._corrections = corrections
        self._opens_list = opens
        self._facts = facts
        self._revised: Optional[frozenset[str]] = None
        self._opens: Optional[frozenset[str]] = None
        self._live: Optional[frozenset[str]] = None
        self._ends: Optional[dict[str, str]] = None

    def ids(self) -> list[str]:
        """Every id with a standing other than `recorded`, sorted."""
        return sorted(self._derived.superseded | self.live | self.opens)

    @property
    def opens(self) -> frozenset[str]:
        if self._opens is None:
            self._opens = frozenset(self._opens_list)
        return self._opens

    @property
    def live(self) -> frozenset[str]:
        if self._live is None:
            self._live = frozenset(self._derived.live)
        return self._live

    def of(self, entry_id: str) -> Optional[Kept]:
        """`entry_id`'s standing apart from the clock; None for `recorded` (the same
        precedence as `Standing.status`)."""
        if entry_id in self._derived.superseded:
            if self._revised is None:
                self._revised = revised_by(self._corrections)
            if self._ends is None:
                self._ends = _revision_ends(self._derived.superseded, self._corrections)
            successor = self._ends.get(entry_id, "")
            if entry_id not in self._revised:
                return Kept("withdrawn", successor=successor)
            return Kept("closed" if entry_id in self.opens else "superseded", successor=successor)
        if entry_id in self.live:
            facts = self._facts.get(entry_id, {})
            return Kept("carrier", facts.get("valid-from", ""), facts.get("valid-until", ""))
        if entry_id in self.opens:
            return Kept("open")
        return None
