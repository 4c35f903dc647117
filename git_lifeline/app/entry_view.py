"""One entry in full, with where it stands in the ledger: its status, its parents, what it
corrects and what corrected it. The one model both faces render: `git lifeline show`
(cli/entries.py) and the MCP door's `lifeline_show` (mcp/text.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Optional

from ..core.blocks import field
from ..core.entry import Entry, entry_order_key
from ..core.status import REPLACED, Status, status_of
from ..core.supersession import not_acting
from ..core.trust import Tier
from ..core.truth import State
from .ledger import Ledger
from .provenance import provenance_of

How = Literal["revises", "reverts"]
REAFFIRM_PREFIX = "reaffirm: "  # the summary of what `git lifeline reaffirm` writes (app/edits.py)


@dataclass(frozen=True)
class Related:
    """An entry another one names, and where it stands."""

    id: str
    entry: Optional[Entry]  # None: not in this line (another line's, or never seen)
    status: Optional[Status]  # None when the line does not hold it

    @property
    def replaced(self) -> bool:
        """Superseded, withdrawn or closed by a correction that acts."""
        return self.status in REPLACED


@dataclass(frozen=True)
class Link:
    """A correction's edge: the entry at the other end (None: not in this line), how the
    correction treats it (revises or reverts) and whether the correction acts (a reverted
    correction does not)."""

    id: str
    entry: Optional[Entry]
    how: How
    acts: bool


@dataclass(frozen=True)
class EntryView:
    entry: Entry
    status: Status  # core/status.py: the one answer every view gives
    parents: tuple[Related, ...]
    supersedes: tuple[Link, ...]  # a correction: each parent it revises or reverts
    superseded_by: tuple[Link, ...]  # the corrections naming this entry, in (ts, id) order
    reaffirmed_by: tuple[Entry, ...] = ()  # re-affirmations of a decision, oldest first
    trust: Tier = "agent"  # core/trust.py: where it came from (never `human` unless it says so)

    @property
    def replaced(self) -> bool:
        """Superseded, withdrawn or closed by a correction that acts: not to be acted on."""
        return self.status in REPLACED

    @property
    def revert(self) -> bool:
        """A correction that withdraws what it names, replacing nothing."""
        return any(link.how == "reverts" for link in self.supersedes)

    @property
    def missing(self) -> list[str]:
        """Parents this correction names that the line does not hold."""
        return [link.id for link in self.supersedes if link.entry is None]


def _related(st: State, entry_id: str) -> Related:
    e = st.get(entry_id)
    return Related(entry_id, e, status_of(st, entry_id) if e is not None else None)


def entry_view(led: Ledger, e: Entry) -> EntryView:
    """Where the entry `e` of this line stands in its truth."""
    st = led.state()
    rows = st.fold.corrections
    idle = not_acting(rows)
    own = next(((parents, revert) for cid, parents, revert in rows if cid == e.id), None)
    supersedes: tuple[Link, ...] = ()
    if own is not None:
        parents, revert = own
        how: How = "reverts" if revert else "revises"
        supersedes = tuple(Link(p, st.get(p), how, e.id not in idle) for p in parents)
    superseded_by = tuple(
        Link(cid, st.get(cid), "reverts" if revert else "revises", cid not in idle)
        for cid, parents, revert in rows
        if e.id in parents
    )
    return EntryView(
        entry=e,
        status=status_of(st, e.id),
        parents=tuple(_related(st, p) for p in e.parents),
        supersedes=supersedes,
        superseded_by=superseded_by,
        reaffirmed_by=tuple(reaffirmations(led, e.id)) if e.kind == "decision" else (),
        trust=provenance_of(led).tier(e),
    )


def is_reaffirmation(e: Entry) -> bool:
    """Whether `e` is what `git lifeline reaffirm` writes: a note, its summary's prefix, a
    `commit:` header (the code it was re-read against)."""
    return e.kind == "note" and e.summary.startswith(REAFFIRM_PREFIX) and bool(field(e.body, "commit"))


def reaffirmations_by_decision(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """{entry id: its re-affirmations among `entries`, oldest first}: the one answer `show`,
    `lifeline_show` (through EntryView) and the HTML view (app/html_export.py) give."""
    out: dict[str, list[Entry]] = {}
    for e in sorted((e for e in entries if is_reaffirmation(e)), key=entry_order_key):
        for p in e.parents:
            out.setdefault(p, []).append(e)
    return out


def reaffirmations(led: Ledger, decision_id: str) -> list[Entry]:
    """The re-affirmations of a decision, oldest first."""
    return reaffirmations_by_decision(led.entries(kind="note")).get(decision_id, [])


def view_entry(led: Ledger, ref: str) -> EntryView:
    """The entry `ref` names (an id or a unique prefix) and its place in the truth."""
    return entry_view(led, led.show(ref))
