"""Conflicts: decisions in force that the ledger says are about the same thing.

Two carriers in force conflict when they declare (or, as revisions, inherit) one subject
(`subjects.py`), or when they are versions of one decision (`supersession.Derived.lineages`).
The ledger does not rank them: the views show them side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterable, Mapping, Optional

from .entry import abbrev
from .facts import Facts
from .supersession import Derived


@dataclass(frozen=True)
class Conflict:
    """Decisions in force about the same thing, which the ledger does not rank."""

    ids: tuple[str, ...]  # in (ts, id) order
    subject: Optional[str] = None  # the subject they declare or inherit, as shown
    versions_of: Optional[str] = None  # the decision they all are or revise

    @property
    def label(self) -> str:
        if self.subject is not None:
            return self.subject
        return f"versions of {abbrev(self.versions_of or '')}"


@dataclass(frozen=True)
class Rivals:
    """The decisions one decision in force conflicts with, kept as its groups: a group of
    N decisions gives each of them N - 1 rivals, so listing them per decision would cost
    N² (and the notes that printed them pushed every other decision out of the context)."""

    of: str
    groups: tuple[Conflict, ...]  # the Conflicts `of` belongs to, in group order

    def first(self, limit: int) -> list[str]:
        """Up to `limit` rivals, in group order, each once: the cost is bounded by `limit`
        (plus the rivals skipped as already seen), not by the size of the groups."""
        out: list[str] = []
        seen = {self.of}
        for i in chain.from_iterable(g.ids for g in self.groups):
            if len(out) >= limit:
                break
            if i not in seen:
                seen.add(i)
                out.append(i)
        return out

    @property
    def count(self) -> int:
        """How many distinct decisions it conflicts with."""
        if len(self.groups) == 1:
            return len(self.groups[0].ids) - 1
        return len({i for g in self.groups for i in g.ids}) - 1


def rivals(groups: list[Conflict]) -> dict[str, Rivals]:
    """decision id -> its Rivals, in one pass over the groups' members."""
    of: dict[str, list[Conflict]] = {}
    for g in groups:
        for i in g.ids:
            of.setdefault(i, []).append(g)
    return {i: Rivals(i, tuple(gs)) for i, gs in of.items()}


def group_conflicts(derived: Derived, facts: Mapping[str, Facts], decision_ids: Iterable[str]) -> list[Conflict]:
    """The conflict groups among `decision_ids` (the decisions in force): subject groups
    first, by subject; then version groups not already told. Near-linear in the members:
    a version group is compared only with the groups told that hold its first member."""
    valid = set(decision_ids)
    groups: list[Conflict] = []
    for _, (shown, ids) in sorted(derived.subjects.items(), key=lambda kv: (kv[1][0], kv[0])):
        members = tuple(i for i in ids if i in valid)
        if len(members) > 1:
            groups.append(Conflict(members, subject=shown))
    told_with: dict[str, list[frozenset[str]]] = {}  # id -> the member sets of the groups told that hold it
    for g in groups:
        told = frozenset(g.ids)
        for i in g.ids:
            told_with.setdefault(i, []).append(told)
    order = sorted(derived.lineages.items(), key=lambda kv: (facts.get(kv[0], {}).get("ts", ""), kv[0]))
    for root, ids in order:
        members = tuple(i for i in ids if i in valid)
        if len(members) < 2:
            continue
        mine = frozenset(members)
        if any(mine <= t for t in told_with.get(members[0], ())):
            continue
        groups.append(Conflict(members, versions_of=root))
        for i in members:
            told_with.setdefault(i, []).append(mine)
    return groups
