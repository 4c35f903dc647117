"""The sections of the context, drawn from the current truth, and the plan that ranks
every piece of detail against every other (context_pack walks it).

Ranking, most useful first: name every decision in force, open item and live
checkpoint (open items, checkpoints and hits within a share of the budget, so a
huge decision list cannot starve them); then the why of what changed last (pinned
and flagged decisions, corrections that carry the truth, newest first), the latest
checkpoint in full, each open item's next step; then the why of the other
decisions, newest first, incidents with their lesson, requirements and debt; then
who decided and when, older checkpoints in full, recent entries not shown above,
longer whys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from ..core import blocks
from ..core.entry import Entry, entry_order_key
from ..core.status import Status, status_of
from ..core.trust import Provenance
from ..core.truth import RECENT_COUNT, Checkpoint, State
from . import context_text as tx
from .context_pack import Group, Item, Items, Made, Section

if TYPE_CHECKING:  # annotations only
    from ..core.conflicts import Rivals

FOUNDATION_SHARE = 0.4  # when decisions must be left out: share of the oldest among those kept
CAPS = {"open": 0.2, "resume": 0.15, "relevant": 0.15}  # shares of the budget for naming them
NOTABLE_CAPS = {"requirements": 0.06, "incidents": 0.08, "debt": 0.05}  # before the other decisions' why
NOTABLE_KINDS = {"requirement": "requirements", "incident": "incidents", "debt": "debt"}
NOTABLE_SCAN = 1000
MIN_DECISION_LINE, MIN_OPEN_LINE = 40, 20  # typical shortest lines: a cheap bound on naming them all
EXPIRED_IN_RECENT = 3
CONFLICTS_FIRST = 8  # decisions in conflict named before the others: a pusher can make any number
PLACEHOLDER_WORD = "xxxxx "


@dataclass
class ContextInput:
    """What the context is made of (views/context.py assembles it)."""

    state: State
    line: str
    head_commit: Optional[str]
    relevant: list[tuple[Entry, Status]] = field(default_factory=list)  # (entry, its status)
    query: Optional[str] = None
    thread: Optional[str] = None
    stale: dict[str, str] = field(default_factory=dict)  # decision id -> staleness mark
    stale_unknown: Optional[str] = None  # once, for all: a shallow clone cannot tell (history.StaleFindings)
    conflicts: dict[str, Rivals] = field(default_factory=dict)  # decision id -> its Rivals
    empty_text: Optional[str] = None  # what an empty ledger says instead of asking for a bootstrap
    notice: str = ""  # first lines: what the reader must know before trusting the rest (the line is behind)
    provenance: Provenance = field(default_factory=Provenance)  # each item's trust tier (core/trust.py)


def placeholder(chars: int) -> str:
    return (PLACEHOLDER_WORD * (chars // len(PLACEHOLDER_WORD) + 1))[:chars]


def notable_ids(st: State, limit: int) -> dict[str, list[str]]:
    """section key -> ids of live requirements, incidents and debt, newest first.

    The fold keeps no ids of these kinds (a State may offer them as `notable_ids`,
    kind -> live ids in fold order); without them they are found by walking back from
    the newest entry, at most NOTABLE_SCAN entries, and only when the budget can show
    them at all (when naming the decisions and open items alone would overflow it,
    they could not appear and the walk is skipped)."""
    out: dict[str, list[str]] = {key: [] for key in NOTABLE_KINDS.values()}
    given = getattr(st, "notable_ids", None)
    if isinstance(given, dict):
        for kind, key in NOTABLE_KINDS.items():
            out[key] = list(reversed(given.get(kind, [])))
        return out
    left = sum(st.kinds.get(k, 0) for k in NOTABLE_KINDS)
    all_ids = getattr(st, "_all_ids", None)
    floor = MIN_DECISION_LINE * len(st.decision_ids) + MIN_OPEN_LINE * len(st.open_ids)
    if not left or all_ids is None or floor > limit:
        return out
    for entry_id in reversed(all_ids()[-NOTABLE_SCAN:]):
        e = st.get(entry_id)
        if e is None or e.kind not in NOTABLE_KINDS:
            continue
        if entry_id not in st.superseded:
            out[NOTABLE_KINDS[e.kind]].append(entry_id)
        left -= 1
        if not left:
            break
    return out


def decision_notes(inp: ContextInput, entry_id: str) -> tuple[str, ...]:
    notes = []
    rivals = inp.conflicts.get(entry_id)
    if rivals is not None:
        subject = inp.state.fold.facts.get(entry_id, {}).get("subject", "")
        notes.append(tx.conflict_note(rivals.first(tx.CONFLICT_NOTE_IDS), rivals.count, subject))
    if entry_id in inp.stale:
        notes.append(tx.stale_note(inp.stale[entry_id]))
    return tuple(notes)


def include_order(ids: list[str], first: list[str]) -> list[str]:
    """Which decisions to name first when not all fit: `first`, then the newest and the
    oldest (the foundation) interleaved so that about FOUNDATION_SHARE are the oldest."""
    chosen = set(first)
    rest = [i for i in ids if i not in chosen]
    out = list(first)
    lo, hi, old = 0, len(rest) - 1, 0
    while lo <= hi:
        if old < FOUNDATION_SHARE * (len(out) - len(first) + 1):
            out.append(rest[lo])
            lo, old = lo + 1, old + 1
        else:
            out.append(rest[hi])
            hi -= 1
    return out


class Plan:
    """Sections in output order and the ranked steps over their items."""

    def __init__(self, inp: ContextInput, limit: int):
        self.inp, self.st, self.limit = inp, inp.state, limit
        self.tag: Callable[[Entry], str] = lambda e: tx.trust_tag(inp.provenance.tier(e))
        self.groups: list[Group] = []
        self.what = self._what()
        self.decisions, self.by_id = self._decisions()
        self.open = self._open()
        self.resume = self._resume()
        self.relevant = self._relevant()
        notable = notable_ids(self.st, limit)
        self.requirements = self._notables("requirements", "Requirements", "requirement(s)", notable, tx.plain, 2)
        self.incidents = self._notables(
            "incidents", "Incidents and their lessons", "incident(s)", notable, tx.incident, 1
        )
        self.debt = self._notables("debt", "Debt", "debt item(s)", notable, tx.plain, 2)
        self.recent = self._recent()
        # The stable part is planned against a Recent of its usual size: how many recent
        # entries are not shown above changes with every append.
        self.recent_plan = Section(
            "recent-plan",
            "Recent",
            "entr(ies)",
            [Item("", lambda lv: "", 0, lambda lv: placeholder(72) + "\n") for _ in range(RECENT_COUNT)],
        )
        self.sections = [
            self.what,
            self.decisions,
            self.open,
            self.resume,
            self.relevant,
            self.requirements,
            self.incidents,
            self.debt,
            self.recent,
        ]
        self._rank()

    # ---- sections ------------------------------------------------------------
    def _what(self) -> Section:
        e = self.st.identity
        items = [Item(e.id, lambda lv: tx.identity(e, lv, self.tag(e)), 2)] if e is not None else []
        return Section("what", "", "identity", items, stable=True, header=False)

    def _decisions(self) -> tuple[Section, _LazyItems]:
        st, inp = self.st, self.inp
        in_force = set(st.decision_ids)
        pinned = [i for i in st.pinned if i in in_force]
        pin_set = set(pinned)
        ordered = pinned + [i for i in st.decision_ids if i not in pin_set]

        def item(i: str) -> Item:
            notes = decision_notes(inp, i)
            return Item(i, lambda lv: tx.decision(st.by_id[i], lv, i in pin_set, notes, self.tag(st.by_id[i])), 3)

        # Items are made lazily: a ledger of 30,000 decisions renders only those considered.
        items = _LazyItems(ordered, item)
        sec = Section(
            "decisions", f"Decisions in force ({len(ordered)})", "decision(s)", items, stable=True, essential=True
        )
        return sec, items

    def _open(self) -> Section:
        st = self.st

        def made(i: str) -> Made:
            cp_id = st.checkpoint_ids.get(i)
            steps = blocks.list_blocks(st.by_id[cp_id].body).get("next") if cp_id else None
            nxt = steps[0] if steps else ""
            tag = self.tag(st.by_id[i])
            estimate = (lambda lv: tx.open_item(st.by_id[i], lv, placeholder(60), tag)) if cp_id else None
            return (lambda lv: tx.open_item(st.by_id[i], lv, nxt, tag)), 1 if nxt else 0, estimate

        items = [Item.deferred(i, partial(made, i)) for i in st.open_ids]
        return Section("open", "Open", "open item(s)", items, essential=True)

    def _resume(self) -> Section:
        st = self.st
        cps = sorted(st.checkpoints.values(), key=lambda c: entry_order_key(c.entry), reverse=True)

        def name_of(cp: Checkpoint) -> str:
            opened = st.get(cp.thread) if len(cp.thread) == 64 else None
            return opened.summary if opened is not None else cp.thread

        def estimate(cp: Checkpoint, name: str) -> Callable[[int], str]:
            # A thread's name is structure, its steps change with every checkpoint. The
            # full form costs the compact line plus a fixed amount, so the estimate of the
            # whole section does not depend on which thread moved last.
            line = f"- **{tx.md(name)}** `[{cp.entry.short}]`{self.tag(cp.entry)} next: {placeholder(tx.NEXT_WIDTH)}\n"
            return lambda lv: line if lv == 0 else line + placeholder(240) + "\n"

        items = [
            Item(
                cp.entry.id,
                partial(tx.checkpoint, cp, name_of(cp), tag=self.tag(cp.entry)),
                1,
                estimate(cp, name_of(cp)),
            )
            for cp in cps
        ]
        self.thread_of = {cp.entry.id: cp.thread for cp in cps}
        return Section("resume", "Resume", "checkpoint(s)", items, essential=True)

    def _relevant(self) -> Section:
        title = f"Relevant to: {tx.md(tx.cut(tx.one_line(self.inp.query or ''), 80))}"
        items = [Item(e.id, partial(tx.hit, e, status=status, tag=self.tag(e)), 2) for e, status in self.inp.relevant]
        return Section("relevant", title, "hit(s)", items, essential=True)

    def _notables(
        self,
        key: str,
        title: str,
        noun: str,
        notable: dict[str, list[str]],
        render: Callable[[Entry, int, str], str],
        top: int,
    ) -> Section:
        ids = notable.get(key, [])
        if key == "requirements":
            ids = list(reversed(ids))  # requirements read oldest first, like the decisions
        items = [Item(i, partial(self._render, render, i), top) for i in ids]
        return Section(key, f"{title} ({len(items)})", noun, items)

    def _recent(self) -> Section:
        st = self.st
        shown = set(st.decision_ids) | set(st.open_ids) | set(st.checkpoint_ids.values())
        shown |= {e.id for e, _ in self.inp.relevant}
        for sec in (self.requirements, self.incidents, self.debt):
            shown |= {it.anchor for it in sec.items}
        if st.identity_id:
            shown.add(st.identity_id)
        expired = st.expired[:EXPIRED_IN_RECENT]
        ids = expired + [i for i in reversed(st.recent_ids) if i not in expired and i not in shown]

        def render(i: str, level: int) -> str:
            if i in expired:
                mark = f" _(expired {tx.md(st.fold.facts[i]['valid-until'])})_"
            else:
                mark = tx.replaced_mark(status_of(st, i))
            return tx.recent(st.by_id[i], mark, self.tag(st.by_id[i]))

        items = [Item(i, partial(render, i), 0, lambda lv: placeholder(72) + "\n") for i in ids]
        return Section("recent", "Recent", "entr(ies)", items)

    def _render(self, render: Callable[[Entry, int, str], str], entry_id: str, level: int) -> str:
        e = self.st.by_id[entry_id]
        return render(e, level, self.tag(e))

    # ---- ranking -------------------------------------------------------------
    def _rank(self) -> None:
        st, limit, add, dec = self.st, self.limit, self._add, self._dec
        caps = {k: int(limit * share) for k, share in CAPS.items()}
        in_force = st.decision_ids
        live = set(in_force)
        pinned = [i for i in st.pinned if i in live]
        flagged = _flagged(in_force, self.inp.conflicts, self.inp.stale)
        fixes = {row[0] for row in st.fold.corrections}
        corrections = [i for i in reversed(in_force) if i in fixes]
        changed = _unique(pinned + flagged + corrections)  # whose why is the current truth of a change
        newest = list(reversed(in_force))
        what = self.what.items

        # 1. name: the identity, pinned decisions, open items, checkpoints and hits (within shares), decisions
        add(self.what, what, 0)
        dec(pinned, 0)
        add(self.open, self.open.items, 0, caps["open"])
        add(self.resume, self.resume.items, 0, caps["resume"], by_thread=True)
        add(self.relevant, self.relevant.items, 0, caps["relevant"])
        dec(include_order(self.by_id.order, changed), 0)
        for sec in (self.open, self.resume, self.relevant):
            add(sec, sec.items, 0, by_thread=sec is self.resume)
        # 2. the why of what changed last; where work stopped; next steps; a little of the rest
        add(self.what, what, 1)
        add(self.relevant, self.relevant.items, 1)
        dec(changed, 1)
        add(self.resume, list(self.resume.items)[:1], 1)
        add(self.open, self.open.items, 1)
        for key, sec in (("requirements", self.requirements), ("incidents", self.incidents), ("debt", self.debt)):
            add(sec, sec.items, 0, int(limit * NOTABLE_CAPS[key]))
        # 3. the why of every other decision, newest first; the rest of the incidents, requirements, debt
        dec(newest, 1)
        for sec in (self.incidents, self.requirements, self.debt):
            add(sec, sec.items, 0)
        # 4. who decided and when, older checkpoints, what else happened lately, longer whys
        dec(changed, 2)
        add(self.resume, list(self.resume.items)[1:], 1)
        add(self.recent_plan, self.recent_plan.items, 0)
        add(self.recent, self.recent.items, 0)
        dec(newest, 2)
        add(self.relevant, self.relevant.items, 2)
        for sec in (self.requirements, self.debt, self.incidents):
            add(sec, sec.items, 1)
        add(self.what, what, 2)
        dec(_unique(changed + newest), 3)
        add(self.requirements, self.requirements.items, 2)
        add(self.debt, self.debt.items, 2)

    def _add(self, sec: Section, items: Items, level: int, cap: Optional[int] = None, by_thread: bool = False) -> None:
        if items:
            stable_order = sorted(items, key=lambda it: self.thread_of[it.anchor]) if by_thread else None
            self.groups.append(
                Group(sec, lambda: items, level, cap, (lambda: stable_order) if stable_order is not None else None)
            )

    def _dec(self, ids: list[str], level: int) -> None:
        if ids:
            self.groups.append(Group(self.decisions, lambda: (self.by_id[i] for i in ids), level))


def _flagged(in_force: list[str], conflicts: dict[str, Rivals], stale: dict[str, str]) -> list[str]:
    """The flagged decisions whose why is named first: every stale one, and at most
    CONFLICTS_FIRST of those in conflict. Anyone who can push can record decisions that
    conflict (docs/SECURITY.md); were they all named first, 150 of them on one subject
    would leave no budget to name the team's other decisions in force."""
    out: list[str] = []
    left = CONFLICTS_FIRST
    for i in in_force:
        if i in stale:
            out.append(i)
        elif i in conflicts and left > 0:
            out.append(i)
            left -= 1
    return out


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


class _LazyItems:
    """The decisions' items in display order, each made when first asked for by id;
    iterating yields a stand-in for each item never asked for (not shown)."""

    def __init__(self, order: list[str], make: Callable[[str], Item]):
        self.order = order
        self._make = make
        self._made: dict[str, Item] = {}

    def __getitem__(self, entry_id: str) -> Item:
        if entry_id not in self._made:
            self._made[entry_id] = self._make(entry_id)
        return self._made[entry_id]

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self) -> Iterator[Item]:
        for i in self.order:
            yield self._made[i] if i in self._made else _Unmade(i)


class _Unmade(Item):
    """An item never considered: not shown, named by the marker (only its anchor is set)."""

    __slots__ = ()
    level = -1  # read-only: an item never made is never shown

    def __init__(self, anchor: str) -> None:
        self.anchor = anchor
