"""Assemble what a fresh AI reads: compact markdown within a hard budget.

Layout: a stable prefix (identity, decisions in force) that a provider's prompt
cache can reuse, then a volatile tail (integrity, open, resume, relevant, recent,
footer). Every item carries its anchor (`[id8]`). The budget is a hard limit at
every size: items are whole or absent, every omission is stated with the omitted
ids, and below the size of the smallest honest answer the output is empty.

Items are rendered only when considered, so the cost follows the budget, not the
ledger: a section of 30,000 decisions renders the few dozen that fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..core import blocks
from ..core.truth import State

WHY_STEPS = (320, 160, 96)
FOUNDATION_SHARE = 0.4
MARKER_IDS = 8
MIN_DECISION_LINE = 40  # no rendered decision line is shorter: a cheap lower bound
# Soft caps for the volatile sections, as shares of the budget; what they leave goes
# to the decisions, and what is still left is offered to them again.
SECTION_SHARE = {"open": 0.25, "resume": 0.2, "relevant": 0.2, "recent": 0.1}

Measure = Callable[[str], int]


@dataclass
class Item:
    anchor: str   # the entry id this item stands on
    text: str     # complete lines, newline-terminated


@dataclass
class Section:
    """A titled list of items drawn lazily from `ids` by `make`."""

    title: str
    ids: list
    make: Callable[[str], Item]
    noun: str
    head: list = field(default_factory=list)     # items kept before the marker
    tail: list = field(default_factory=list)     # items kept after it
    omitted: list = field(default_factory=list)  # ids left out

    @property
    def kept(self) -> list:
        return self.head + self.tail

    def render(self) -> str:
        if not self.head and not self.tail and not self.omitted:
            return ""
        marker = omission_marker(self.noun, self.omitted) if self.omitted else ""
        return (f"## {self.title}\n" + "".join(i.text for i in self.head) + marker
                + "".join(i.text for i in self.tail) + "\n")


@dataclass
class ContextParts:
    stable: str
    volatile: str

    @property
    def text(self) -> str:
        return self.stable + self.volatile


def omission_marker(noun: str, ids: list) -> str:
    shown = ", ".join(i[:8] for i in ids[:MARKER_IDS])
    more = f" +{len(ids) - MARKER_IDS} more" if len(ids) > MARKER_IDS else ""
    return f"_[… {len(ids)} {noun} omitted for the budget: {shown}{more}]_\n"


def worst_marker(noun: str, count: int) -> str:
    """The longest marker `count` omissions can produce (to reserve room for it)."""
    shown = ", ".join(["0" * 8] * min(count, MARKER_IDS))
    more = f" +{count - MARKER_IDS} more" if count > MARKER_IDS else ""
    return f"_[… {count} {noun} omitted for the budget: {shown}{more}]_\n"


# Structural blocks (an origin anchor, labels...) are not the why: the excerpt stops there.
_STRUCTURE_BLOCK = re.compile(r"(?m)^(?:origin|labels|spec|status):[ \t]*$")


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def excerpt(body: str, width: int) -> str:
    """The why as one line, cut at a word boundary with an explicit ellipsis."""
    if width <= 0:
        return ""
    text = one_line(_STRUCTURE_BLOCK.split(blocks.strip_header(body), 1)[0])
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def who(e) -> str:
    """Author name (without the email), and the model when an agent wrote it."""
    name = e.author.split(" <", 1)[0]
    if e.agent == "human" and e.provider == "none":
        return name
    return f"{name} ({e.agent} via {e.provider}/{e.model})"


def decision_item(e, width: int, pinned: bool, notes: tuple = ()) -> Item:
    pin = " (pinned)" if pinned else ""
    text = f"- **{e.summary}** `[{e.short}]`{pin} — {who(e)}, {e.ts:%Y-%m-%d}\n"
    why = excerpt(e.body, width)
    if why:
        text += f"  > {why}\n"
    for note in notes:  # warnings travel with their decision: never dropped apart from it
        text += f"  {note}\n"
    return Item(e.id, text)


def decision_notes(inp: "ContextInput", entry_id: str) -> tuple:
    notes = []
    others = inp.conflicts.get(entry_id)
    if others:
        subject = inp.state.fold.facts.get(entry_id, {}).get("subject", "")
        ids = ", ".join(f"[{o[:8]}]" for o in others)
        notes.append(f"⚠ conflicts with {ids} on '{subject}': both are in force; record a correction")
    if entry_id in inp.stale:
        notes.append(inp.stale[entry_id])
    return tuple(notes)


def fit_items(section: Section, limit: int, measure: Measure) -> int:
    """Keep the longest prefix of items that fits with its marker; returns the cost,
    or -1 when not even the marker fits (then nothing of the section is shown)."""
    section.head, section.tail, section.omitted = [], [], []
    ids = section.ids
    if not ids:
        return 0
    used = measure(f"## {section.title}\n") + 1
    kept = []
    for n, entry_id in enumerate(ids):
        item = section.make(entry_id)
        cost = measure(item.text)
        rest = len(ids) - n - 1
        reserve = measure(worst_marker(section.noun, rest)) if rest else 0
        if used + cost + reserve > limit:
            break
        kept.append(item)
        used += cost
    omitted = ids[len(kept):]
    if omitted:
        marker = measure(omission_marker(section.noun, omitted))
        if used + marker > limit:
            return -1
        used += marker
    section.head, section.omitted = kept, list(omitted)
    return used


@dataclass
class ContextInput:
    state: State
    line: str
    head_commit: Optional[str]
    relevant: list = field(default_factory=list)   # (entry, in_force)
    query: Optional[str] = None
    thread: Optional[str] = None
    stale: dict = field(default_factory=dict)      # decision id -> staleness mark
    conflicts: dict = field(default_factory=dict)  # decision id -> ids it conflicts with


def pack_decisions(inp: ContextInput, limit: int, measure: Measure) -> Section:
    """All decisions if they fit (shrinking the why first); else pinned + oldest
    (up to a share of the room) + newest, the middle replaced by a marker that
    lists the omitted ids."""
    st = inp.state
    in_force = set(st.decision_ids)
    pinned = [i for i in st.pinned if i in in_force]
    pin_set = set(pinned)
    others = [i for i in st.decision_ids if i not in pin_set]
    ordered = pinned + others
    title = f"Decisions in force ({len(ordered)})"

    def make(width):
        return lambda i: decision_item(st.get(i), width, i in pin_set, decision_notes(inp, i))

    sec = Section(title, ordered, make(WHY_STEPS[-1]), "decision(s)")
    if not ordered:
        return sec
    base = measure(f"## {title}\n") + 1
    if base + len(ordered) * MIN_DECISION_LINE <= limit:
        for width in WHY_STEPS + (0,):
            items = [make(width)(i) for i in ordered]
            if base + sum(measure(it.text) for it in items) <= limit:
                sec.head = items
                return sec
    room = limit - base - measure(worst_marker("decision(s)", len(ordered)))
    if room < 0:
        return sec  # nothing shown; the footer counts the omission
    used = 0
    head, tail = [], []

    def take(entry_id, into, cap) -> bool:
        nonlocal used
        item = sec.make(entry_id)
        c = measure(item.text)
        if used + c > cap:
            return False
        used += c
        into.append(item)
        return True

    for i in pinned:
        if not take(i, head, room):
            break
    foundation = used + int(room * FOUNDATION_SHARE)
    n = 0
    while n < len(others) and take(others[n], head, min(room, foundation)):
        n += 1
    m = len(others)
    while m > n and take(others[m - 1], tail, room):
        m -= 1
    tail.reverse()
    kept = {it.anchor for it in head + tail}
    sec.head, sec.tail = head, tail
    sec.omitted = [i for i in ordered if i not in kept]
    return sec


def _open_section(inp: ContextInput) -> Section:
    st = inp.state

    def make(i):
        o = st.get(i)
        cp_id = st.checkpoint_ids.get(i)
        nxt = ""
        if cp_id:
            items = blocks.list_blocks(st.get(cp_id).body).get("next")
            nxt = f" — next: {one_line(items[0])}" if items else ""
        return Item(i, f"- `[{o.short}]` {o.summary}{nxt}\n")
    return Section("Open", st.open_ids, make, "open item(s)")


def _resume_section(inp: ContextInput) -> Section:
    st = inp.state
    cps = st.checkpoints
    order = sorted(cps.values(), key=lambda c: (c.entry.ts, c.entry.id), reverse=True)
    by_entry = {c.entry.id: c for c in order}

    def make(i):
        cp = by_entry[i]
        name = cp.thread
        if len(cp.thread) == 64 and st.get(cp.thread) is not None:
            name = st.get(cp.thread).summary
        text = f"- **{name}** `[{cp.entry.short}]` — {who(cp.entry)}, {cp.entry.ts:%Y-%m-%d}: {cp.entry.summary}\n"
        for sec in blocks.CHECKPOINT_SECTIONS:
            for item in cp.sections.get(sec, []):
                text += f"  - {sec}: {one_line(item)}\n"
        return Item(i, text)
    return Section("Resume", [c.entry.id for c in order], make, "checkpoint(s)")


def _relevant_section(inp: ContextInput) -> Section:
    flags = {e.id: (e, in_force) for e, in_force in inp.relevant}

    def make(i):
        e, in_force = flags[i]
        mark = "" if in_force else " _(superseded)_"
        return Item(i, f"- `[{e.short}]` {e.kind}: {e.summary}{mark}\n")
    return Section(f"Relevant to: {one_line(inp.query or '')}", list(flags), make, "hit(s)")


EXPIRED_IN_RECENT = 3


def _recent_section(inp: ContextInput) -> Section:
    st = inp.state
    expired = st.expired[:EXPIRED_IN_RECENT]

    def make(i):
        e = st.get(i)
        if i in expired:
            mark = f" _(expired {st.fold.facts[i]['valid-until']})_"
        else:
            mark = " _(superseded)_" if i in st.superseded else ""
        return Item(i, f"- `[{e.short}]` {e.kind}: {e.summary}{mark}\n")
    ids = expired + [i for i in reversed(st.recent_ids) if i not in expired]
    return Section("Recent", ids, make, "entr(ies)")


def _integrity_text(st: State) -> str:
    if not st.broken:
        return ""
    ids = ", ".join(i[:8] for i in st.broken[:MARKER_IDS])
    more = f" +{len(st.broken) - MARKER_IDS} more" if len(st.broken) > MARKER_IDS else ""
    one = len(st.broken) == 1
    return (f"## Integrity warning\n{len(st.broken)} entr{'y' if one else 'ies'} "
            f"failed verification and {'was' if one else 'were'} left out: {ids}{more}. "
            "Run `git lifeline verify`.\n\n")


def footer(inp: ContextInput, omitted: int, short: bool = False) -> str:
    st = inp.state
    head = st.fold.recent[-1][:8] if st.fold.recent else "none"
    text = f"_{st.count} entries · head {head}"
    if not short:
        text += f" · line {inp.line}"
    if omitted:
        text += f" · {omitted} item(s) omitted for the budget"
    return text + "_\n"


def assemble(inp: ContextInput, budget: Optional[int] = None, measure: Measure = len) -> ContextParts:
    st = inp.state
    limit = budget if budget is not None else 10 ** 12
    title = f"# Lifeline context: {inp.line}" + (f", thread {inp.thread}" if inp.thread else "") + "\n"
    what = ""
    if st.identity is not None:
        what = f"**What:** {st.identity.summary} `[{st.identity.short}]`\n"
        why = excerpt(st.identity.body, WHY_STEPS[0])
        if why:
            what += f"> {why}\n"
    elif not st.count:
        what = ("_The ledger is empty. Record the project's why: "
                "`git lifeline log --kind bootstrap --summary \"...\" --body \"...\"`_\n")

    sections = {"open": _open_section(inp), "resume": _resume_section(inp),
                "relevant": _relevant_section(inp), "recent": _recent_section(inp)}
    worst = len(st.decision_ids) + sum(len(s.ids) for s in sections.values())
    # The footer is reserved first, at its largest possible size: it anchors the
    # whole payload. Below the smallest footer nothing honest fits.
    short = False
    used = measure(footer(inp, worst))
    if used > limit:
        short = True
        used = measure(footer(inp, worst, short=True))
        if used > limit:
            return ContextParts("", "")

    def take(piece: str) -> str:
        nonlocal used
        if piece and used + measure(piece) <= limit:
            used += measure(piece)
            return piece
        return ""

    integrity = _integrity_text(st)
    integrity_p = take(integrity)
    if integrity and not integrity_p:  # never silently: at least the count
        integrity_p = take(f"_{len(st.broken)} entries failed verification._\n")
    title_p = take(title)
    what_p = take(what)
    gap = take("\n") if (title_p or what_p) else ""

    remaining = limit - used
    for key in ("open", "resume", "relevant"):
        cap = int(limit * SECTION_SHARE[key])
        remaining -= max(0, fit_items(sections[key], min(cap, remaining), measure))
    recent_cap = int(limit * SECTION_SHARE["recent"])
    dec = pack_decisions(inp, max(0, remaining - min(recent_cap, remaining)), measure)
    remaining -= measure(dec.render())
    remaining -= max(0, fit_items(sections["recent"], remaining, measure))
    for key in ("open", "resume", "relevant"):  # give back what the caps left unused
        sec = sections[key]
        if sec.omitted and remaining > 0:
            before = measure(sec.render())
            after = fit_items(sec, before + remaining, measure)
            remaining -= max(0, after) - before

    shown = sum(len(s.kept) for s in sections.values()) + len(dec.kept)
    omitted = worst - shown
    stable = title_p + what_p + gap + dec.render()
    volatile = (integrity_p + "".join(sections[k].render() for k in ("open", "resume", "relevant", "recent"))
                + footer(inp, omitted, short))
    parts = ContextParts(stable, volatile)
    if budget is not None and measure(parts.text) > limit:
        # Only non-additive measures (token estimates) can land here; shrink and retry.
        return assemble(inp, budget - max(1, measure(parts.text) - limit), measure)
    return parts
