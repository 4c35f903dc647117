"""Conflicts: decisions in force that the ledger says are about the same thing.

Two carriers in force conflict when they declare (or, as revisions, inherit) one subject
(`subjects.py`), or when they are versions of one decision (`supersession.Derived.lineages`).
The ledger does not rank them: the views show them side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from .entry import abbrev
from .supersession import Derived


@dataclass(frozen=True)
class Conflict:
    """Decisions in force about the same thing, which the ledger does not rank."""

    ids: tuple  # in (ts, id) order
    subject: Optional[str] = None  # the subject they declare or inherit, as shown
    versions_of: Optional[str] = None  # the decision they all are or revise

    @property
    def label(self) -> str:
        if self.subject is not None:
            return self.subject
        return f"versions of {abbrev(self.versions_of or '')}"


def group_conflicts(derived: Derived, facts: dict, decision_ids: Iterable[str]) -> list:
    """The conflict groups among `decision_ids` (the decisions in force): subject groups
    first, by subject; then version groups not already told."""
    valid = set(decision_ids)
    groups: list = []
    for _, (shown, ids) in sorted(derived.subjects.items(), key=lambda kv: (kv[1][0], kv[0])):
        members = tuple(i for i in ids if i in valid)
        if len(members) > 1:
            groups.append(Conflict(members, subject=shown))
    told = [set(g.ids) for g in groups]
    order = sorted(derived.lineages.items(), key=lambda kv: (facts.get(kv[0], {}).get("ts", ""), kv[0]))
    for root, ids in order:
        members = tuple(i for i in ids if i in valid)
        if len(members) > 1 and not any(set(members) <= t for t in told):
            groups.append(Conflict(members, versions_of=root))
            told.append(set(members))
    return groups
