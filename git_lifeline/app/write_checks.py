"""What a write must satisfy against the line as it stands: parents' times and the clock's
tolerance (core/clock.py), a batch's headers and times, and who re-checked a stale decision."""

from __future__ import annotations

from typing import Any, Optional

from ..core import truth
from ..errors import InputError, LifelineError

Ledger = Any  # app/ledger.py's Ledger, which imports this module (no cycle)


def max_clock_skew(led: "Ledger"):
    from ..core import clock

    return clock.parse_skew(led.gr.config_get(clock.SKEW_KEY))


def parent_times(led: "Ledger", parents: list, batch: Optional[dict] = None) -> list:
    """(id, ts or None) of each parent: in `batch`, in this line, or in another line."""
    out, index = [], None
    for p in parents:
        e = (batch or {}).get(p)
        if e is None:
            try:
                e = led.store.read(p)
            except LifelineError:
                e = None  # a malformed parent has no ts to compare with (verify reports it)
        if e is None:
            from ..git.lines import LineIndex

            index = index or LineIndex.scan(led.gr)
            home = index.locate(p, exclude=led.line)
            e = index.get(home, p) if home else None
        out.append((p, e.ts if e is not None else None))
    return out


def check_batch(led: "Ledger", entries: list) -> None:
    """What `verify` would refuse in entries about to be written in bulk (import,
    migrate): a typed header value not of its type, a ts before a parent's or in the
    future beyond the tolerance. Raises InputError; nothing is written then."""
    from ..core import clock
    from ..core.entry import utcnow
    from ..core.headers import header_problems

    batch = {e.id: e for e in entries}
    now, skew = utcnow(), max_clock_skew(led)
    for e in entries:
        why = "; ".join(header_problems(e.kind, e.body)) or clock.stored_problem(
            e.ts, parent_times(led, e.parents, batch), now, skew
        )
        if why:
            raise InputError(f"entry {e.id[:12]} ('{e.summary[:40]}'): {why}; nothing was written")


def rechecked(led: "Ledger", st: truth.State) -> dict:
    """decision id -> ts of its latest re-check: a human's entry naming it, or an agent's
    that a human approved through review (the trail is read only when that matters)."""
    facts = st.fold.facts
    if not any(facts.get(i, {}).get("paths") for i in st.fold.agent_touched):
        return st.fold.touched  # no agent's entry names a decision staleness is asked of
    from ..git.trails import ReviewTrail

    try:
        records = list(ReviewTrail(led.gr, led.line).load().records.values())
    except LifelineError:
        records = []
    approved = {r.doc.get("entry") for r in records if r.type in ("approved", "duplicate")}
    return st.fold.rechecked(a for a in approved if a)
