"""Use case: the ledger's line as one HTML page (views/html.py draws it from a ViewModel)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Optional

from ..core import blocks
from ..core.entry import abbrev
from ..core.status import status_of
from ..core.supersession import acting
from ..core.truth import is_revert
from ..views.html import SHOWN_CONFLICTS, EntryView, ThreadView, ViewModel, render, status_token
from .entry_view import reaffirmations_by_decision
from .provenance import provenance_of

if TYPE_CHECKING:
    from ..core import truth
    from .ledger import Ledger

_TS = "%Y-%m-%dT%H:%M:%SZ"
_RESUME_ORDER = ("next", "blocked", "goal", "done", "tried")  # what to do first, first


def build_view_model(led: "Ledger", now: Optional[datetime] = None) -> ViewModel:
    """What the page shows, from the line's entries, its truth, conflicts and staleness."""
    st = led.state()
    entries = st.entries  # through the cache: no blob parsed twice
    if len(entries) != st.count:
        entries = led.entries()
    stale = {s.decision: s.mark() for s in led.stale(st=st)} if st.decision_ids else {}
    conflicting = st.conflicting()
    in_force = set(st.decision_ids)
    pinned = set(st.pinned)
    corrections = [(e.id, e.parents, is_revert(e.body)) for e in entries if e.kind == "correction"]
    active = acting(corrections)
    replaced_by: dict[str, list[str]] = {}
    for cid, parents, _ in corrections:
        if cid in active:
            for p in parents:
                replaced_by.setdefault(p, []).append(cid)
    reaffirmed_by = {d: [x.id for x in found] for d, found in reaffirmations_by_decision(entries).items()}
    thread_of = {i: key for key, ids in st.threads.items() for i in ids}
    for key, cid in st.checkpoint_ids.items():
        thread_of.setdefault(cid, key)
    provenance = provenance_of(led)
    views = []
    for e in entries:
        rivals = conflicting.get(e.id)
        views.append(
            EntryView(
                id=e.id,
                ts=e.ts.strftime(_TS),
                kind=e.kind,
                author=e.author,
                summary=e.summary,
                body=e.body,
                agent=e.agent,
                trust=provenance.tier(e),
                parents=tuple(e.parents),
                thread=thread_of.get(e.id),
                status=status_token(status_of(st, e.id)),
                replaced_by=tuple(replaced_by.get(e.id, ())),
                revert=e.kind == "correction" and blocks.field(e.body, "action") == "revert",
                stale=stale.get(e.id),
                conflicts=tuple(rivals.first(SHOWN_CONFLICTS)) if rivals else (),
                conflict_count=rivals.count if rivals else 0,
                pinned=e.id in pinned,
                reaffirmed_by=tuple(reaffirmed_by.get(e.id, ())) if e.kind == "decision" else (),
            )
        )
    by_id = {v.id: v for v in views}
    decisions = [i for i in st.pinned if i in in_force] + [i for i in st.decision_ids if i not in pinned]
    return ViewModel(
        line=led.line,
        generated=(now or datetime.now(timezone.utc)).strftime(_TS),
        head=led.head(),
        entries=tuple(views),
        decisions=tuple(decisions),
        opens=tuple(st.open_ids),
        expired=tuple(st.expired),
        threads=tuple(_threads(st, by_id)),
        identity=st.identity_id,
        warnings=tuple(f"entry {abbrev(b)} does not match its id: left out" for b in st.broken),
    )


def _threads(st: truth.State, by_id: dict[str, EntryView]) -> list[ThreadView]:
    checkpoints = st.checkpoints
    keys = set(st.threads) | set(checkpoints)
    out = []
    for key in keys:
        members = st.threads.get(key, [])
        label = by_id[key].summary if key in by_id else key
        cp = checkpoints.get(key)
        sections = (
            tuple((name, tuple(cp.sections.get(name, ()))) for name in _RESUME_ORDER if cp.sections.get(name))
            if cp
            else ()
        )
        last = max([by_id[i].ts for i in members if i in by_id] + ([by_id[cp.entry.id].ts] if cp else []), default="")
        out.append(
            ThreadView(
                key=key,
                label=label,
                entries=len(members),
                checkpoint=cp.entry.id if cp else None,
                sections=sections,
                last_ts=last,
            )
        )
    # where work stopped most recently comes first
    out.sort(
        key=lambda t: (t.checkpoint is not None, by_id[t.checkpoint].ts if t.checkpoint else t.last_ts), reverse=True
    )
    return out


def export_html(led: "Ledger", now: Optional[datetime] = None) -> str:
    return render(build_view_model(led, now))
