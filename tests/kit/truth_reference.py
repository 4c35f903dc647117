"""A reference for the truth fold, written straight from docs/FORMAT.md §9.

Slow on purpose: every rule is a plain fixpoint over the whole entry set, with no
incremental state, no indexes and no order of arrival, so it can be read against
the text and trusted. The property tests check the real fold against it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Optional, Union

from git_lifeline.core import blocks
from git_lifeline.core.entry import Entry
from git_lifeline.core.subjects import subject_key
from git_lifeline.core.truth import State

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
# the truth of an entry set as both sides give it: decisions, superseded, opens, identity,
# pinned (lists of ids, or one id) and conflicts (pairs of ids)
Truth = dict[str, Union[list[str], list[tuple[str, str]], Optional[str]]]


def rec(
    name: str, kind: str, parents: Sequence[str] = (), body: str = "why", minute: int = 0, summary: str = ""
) -> Entry:
    """An entry named `name` (its id is derived from the name, not from the content:
    the fold trusts ids, which is what lets a test build any graph, cycles included)."""
    return Entry(
        ident(name),
        T0 + timedelta(minutes=minute),
        kind,
        "a <a@b.c>",
        "human",
        "none",
        "human",
        summary or f"{kind} {name}",
        body.strip(),
        sorted(ident(p) for p in parents),
        None,
    )


def ident(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def order(e: Entry) -> tuple[datetime, str]:
    return (e.ts, e.id)


def reference(entries: list[Entry]) -> Truth:
    """The truth of an entry set, by the definitions alone."""
    entries = sorted(entries, key=order)
    header = {e.id: blocks.header_fields(e.body) for e in entries}
    corrections = [e for e in entries if e.kind == "correction"]
    revert = {e.id: header[e.id].get("action") == "revert" for e in corrections}

    # Acting: decided outward; what cannot be decided does not act.
    acts: dict[str, bool] = {}
    changed = True
    while changed:
        changed = False
        for c in corrections:
            if c.id in acts:
                continue
            namers = [r.id for r in corrections if revert[r.id] and c.id in r.parents]
            if any(acts.get(r) is True for r in namers):
                acts[c.id], changed = False, True
            elif all(acts.get(r) is False for r in namers):
                acts[c.id], changed = True, True
    superseded = {p for c in corrections if acts.get(c.id) for p in c.parents}

    # Carriers: decisions, and revisions of carriers.
    carriers = {e.id for e in entries if e.kind == "decision"}
    changed = True
    while changed:
        changed = False
        for c in corrections:
            if not revert[c.id] and c.id not in carriers and any(p in carriers for p in c.parents):
                carriers.add(c.id)
                changed = True

    # Subjects and roots: own subject, else inherited; parents first; cycles keep their own.
    by_id = {e.id: e for e in entries}

    def own(i: str) -> set[str]:
        s = header[i].get("subject")
        key = subject_key(s) if s else ""
        return {key} if key else set()

    subjects: dict[str, set[str]] = {}
    roots: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for i in carriers:
            if i in roots:
                continue
            if by_id[i].kind == "decision":
                subjects[i], roots[i] = own(i), {i}
                changed = True
                continue
            ups = [p for p in by_id[i].parents if p in carriers]
            if all(p in roots for p in ups):
                roots[i] = set().union(*(roots[p] for p in ups))
                subjects[i] = own(i) or set().union(*(subjects[p] for p in ups))
                changed = True
    for i in carriers:
        if i not in roots:
            subjects[i], roots[i] = own(i), {i}

    in_force = [e.id for e in entries if e.id in carriers and e.id not in superseded]
    pairs: set[tuple[str, str]] = set()
    for a in in_force:
        for b in in_force:
            if a < b and (subjects[a] & subjects[b] or roots[a] & roots[b]):
                pairs.add((a, b))
    pins: list[str] = []
    for e in entries:
        target = header[e.id].get("pin")
        if (
            target
            and target in e.parents
            and e.id not in superseded
            and target not in superseded
            and target not in pins
        ):
            pins.append(target)
    boots = [e.id for e in entries if e.kind == "bootstrap" and e.id not in superseded]
    return {
        "decisions": in_force,
        "superseded": sorted(superseded),
        "opens": [e.id for e in entries if e.kind == "open" and e.id not in superseded],
        "identity": boots[-1] if boots else None,
        "pinned": pins,
        "conflicts": sorted(pairs),
    }


def snapshot(st: State) -> Truth:
    """The same view of a real `State`."""
    pairs: set[tuple[str, str]] = set()
    for g in st.conflict_groups:
        for a in g.ids:
            for b in g.ids:
                if a < b:
                    pairs.add((a, b))
    return {
        "decisions": list(st.decision_ids),
        "superseded": sorted(st.superseded),
        "opens": list(st.open_ids),
        "identity": st.identity_id,
        "pinned": list(st.pinned),
        "conflicts": sorted(pairs),
    }


def truth_signature(st: State) -> dict:
    """What a test compares of two truths (the cache's and a full rebuild's): every derived
    list and count a reader is shown."""
    return {
        "count": st.count,
        "decisions": st.decision_ids,
        "opens": st.open_ids,
        "superseded": sorted(st.superseded),
        "pinned": st.pinned,
        "checkpoints": st.checkpoint_ids,
        "threads": st.threads,
        "recent": st.recent_ids,
        "broken": st.broken,
        "identity": st.identity_id,
        "kinds": st.kinds,
        "conflicts": st.conflicts,
    }


def successor_reference(st: State, entry_id: str) -> Optional[str]:
    """The decision in force that replaced `entry_id`, walked as recall walked it from a whole
    State: the newest revision (not a revert) naming it, then the newest naming that, ...
    while what is reached is superseded; None when a step finds none, comes back to an id
    already passed, or ends on a carrier not in force."""
    later: dict[str, list[str]] = {}
    for cid, parents, is_revert in st.fold.corrections:
        if not is_revert:
            for p in parents:
                later.setdefault(p, []).append(cid)
    seen, cur = set(), entry_id
    while cur in st.superseded and cur not in seen:
        seen.add(cur)
        nxt = later.get(cur)
        if not nxt:
            return None
        cur = nxt[-1]
    return cur if cur != entry_id and cur in set(st.decision_ids) else None
