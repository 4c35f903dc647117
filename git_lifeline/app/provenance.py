"""A line's provenance (core/trust.py): which entries a human approved through review and
which an import brought in, found from git once per (ledger head, trail head) and kept in the
line's `.trust` file (git/provenance.py) for the next reader, the warm context included."""

from __future__ import annotations

from datetime import datetime
from typing import Optional, Protocol

from ..core.trust import Provenance
from ..errors import LifelineError
from ..git.provenance import approved_ids, imported_ids, kept_for, read_trust_file, trust_file, write_trust_file
from ..git.repo import GitRepo
from ..git.store import LineStore


class OneLine(Protocol):
    """What is read of app.ledger.Ledger (named here, not imported: the ledger imports this)."""

    gr: GitRepo
    store: LineStore


def provenance_of(led: OneLine) -> Provenance:
    """The provenance of the ledger's line (line_provenance)."""
    return line_provenance(led.gr, led.store)


def line_provenance(gr: GitRepo, store: LineStore, until: Optional[datetime] = None) -> Provenance:
    """`until`: as the line stood then, counting only the approvals recorded by then (read
    from the whole trail, not kept: a question about the past is asked rarely)."""
    from ..git.trails import ReviewTrail

    head = store.head()
    if head is None:
        return Provenance()
    trail = ReviewTrail(gr, store.name)
    trail_head = trail.head()
    if until is not None:
        now = line_provenance(gr, store)
        if trail_head is None or not now.approved:
            return now
        try:
            by_then = approved_ids(trail, trail_head, until=until)
        except (LifelineError, KeyError, ValueError):
            by_then = frozenset()  # as below: a damaged trail approves nothing
        return Provenance(by_then, now.imported)
    path = trust_file(str(gr.lifeline_dir()), store.name)
    kept = kept_for(path, head, trail_head)
    if kept is not None:
        return kept
    older = read_trust_file(path)
    approved: frozenset[str] = frozenset()
    if trail_head is not None:
        known = (older[1], older[2].approved) if older is not None and older[1] is not None else None
        try:
            approved = approved_ids(trail, trail_head, known)
        except (LifelineError, KeyError, ValueError):
            approved = frozenset()  # a damaged trail approves nothing: its entries read as agents' claims
    imported = imported_ids(store, head, (older[0], older[2].imported) if older is not None else None)
    found = Provenance(approved, imported)
    write_trust_file(path, head, trail_head, found)
    return found
