"""Current truth, derived by pure functions from an entry set.

Nothing here touches git. Entries are folded into a `Fold` of small accumulators (ids,
not entries), identical on every clone whatever order they arrive in. A Fold
serialises to JSON, so the cache can keep it per entries tree and fold only what an
append or a pull adds.
`State` wraps a Fold with a loader (id -> entry) that fetches entries only when
something is rendered.

Rules (docs/FORMAT.md §9, "Current truth"):
* A correction is a *revert* when its body header says `action: revert`, else a
  *revision*. A correction acts unless an acting revert names it; an acting
  correction supersedes its parents. So a revision stays in force until it is itself
  revised or reverted, and only a revert restores what it names (a revert of a revert
  restores what the first one withdrew).
* A decision carries the truth, and so does a revision of a carrier: D -> C1 -> C2
  leaves only C2 in force. A revert, or a correction of anything else (closing an
  open, unpinning), never invents a decision.
* Two carriers in force conflict when they declare (or, as revisions, inherit) the
  same subject (`subjects.py`), or are versions of one decision (both are, or revise
  through revisions, the same decision). A word before a colon is not a subject.
* Entries whose id does not match their content are dropped and listed.
* "The latest" (a thread's head and live checkpoint, recent entries) is decided by
  causality first, parents before children, and (ts, id) second (`causal.py`).
* Only a human's entry naming a decision re-checks it (staleness); an agent's counts
  once a human approved it through review (`Fold.rechecked`).

The correction graph's truth is derived in one pass when it is read (`Fold.derived`,
supersession.py), never per entry: folding N revisions is linear in N. It does not
depend on the order entries were added, and is defined on any graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional

from . import blocks, fold_text
from .causal import causal_order
from .conflicts import Conflict, Rivals, group_conflicts, rivals
from .dates import utc_now_key, window_state
from .entry import Entry, Folded, entry_order_key, sort_in_order
from .facts import REMEMBERED, Facts
from .headers import valid_value
from .status import Standing
from .subjects import display_subject, subject_key
from .supersession import Derived, derive, with_decision

if TYPE_CHECKING:  # annotations only (entry.py is the write path's; the truth reads what it is given)
    from .entry import Entry

MAIN_THREAD = "main"
RECENT_COUNT = 5
FOLD_VERSION = 5  # 5: ids by index into a table (to_json)
_IDLIKE = re.compile(r"[0-9a-f]{6,64}")
_FIRST = itemgetter(0)  # the id of a [id, ...] row


def thread_key(ref: Optional[str], open_ids: Iterable[str]) -> str:
    """A thread is named, or is an open item's id (a unique prefix resolves to it)."""
    ref = (ref or "").strip()
    if not ref:
        return MAIN_THREAD
    if _IDLIKE.fullmatch(ref):
        matches = [o for o in open_ids if o.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
    return ref


def header_of(e: Entry) -> dict[str, str]:
    """The body header fields the fold reads (a relation's body is data, never a header)."""
    return blocks.header_fields(e.body) if e.kind != "relation" else {}


def subject_of(summary: str, header: Mapping[str, str]) -> Optional[str]:
    """What a decision declares it is about: its `subject:` header as shown, or None.
    The summary is not read: a word before a colon in it declares nothing."""
    return display_subject(header.get("subject"))


def is_revert(body: str) -> bool:
    return blocks.field(body, "action") == "revert"


@dataclass
class Fold:
    """Accumulators of the fold. Everything is ids, keys and counts: small, JSON-able.

    The fold is a function of the entry set, whatever order `add` is called in, for
    every entry `accepts_after` accepts: lists whose order matters (threads,
    checkpoints, recent) are kept sorted by (ts, id) as entries arrive, and "the latest"
    is decided by causality first (parents before children) and ts second
    (`causal_order`). So an entry pulled from a clone whose clock is behind, or a
    future-dated entry folded earlier, does not force a refold of everything on the
    next append. Only an `open`, a `bootstrap` or a pin that sorts before what was
    folded does (they change how entries already folded read)."""

    count: int = 0
    last: Optional[list[str]] = None  # [ts iso, id] of the largest (ts, id) folded
    recent: list[str] = field(default_factory=list)  # the RECENT_COUNT largest (ts, id), in that order
    recent_meta: dict = field(default_factory=dict)  # recent id -> [ts iso, parents]
    decisions: list[str] = field(default_factory=list)  # decision ids, in (ts, id) order
    corrections: list = field(default_factory=list)  # [id, parents, is revert], in (ts, id) order
    opens: list[str] = field(default_factory=list)
    bootstraps: list[str] = field(default_factory=list)
    pins: list[list[str]] = field(default_factory=list)  # [note id, target id]
    checkpoints: list[list[str]] = field(default_factory=list)  # [id, thread key], in (ts, id) order
    threads: dict[str, list[str]] = field(default_factory=dict)  # key -> ids, in (ts, id) order
    keys: dict[str, str] = field(default_factory=dict)  # ts iso of opens, reverts, checkpoints, thread members
    links: dict[str, list[str]] = field(default_factory=dict)  # parents of checkpoints and thread members
    contributors: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    broken: list[str] = field(default_factory=list)
    facts: dict[str, Facts] = field(default_factory=dict)  # decision/revision id -> what is remembered of it
    # decision/revision id -> ts of the latest *human* entry naming it (a re-check)
    touched: dict[str, str] = field(default_factory=dict)
    # decision/revision id -> [[ts, entry id]] of agents' entries naming it after that:
    # a re-check only once a human approved the entry through review (`rechecked`)
    agent_touched: dict[str, list[list[str]]] = field(default_factory=dict)
    version: int = FOLD_VERSION
    _derived: Optional[Derived] = field(default=None, init=False, repr=False, compare=False)
    _named: Optional[set[str]] = field(default=None, init=False, repr=False, compare=False)
    _opens_by_prefix: Optional[dict[str, list[str]]] = field(default=None, init=False, repr=False, compare=False)

    def key_of(self, e: Entry) -> list[str]:
        return [f"{e.ts:%Y-%m-%dT%H:%M:%S.%f}", e.id]

    def accepts_after(self, entries: Iterable[Entry]) -> bool:
        """True when these entries can be folded onto what was folded (an ordinary
        append, or entries that sort earlier but change nothing already folded)."""
        if self.last is None:
            return True
        for e in entries:
            if self.key_of(e) > self.last:
                continue
            if e.kind in ("open", "bootstrap"):
                return False
            if e.kind != "relation":
                target = blocks.field(e.body, "pin")
                if target and target in e.parents:
                    return False
        return True

    def add(self, e: Folded, header: Optional[Mapping[str, str]] = None, key: Optional[list[str]] = None) -> None:
        """Fold one verified entry. A caller that already has its `header_of(e)` and its
        `key_of(e)` may pass them; then only id, kind, agent, provider, model, summary and
        parents are read from `e` (a cold cache build folds such slim records)."""
        if key is None or header is None:
            assert isinstance(e, Entry), "a slim record is folded with its key and header"
            key = key if key is not None else self.key_of(e)
            header = header if header is not None else header_of(e)
        ts, eid, kind, parents = key[0], e.id, e.kind, e.parents
        self.count += 1
        if self.last is None or key > self.last:
            self.last = key
        self._add_recent(e, ts)
        who = f"{e.provider}/{e.model}"
        self.contributors[who] = self.contributors.get(who, 0) + 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        named = self._decisions_and_revisions()
        for p in parents:
            if p in named:
                self._touch(p, ts, eid, e.agent == "human")
        if kind == "decision":
            self._remember_facts(e, header, ts)
            self._insert_sorted(self.decisions, eid, None, ts, eid)
            self._decisions_and_revisions().add(eid)
            if self._derived is not None:  # kept when certain (an append), else derived again when read
                self._derived = with_decision(self._derived, eid, self.facts, self.corrections)
        elif kind == "correction":
            self._derived = None
            revert = header.get("action") == "revert"
            if revert:
                self.keys[eid] = ts  # a revision's ts is in its facts
            else:
                self._remember_facts(e, header, ts)
            self._insert_sorted(self.corrections, [eid, list(parents), revert], _FIRST, ts, eid)
            if not revert:
                self._decisions_and_revisions().add(eid)
        elif kind == "open":
            self.opens.append(eid)
            if self._opens_by_prefix is not None:
                self._opens_by_prefix.setdefault(eid[:6], []).append(eid)
            self.keys[eid] = ts
        elif kind == "bootstrap":
            self.bootstraps.append(eid)
        if header:  # most entries have no header fields
            target = header.get("pin")
            if target and target in parents:
                self.pins.append([eid, target])
            if header.get("thread"):
                thread = self._thread_of(header["thread"], key)
                self._remember_order(e, ts)
                self._insert_sorted(self.threads.setdefault(thread, []), eid, None, ts, eid)
        if kind == "checkpoint":
            thread = self._thread_of(header.get("thread"), key)
            self._remember_order(e, ts)
            self._insert_sorted(self.checkpoints, [eid, thread], _FIRST, ts, eid)

    def _thread_of(self, ref: Optional[str], key: list[str]) -> str:
        """The thread an entry names, as a fold in (ts, id) order resolves it: a prefix
        resolves among the opens that sort before the entry."""
        ref = (ref or "").strip()
        if not ref or len(ref) == 64 or not _IDLIKE.fullmatch(ref):
            return thread_key(ref, ())
        # Only opens sharing the ref's first six characters can match it: looked up, not
        # scanned, so a fold of N thread entries and M opens is not N x M.
        if self._opens_by_prefix is None:
            self._opens_by_prefix = {}
            for o in self.opens:
                self._opens_by_prefix.setdefault(o[:6], []).append(o)
        near = self._opens_by_prefix.get(ref[:6], ())
        return thread_key(ref, [o for o in near if o.startswith(ref) and [self.keys.get(o, ""), o] <= key])

    def _remember_order(self, e: Folded, ts: str) -> None:
        """Keep what causal order needs of a thread member or checkpoint: its ts and its
        parents. (Every parent: whether one will be dated after it, or be delayed by its own
        parents, is not known when it is folded.)"""
        self.keys[e.id] = ts
        if e.parents:
            self.links[e.id] = list(e.parents)

    def ts_of(self, entry_id: str) -> str:
        """The ts key of an entry kept in one of the ordered lists ("" when not kept)."""
        return self.keys.get(entry_id) or self.facts.get(entry_id, {}).get("ts", "")

    def _insert_sorted(
        self, rows: list, row: object, id_of: Optional[Callable[[list], str]], ts: str, row_id: str
    ) -> None:
        """Insert `row` (of the entry `row_id` at `ts`; rows are ids when `id_of` is None) into
        `rows`, kept in (ts, id) order: from the end, so an append is O(1)."""
        new = (ts, row_id)
        i = len(rows)
        while i > 0:
            prev = rows[i - 1] if id_of is None else id_of(rows[i - 1])
            if (self.ts_of(prev), prev) <= new:
                break
            i -= 1
        rows.insert(i, row)

    def _add_recent(self, e: Folded, ts: str) -> None:
        meta, recent = self.recent_meta, self.recent
        new = (ts, e.id)
        if len(recent) >= RECENT_COUNT and new < (meta[recent[0]][0], recent[0]):
            return  # sorts before every recent entry: not one of the latest
        meta[e.id] = [ts, list(e.parents)]
        recent.append(e.id)
        if len(recent) > 1 and new < (meta[recent[-2]][0], recent[-2]):
            sort_in_order(recent, lambda i: meta[i][0], str)
        while len(recent) > RECENT_COUNT:
            del meta[recent.pop(0)]

    def _touch(self, target: str, ts: str, by: str, human: bool) -> None:
        """An entry naming a decision re-checks it when a human wrote it; an agent's entry
        is kept aside, and counts only once a human approved it (`rechecked`)."""
        if ts <= self.facts.get(target, {}).get("ts", ""):
            return  # named before it was made (clocks skew): not a re-check, in any fold order
        seen = self.touched.get(target, "")
        if human:
            if ts > seen:
                self.touched[target] = ts
                rows = [r for r in self.agent_touched.get(target, []) if r[0] > ts]
                if rows:
                    self.agent_touched[target] = rows
                else:
                    self.agent_touched.pop(target, None)
        elif ts > seen:
            rows = self.agent_touched.setdefault(target, [])
            if [ts, by] not in rows:
                rows.append([ts, by])
                rows.sort()

    def rechecked(self, approved: Iterable[str] = ()) -> dict[str, str]:
        """decision/revision id -> ts of its latest re-check: a human's entry naming it,
        or an agent's entry naming it that a human approved through review."""
        approved = set(approved)
        out = dict(self.touched)
        for target, rows in self.agent_touched.items():
            for ts, by in reversed(rows):
                if by in approved:
                    if ts > out.get(target, ""):
                        out[target] = ts
                    break
        return out

    def _decisions_and_revisions(self) -> set[str]:
        if self._named is None:
            self._named = set(self.decisions) | {c for c, _, revert in self.corrections if not revert}
        return self._named

    def _remember_facts(self, e: Folded, header: Mapping[str, str], ts: str) -> None:
        facts: Facts = {"ts": ts}
        if not header:  # nothing declared: the ts is all there is to remember
            self.facts[e.id] = facts
            return
        subject = subject_of(e.summary, header)
        if subject:
            facts["subject"] = subject
            facts["subject_key"] = subject_key(header["subject"])
        for key in REMEMBERED:
            # a `commit:` or `paths:` value that is not of its type is never remembered:
            # staleness hands these to git (verify reports the entry: core/headers.py)
            value = valid_value(key, header.get(key))
            if value:
                facts[key] = value
        self.facts[e.id] = facts

    def dated_before_a_parent(self) -> set[str]:
        """Checkpoints and thread members dated before one of their parents (the only ones
        for which causal order differs from (ts, id) order; usually none)."""
        keys = self.keys
        return {
            i for i, parents in self.links.items() if any(p in keys and (keys[p], p) > (keys[i], i) for p in parents)
        }

    def thread_order(self, key: str, extra: Iterable[str] = (), skewed: Optional[set[str]] = None) -> list[str]:
        """The entries of a thread (and `extra` ids), parents before children, then (ts, id).
        `skewed` is `dated_before_a_parent()` when the caller has it: a thread holding none
        of those is already in that order."""
        members = self.threads.get(key, [])
        ids = list(dict.fromkeys([*members, *extra])) if extra else list(members)
        if skewed is not None and not any(i in skewed for i in ids):
            return ids if not extra else sorted(ids, key=lambda i: (self.ts_of(i), i))
        return causal_order(ids, self.ts_of, lambda i: self.links.get(i, ()))

    def recent_order(self) -> list[str]:
        """The recent entries, parents before children, then (ts, id)."""
        meta = self.recent_meta
        return causal_order(
            list(self.recent), lambda i: meta[i][0] if i in meta else "", lambda i: meta[i][1] if i in meta else ()
        )

    @property
    def derived(self) -> Derived:
        """Supersession, carriers in force and their conflicts (computed once per change)."""
        if self._derived is None:
            self._derived = derive(self.decisions, self.corrections, self.facts)
        return self._derived

    @property
    def derived_kept(self) -> bool:
        """Whether the derived truth is at hand (kept across what was added since it was
        derived), so that reading it costs nothing."""
        return self._derived is not None

    @property
    def superseded(self) -> frozenset[str]:
        return self.derived.superseded

    def to_json(self) -> dict:
        """The fold as JSON, each id once (core/fold_text.py); equal folds give equal docs."""
        return dict(fold_text.sections(self))

    @classmethod
    def from_json(cls, doc: dict) -> "Fold":
        """What `to_json` wrote; ValueError for another version or a malformed doc."""
        return fold_text.decoded(cls, doc, FOLD_VERSION)


def fold(entries: Iterable[Entry], broken: Iterable[str] = ()) -> Fold:
    f = Fold()
    for e in sorted(entries, key=entry_order_key):
        f.add(e)
    f.broken = sorted(broken)
    return f


@dataclass
class Checkpoint:
    entry: Entry
    thread: str
    sections: dict[str, list[str]]  # section name -> items


class State:
    """The current truth of a fold; entries are fetched through `load` only when used."""

    def __init__(
        self,
        f: Fold,
        load: Callable[[str], Optional[Entry]],
        all_ids: Optional[Callable[[], list[str]]] = None,
        now: Optional[str] = None,
    ):
        self.fold = f
        self._load = load
        self._all_ids = all_ids
        self._memo: dict[str, Optional[Entry]] = {}
        self._conflicts: Optional[list[Conflict]] = None
        derived = f.derived
        self.superseded: frozenset[str] = derived.superseded
        # Validity windows are read at `now` (UTC, "YYYY-MM-DDTHH:MM:SS..."): the truth
        # changes when a window closes, without any new entry.
        self.now = now or utc_now_key()
        self.expired: list[str] = []  # in force but outside their window, newest expiry first
        in_force_carriers = []
        for i in derived.live:
            window = window_state(f.facts.get(i, {}), self.now)
            if window == "valid":
                in_force_carriers.append(i)
            elif window == "expired":
                self.expired.append(i)
        self.expired.sort(key=lambda i: f.facts[i].get("valid-until", ""), reverse=True)
        self.decision_ids: list[str] = in_force_carriers
        self.open_ids: list[str] = [i for i in f.opens if i not in self.superseded]
        self.contributors: dict[str, int] = f.contributors
        self.kinds: dict[str, int] = f.kinds
        self.broken: list[str] = f.broken
        self.count: int = f.count
        self.recent_ids: list[str] = f.recent_order()
        live_pins = [t for n, t in f.pins if n not in self.superseded]
        self.pinned: list[str] = []
        for t in live_pins:
            if t not in self.superseded and t not in self.pinned:
                self.pinned.append(t)
        self._skewed: set[str] = f.dated_before_a_parent()
        self.checkpoint_ids: dict[str, str] = self._latest_checkpoints()
        boots = [b for b in f.bootstraps if b not in self.superseded]
        # Two bootstraps in force (a clone bootstrapped before pulling the project's ledger):
        # the What is the latest, shown as a conflict with the others (docs/FORMAT.md).
        self.identities: list[str] = boots
        self.identity_id: Optional[str] = boots[-1] if boots else None
        self._threads: Optional[dict[str, list[str]]] = None
        self._standing: Optional[Standing] = None

    def _latest_checkpoints(self) -> dict[str, str]:
        """thread key -> its latest live checkpoint: the one that continues the thread
        (causality first), then the latest by (ts, id)."""
        f = self.fold
        live: dict[str, list[str]] = {}
        for cid, key in f.checkpoints:
            if cid in self.superseded:
                continue
            if _IDLIKE.fullmatch(key) and len(key) == 64 and key in self.superseded:
                continue  # the open this thread worked on was closed
            live.setdefault(key, []).append(cid)
        out = {}
        for key, cids in live.items():
            if len(cids) == 1 or not any(i in self._skewed for i in f.threads.get(key, cids)):
                out[key] = cids[-1]  # f.checkpoints is in (ts, id) order, and so is this thread
                continue
            wanted = set(cids)
            out[key] = [i for i in f.thread_order(key, cids, self._skewed) if i in wanted][-1]
        return out

    @property
    def threads(self) -> dict[str, list[str]]:
        """thread key -> its entries, parents before children, then (ts, id): the last is
        the thread's head."""
        if self._threads is None:
            self._threads = {k: self.fold.thread_order(k, skewed=self._skewed) for k in self.fold.threads}
        return self._threads

    @property
    def standing(self) -> Standing:
        """What each entry's status is read from (core/status.py), computed once."""
        if self._standing is None:
            f = self.fold
            self._standing = Standing.of(
                self.superseded, f.corrections, f.opens, self.decision_ids, self.expired, f.derived.live
            )
        return self._standing

    # ---- entries, fetched on demand ---------------------------------------
    def get(self, entry_id: str) -> Optional[Entry]:
        if entry_id not in self._memo:
            self._memo[entry_id] = self._load(entry_id)
        return self._memo[entry_id]

    @property
    def by_id(self) -> "_Lookup":
        return _Lookup(self)

    def _held(self, ids: Iterable[str]) -> list[Entry]:
        """The entries of `ids` (a fold names only entries the line holds)."""
        return [e for e in map(self.get, ids) if e is not None]

    @property
    def decisions(self) -> list[Entry]:
        return self._held(self.decision_ids)

    @property
    def identity(self) -> Optional[Entry]:
        return self.get(self.identity_id) if self.identity_id else None

    @property
    def recent(self) -> list[Entry]:
        return self._held(self.recent_ids)

    @property
    def head(self) -> Optional[Entry]:
        return self.get(self.recent_ids[-1]) if self.recent_ids else None

    @property
    def entries(self) -> list[Entry]:
        """Every entry, in order (loads them all: not for hot paths)."""
        return self._held(self._all_ids() if self._all_ids else [])

    @property
    def checkpoints(self) -> dict[str, Checkpoint]:
        out = {}
        for key, cid in self.checkpoint_ids.items():
            e = self.get(cid)
            if e is None:
                continue  # a fold names only entries the line holds
            sections = blocks.list_blocks(e.body)
            out[key] = Checkpoint(e, key, {s: sections.get(s, []) for s in blocks.CHECKPOINT_SECTIONS})
        return out

    def pin_notes_of(self, target: str) -> list[str]:
        return [n for n, t in self.fold.pins if t == target and n not in self.superseded]

    @property
    def conflict_groups(self) -> list[Conflict]:
        """Decisions in force that the ledger says are about the same thing (conflicts.py)."""
        if self._conflicts is None:
            self._conflicts = group_conflicts(self.fold.derived, self.fold.facts, self.decision_ids)
        return self._conflicts

    @property
    def conflicts(self) -> list[tuple[str, list[str]]]:
        """(label, ids) per conflict group: the subject, or "versions of <id8>"."""
        return [(g.label, list(g.ids)) for g in self.conflict_groups]

    def conflicts_of(self, entry_id: str) -> list[Conflict]:
        """The conflict groups a decision in force belongs to."""
        return [g for g in self.conflict_groups if entry_id in g.ids]

    def conflicting(self) -> dict[str, Rivals]:
        """decision id -> its Rivals (conflicts.py): the others it conflicts with, counted
        and listed on demand, linear in the groups' members."""
        return rivals(self.conflict_groups)


class _Lookup:
    """`state.by_id[x]` and `x in state.by_id` without loading every entry."""

    def __init__(self, st: State):
        self.st = st

    def __getitem__(self, entry_id: str) -> Entry:
        e = self.st.get(entry_id)
        if e is None:
            raise KeyError(entry_id)
        return e

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.st.get(entry_id) is not None


def reduce(entries: Iterable[Entry], now: Optional[str] = None) -> State:
    """State of an entry set; each entry's id is checked against its content."""
    valid: list[Entry] = []
    broken: list[Entry] = []
    for e in entries:
        (valid if e.verify() else broken).append(e)
    return reduce_verified(valid, [e.id for e in broken], now)


def reduce_verified(valid: Iterable[Entry], broken: Iterable[str], now: Optional[str] = None) -> State:
    """State of entries already checked (e.g. by the cache, which checks each blob once)."""
    ordered = sorted(valid, key=entry_order_key)
    by_id = {e.id: e for e in ordered}
    return State(fold(ordered, broken), by_id.get, lambda: [e.id for e in ordered], now)


def for_thread(st: State, key: str) -> State:
    """The brief a sub-agent gets: the thread's decisions pinned, its checkpoint as the
    only Resume, its own entries as Recent; everything else unchanged."""
    members = st.threads.get(key, [])
    in_force = set(st.decision_ids)
    brief = State(st.fold, st._load, st._all_ids, st.now)
    brief._memo = st._memo
    brief.pinned = list(st.pinned) + [i for i in members if i in in_force and i not in st.pinned]
    brief.checkpoint_ids = {k: v for k, v in st.checkpoint_ids.items() if k == key}
    brief.recent_ids = [i for i in members if st.get(i) is not None][-RECENT_COUNT:]
    return brief
