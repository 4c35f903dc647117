"""A reference for the truth fold, written straight from docs/FORMAT.md §9.

Slow on purpose: every rule is a plain fixpoint over the whole entry set, with no
incremental state, no indexes and no order of arrival, so it can be read against
the text and trusted. The property tests check the real fold against it.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

from git_lifeline.core import blocks
from git_lifeline.core.entry import Entry
from git_lifeline.core.subjects import subject_key

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rec(name: str, kind: str, parents=(), body: str = "why", minute: int = 0, summary: str = "") -> Entry:
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


def order(e) -> tuple:
    return (e.ts, e.id)


def reference(entries: list) -> dict:
    """The truth of an entry set, by the definitions alone."""
    entries = sorted(entries, key=order)
    header = {e.id: blocks.header_fields(e.body) for e in entries}
    corrections = [e for e in entries if e.kind == "correction"]
    revert = {e.id: header[e.id].get("action") == "revert" for e in corrections}

    # Acting: decided outward; what cannot be decided does not act.
    acts: dict = {}
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

    def own(i):
        s = header[i].get("subject")
        key = subject_key(s) if s else ""
        return {key} if key else set()

    subjects: dict = {}
    roots: dict = {}
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
    pairs = set()
    for a in in_force:
        for b in in_force:
            if a < b and (subjects[a] & subjects[b] or roots[a] & roots[b]):
                pairs.add((a, b))
    pins = []
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


def snapshot(st) -> dict:
    """The same view of a real `State`."""
    pairs = set()
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
