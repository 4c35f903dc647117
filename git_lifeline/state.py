"""Current truth, derived by pure functions from an entry set.

Nothing here touches git: `reduce(entries)` takes Entry objects and returns a
`State`. Order is always (ts, id), identical on every clone.

Rules (docs/FORMAT.md, "Current truth"):
* A correction supersedes its parents while it is itself active; the active set is
  the fixpoint of the correction graph, so reverting a revert restores the original.
* A correction that supersedes a decision (or a correction that carries one) carries
  the current truth itself and is listed among the decisions in force, unless its
  body header says `action: revert`. A correction of anything else (closing an open,
  unpinning) never invents a decision.
* Entries whose id does not match their content are dropped and listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from . import blocks
from .model import Entry

MAIN_THREAD = "main"
RECENT_COUNT = 5
_IDLIKE = re.compile(r"[0-9a-f]{6,64}")


@dataclass
class Checkpoint:
    entry: Entry
    thread: str
    sections: dict  # section name -> list of items


@dataclass
class State:
    entries: list = field(default_factory=list)          # valid entries, ordered
    by_id: dict = field(default_factory=dict)
    identity: Optional[Entry] = None
    decisions: list = field(default_factory=list)        # in force, ordered
    open_items: list = field(default_factory=list)
    superseded: set = field(default_factory=set)
    pinned: list = field(default_factory=list)           # ids of pinned entries in force
    checkpoints: dict = field(default_factory=dict)      # thread key -> Checkpoint
    threads: dict = field(default_factory=dict)          # thread key -> list of entry ids
    contributors: dict = field(default_factory=dict)     # "provider/model" -> count
    kinds: dict = field(default_factory=dict)
    broken: list = field(default_factory=list)           # ids whose content does not match
    recent_ids: Optional[list] = None                    # a filtered Recent (thread briefs)

    @property
    def recent(self) -> list:
        if self.recent_ids is not None:
            return [self.by_id[i] for i in self.recent_ids]
        return self.entries[-RECENT_COUNT:]

    @property
    def head(self) -> Optional[Entry]:
        return self.entries[-1] if self.entries else None


def effective_superseded(corrections: list) -> set:
    """Fixpoint of the correction graph: a correction supersedes only while active."""
    ids = {c.id for c in corrections}
    active = set(ids)
    superseded: set = set()
    for _ in range(len(corrections) + 2):
        superseded = set()
        for c in corrections:
            if c.id in active:
                superseded.update(c.parents)
        new_active = ids - superseded
        if new_active == active:
            break
        active = new_active
    return superseded


def thread_key(ref: Optional[str], opens: list) -> str:
    """A thread is named, or is an open item's id (a unique prefix resolves to it)."""
    ref = (ref or "").strip()
    if not ref:
        return MAIN_THREAD
    if _IDLIKE.fullmatch(ref):
        matches = [o.id for o in opens if o.id.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
    return ref


def is_revert(e: Entry) -> bool:
    return blocks.field(e.body, "action") == "revert"


def reduce(entries: Iterable[Entry]) -> State:
    """State of an entry set; each entry's id is checked against its content."""
    valid, broken = [], []
    for e in entries:
        (valid if e.verify() else broken).append(e)
    return reduce_verified(valid, [e.id for e in broken])


def reduce_verified(valid: list, broken: list) -> State:
    """State of entries already checked (e.g. by the cache, which checks each blob once)."""
    st = State()
    st.broken = sorted(broken)
    valid = sorted(valid, key=lambda e: (e.ts, e.id))
    st.entries = valid
    st.by_id = {e.id: e for e in valid}
    corrections = [e for e in valid if e.kind == "correction"]
    st.superseded = effective_superseded(corrections)
    live = [e for e in valid if e.id not in st.superseded]

    for e in valid:
        key = f"{e.provider}/{e.model}"
        st.contributors[key] = st.contributors.get(key, 0) + 1
        st.kinds[e.kind] = st.kinds.get(e.kind, 0) + 1

    bootstraps = [e for e in live if e.kind == "bootstrap"]
    st.identity = bootstraps[-1] if bootstraps else None

    # Decisions in force, with corrections that replace a decision carrying the truth.
    carries: set = set()
    for e in valid:  # ts order: a correction's parents precede it in any sane ledger
        if e.kind == "decision":
            carries.add(e.id)
        elif e.kind == "correction" and not is_revert(e) and any(p in carries for p in e.parents):
            carries.add(e.id)
    st.decisions = [e for e in live if e.id in carries]

    st.open_items = [e for e in live if e.kind == "open"]
    opens_all = [e for e in valid if e.kind == "open"]

    for e in live:
        if e.kind == "relation":
            continue
        target = blocks.field(e.body, "pin")
        if target and target in e.parents and target not in st.superseded and target in st.by_id:
            if target not in st.pinned:
                st.pinned.append(target)

    for e in valid:
        if e.kind == "relation":
            continue
        ref = blocks.field(e.body, "thread")
        if ref:
            st.threads.setdefault(thread_key(ref, opens_all), []).append(e.id)

    for e in live:
        if e.kind != "checkpoint":
            continue
        key = thread_key(blocks.field(e.body, "thread"), opens_all)
        if _IDLIKE.fullmatch(key) and key in st.superseded:
            continue  # the open this thread worked on was closed
        sections = blocks.list_blocks(e.body)
        st.checkpoints[key] = Checkpoint(e, key, {s: sections.get(s, []) for s in blocks.CHECKPOINT_SECTIONS})
    return st


def for_thread(st: State, key: str) -> State:
    """The brief a sub-agent gets: the thread's decisions pinned, its checkpoint as the
    only Resume, its own entries as Recent; everything else unchanged."""
    from dataclasses import replace
    members = st.threads.get(key, [])
    in_force = {d.id for d in st.decisions}
    pinned = list(st.pinned) + [i for i in members if i in in_force and i not in st.pinned]
    checkpoints = {k: v for k, v in st.checkpoints.items() if k == key}
    ordered = sorted((st.by_id[i] for i in members if i in st.by_id), key=lambda e: (e.ts, e.id))
    return replace(st, pinned=pinned, checkpoints=checkpoints,
                   recent_ids=[e.id for e in ordered[-RECENT_COUNT:]])
