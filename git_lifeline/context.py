"""Assemble what a fresh AI reads: compact markdown within a hard budget.

Layout: a stable prefix (identity, decisions in force) that a provider's prompt
cache can reuse, then a volatile tail (integrity, open, resume, relevant, recent,
footer). Every item carries its anchor (`[id8]`). The budget is a hard limit at
every size: items are whole or absent, every omission is stated with the omitted
ids, and below the size of the smallest honest answer the output is empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import blocks
from .model import Entry
from .state import State

WHY_STEPS = (320, 160, 96)
FOUNDATION_SHARE = 0.4
MARKER_IDS = 8
# Soft caps for the volatile sections, as shares of the budget; what they leave goes
# to the decisions, and whatever is still left is offered to them again.
SECTION_SHARE = {"open": 0.25, "resume": 0.2, "relevant": 0.2, "recent": 0.1}

Measure = Callable[[str], int]


@dataclass
class Item:
    anchor: str   # the entry id this item stands on
    text: str     # complete lines, newline-terminated


@dataclass
class Section:
    key: str
    title: str
    items: list
    noun: str
    kept: list = field(default_factory=list)
    omitted: list = field(default_factory=list)
    marker_at: Optional[int] = None  # where the omission marker stands among kept (default: end)

    def render(self) -> str:
        if not self.kept and not self.omitted:
            return ""
        marker = omission_marker(self.noun, [i.anchor for i in self.omitted]) if self.omitted else ""
        at = len(self.kept) if self.marker_at is None else self.marker_at
        body = "".join(i.text for i in self.kept[:at]) + marker + "".join(i.text for i in self.kept[at:])
        return f"## {self.title}\n" + body + "\n"


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


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def excerpt(body: str, width: int) -> str:
    """The why as one line, cut at a word boundary with an explicit ellipsis."""
    text = one_line(blocks.strip_header(body))
    if width <= 0 or not text:
        return ""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def who(e: Entry) -> str:
    """Author name (without the email), and the model when an agent wrote it."""
    name = e.author.split(" <", 1)[0]
    if e.agent == "human" and e.provider == "none":
        return name
    return f"{name} ({e.agent} via {e.provider}/{e.model})"


def decision_item(e: Entry, width: int, pinned: bool) -> Item:
    pin = " (pinned)" if pinned else ""
    text = f"- **{e.summary}** `[{e.short}]`{pin} — {who(e)}, {e.ts:%Y-%m-%d}\n"
    why = excerpt(e.body, width)
    if why:
        text += f"  > {why}\n"
    return Item(e.id, text)


def _fits(measure: Measure, text: str, limit: int) -> bool:
    return measure(text) <= limit


def fit_items(section: Section, limit: int, measure: Measure) -> int:
    """Keep the longest prefix of items that fits with its marker; returns the cost,
    or -1 when not even the marker fits (then nothing of the section is shown).
    Costs are summed per item, so this is linear in the number of items."""
    items = section.items
    section.kept, section.omitted = [], []
    if not items:
        return 0
    base = measure(f"## {section.title}\n") + 1
    costs = [measure(i.text) for i in items]
    total = base + sum(costs)
    if total <= limit:
        section.kept = list(items)
        return total
    used = base
    n = 0
    while n < len(items):
        marker = measure(omission_marker(section.noun, [i.anchor for i in items[n + 1:]]))
        if used + costs[n] + marker > limit:
            break
        used += costs[n]
        n += 1
    marker = measure(omission_marker(section.noun, [i.anchor for i in items[n:]]))
    if used + marker > limit:
        return -1
    section.kept, section.omitted = items[:n], items[n:]
    return used + marker


@dataclass
class ContextInput:
    state: State
    line: str
    head_commit: Optional[str]
    relevant: list = field(default_factory=list)   # (Entry, in_force: bool)
    query: Optional[str] = None
    thread: Optional[str] = None


def _ordered_decisions(st: State) -> tuple[list, list]:
    in_force = {d.id for d in st.decisions}
    pinned = [st.by_id[i] for i in st.pinned if i in in_force]
    pinned_ids = {d.id for d in pinned}
    return pinned, [d for d in st.decisions if d.id not in pinned_ids]


def pack_decisions(inp: ContextInput, limit: int, measure: Measure) -> Section:
    """All decisions if they fit (shrinking the why first); else pinned + oldest
    (up to a share of the room) + newest, the middle replaced by a marker that
    lists the omitted ids. Items are rendered only as they are considered."""
    st = inp.state
    pinned, others = _ordered_decisions(st)
    ordered = pinned + others
    title = f"Decisions in force ({len(ordered)})"
    if not ordered:
        return Section("decisions", title, [], "decision(s)")
    pin_ids = {d.id for d in pinned}
    base = measure(f"## {title}\n") + 1
    # Lower bound: the first line of every item. When even that overflows, skip the
    # shrink steps (each would render every decision) and pack directly.
    floor = base + sum(measure(decision_item(d, 0, d.id in pin_ids).text) for d in ordered)
    if floor <= limit:
        for width in WHY_STEPS + (0,):
            items = [decision_item(d, width, d.id in pin_ids) for d in ordered]
            if base + sum(measure(i.text) for i in items) <= limit:
                sec = Section("decisions", title, items, "decision(s)")
                sec.kept = items
                return sec
    width = WHY_STEPS[-1]
    fake = [d.id for d in ordered[:MARKER_IDS]]
    reserve = measure(omission_marker("decision(s)", fake + ["x" * 8] * (len(ordered) - len(fake))))
    room = limit - base - reserve
    if room < 0:
        return Section("decisions", title, [], "decision(s)")
    used = 0
    head, tail = [], []

    def take(d, into, cap) -> bool:
        nonlocal used
        item = decision_item(d, width, d.id in pin_ids)
        c = measure(item.text)
        if used + c > cap:
            return False
        used += c
        into.append(item)
        return True

    for d in pinned:
        if not take(d, head, room):
            break
    foundation = used + int(room * FOUNDATION_SHARE)
    i = 0
    while i < len(others) and take(others[i], head, min(room, foundation)):
        i += 1
    j = len(others)
    while j > i and take(others[j - 1], tail, room):
        j -= 1
    tail.reverse()
    kept_ids = {it.anchor for it in head + tail}
    sec = Section("decisions", title, [], "decision(s)")
    sec.kept = head + tail
    sec.marker_at = len(head)
    sec.omitted = [Item(d.id, "") for d in ordered if d.id not in kept_ids]
    sec.items = sec.kept + sec.omitted
    return sec


def _open_items(inp: ContextInput) -> list:
    st = inp.state
    out = []
    for o in st.open_items:
        cp = st.checkpoints.get(o.id)
        nxt = f" — next: {cp.sections['next'][0]}" if cp and cp.sections.get("next") else ""
        out.append(Item(o.id, f"- `[{o.short}]` {o.summary}{nxt}\n"))
    return out


def _resume_items(inp: ContextInput) -> list:
    st = inp.state
    out = []
    cps = sorted(st.checkpoints.values(), key=lambda c: (c.entry.ts, c.entry.id), reverse=True)
    for cp in cps:
        name = cp.thread
        if cp.thread in st.by_id:
            name = st.by_id[cp.thread].summary
        text = f"- **{name}** `[{cp.entry.short}]` — {who(cp.entry)}, {cp.entry.ts:%Y-%m-%d}: {cp.entry.summary}\n"
        for sec in blocks.CHECKPOINT_SECTIONS:
            for item in cp.sections.get(sec, []):
                text += f"  - {sec}: {one_line(item)}\n"
        out.append(Item(cp.entry.id, text))
    return out


def _relevant_items(inp: ContextInput) -> list:
    out = []
    for e, in_force in inp.relevant:
        mark = "" if in_force else " _(superseded)_"
        out.append(Item(e.id, f"- `[{e.short}]` {e.kind}: {e.summary}{mark}\n"))
    return out


def _recent_items(inp: ContextInput) -> list:
    st = inp.state
    out = []
    for e in reversed(st.recent):
        mark = " _(superseded)_" if e.id in st.superseded else ""
        out.append(Item(e.id, f"- `[{e.short}]` {e.kind}: {e.summary}{mark}\n"))
    return out


def _integrity_text(st: State) -> str:
    if not st.broken:
        return ""
    ids = ", ".join(i[:8] for i in st.broken[:MARKER_IDS])
    more = f" +{len(st.broken) - MARKER_IDS} more" if len(st.broken) > MARKER_IDS else ""
    return (f"## Integrity warning\n{len(st.broken)} entr{'y' if len(st.broken) == 1 else 'ies'} "
            f"failed verification and were left out: {ids}{more}. Run `git lifeline verify`.\n\n")


def footer(inp: ContextInput, omitted: int, short: bool = False) -> str:
    st = inp.state
    head = st.head.short if st.head else "none"
    text = f"_{len(st.entries)} entries · head {head}"
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
    elif not st.entries:
        what = ("_The ledger is empty. Record the project's why: "
                "`git lifeline log --kind bootstrap --summary \"...\" --body \"...\"`_\n")

    sections = {
        "open": Section("open", "Open", _open_items(inp), "open item(s)"),
        "resume": Section("resume", "Resume", _resume_items(inp), "checkpoint(s)"),
        "relevant": Section("relevant", f"Relevant to: {one_line(inp.query or '')}", _relevant_items(inp),
                            "hit(s)"),
        "recent": Section("recent", "Recent", _recent_items(inp), "entr(ies)"),
    }
    worst = len(st.decisions) + sum(len(s.items) for s in sections.values())
    # The footer is reserved first at its largest possible size: it is the anchor
    # of the whole payload. Below the smallest footer nothing honest fits.
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
