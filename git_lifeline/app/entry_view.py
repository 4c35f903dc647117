"""One entry in full, with where it stands in the ledger: its parents, what it supersedes, what
superseded it, and whether it is in force (the MCP door's `lifeline_show`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from .ledger import Ledger

if TYPE_CHECKING:  # annotations only
    from ..core import truth
    from ..core.entry import Entry


@dataclass
class Related:
    id: str
    kind: Optional[str]  # None: not in this line (another line's, or never seen)
    summary: Optional[str]
    acting: bool = True  # a correction that was itself withdrawn does not act


@dataclass
class EntryView:
    entry: Entry
    parents: list[Related] = field(default_factory=list)
    supersedes: list[Related] = field(default_factory=list)  # what this correction replaces or withdraws
    superseded_by: list[Related] = field(default_factory=list)  # the corrections that name this entry
    superseded: bool = False  # an acting correction names it
    in_force: Optional[bool] = None  # True: a decision in force; False: a decision no
    # longer in force; None: not a decision
    revert: bool = False  # a correction that withdraws, replacing nothing


def _related(st: truth.State, entry_id: str) -> Related:
    e = st.by_id[entry_id] if entry_id in st.by_id else None
    if e is None:
        return Related(entry_id, None, None)
    return Related(entry_id, e.kind, e.summary, acting=entry_id not in st.superseded)


def view_entry(led: Ledger, ref: str) -> EntryView:
    """The entry `ref` names (an id or a unique prefix) and its place in the truth."""
    e = led.show(ref)
    st = led.state()
    view = EntryView(e, parents=[_related(st, p) for p in e.parents])
    corrections = {cid: (parents, revert) for cid, parents, revert in st.fold.corrections}
    if e.id in corrections:
        view.revert = bool(corrections[e.id][1])
        view.supersedes = list(view.parents)
    view.superseded_by = [_related(st, cid) for cid, (parents, _) in corrections.items() if e.id in parents]
    view.superseded = e.id in st.superseded
    if e.id in set(st.decision_ids):
        view.in_force = True
    elif e.kind == "decision":
        view.in_force = False
    return view
