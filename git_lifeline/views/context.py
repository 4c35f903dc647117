"""Assemble what a fresh AI reads: compact markdown within a hard budget.

Layout: a stable prefix (identity, decisions in force) that a provider's prompt
cache can reuse, then a volatile tail (integrity, open, resume, relevant,
requirements, incidents, debt, recent, footer). Every item carries its anchor
(`[id8]`). The budget is a hard limit at every size: detail is degraded before any
item is dropped (context_sections ranks it, context_pack packs it), every omission
is stated with the omitted ids, and below the size of the smallest honest answer
the output is empty.

The stable part is planned first, with the volatile items costed by their shape
(the name of a thread, not its latest steps), then the volatile part gets exactly
what is left: a checkpoint or a note leaves the stable prefix byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..core.entry import abbrev
from ..core.trust import TAGS
from ..core.truth import State
from .context_pack import Packer, run
from .context_sections import ContextInput, Plan
from .context_text import TRUST_LEGEND, md

Measure = Callable[[str], int]
UNLIMITED = 10**12
SHOW_HINT = " · `git lifeline show <id>` reads an entry in full"


@dataclass
class ContextParts:
    stable: str
    volatile: str

    @property
    def text(self) -> str:
        return self.stable + self.volatile


def footer(inp: ContextInput, omitted: int, tier: int = 2) -> str:
    """tier 2: with the line and how to read an entry in full; 1: with the line; 0: shortest."""
    st = inp.state
    # "latest" is the newest entry; "head" means a ledger commit everywhere (status, sync, html)
    latest = abbrev(st.fold.recent[-1]) if st.fold.recent else "none"
    text = f"_{st.count} {'entry' if st.count == 1 else 'entries'} · latest {latest}"
    if tier >= 1:
        text += f" · line {md(inp.line)}"
    if omitted:
        text += f" · {omitted} item(s) omitted for the budget"
    if tier >= 2:
        text += SHOW_HINT
    return text + "_\n"


def _integrity_text(st: State) -> str:
    if not st.broken:
        return ""
    ids = ", ".join(abbrev(i) for i in st.broken[:8])
    more = f" +{len(st.broken) - 8} more" if len(st.broken) > 8 else ""
    one = len(st.broken) == 1
    return (
        f"## Integrity warning\n{len(st.broken)} entr{'y' if one else 'ies'} "
        f"failed verification and {'was' if one else 'were'} left out: {ids}{more}. "
        "Run `git lifeline verify`.\n\n"
    )


def assemble(inp: ContextInput, budget: Optional[int] = None, measure: Measure = len) -> ContextParts:
    """The context; when an item carries a trust tag (an agent's or an import's), packed again
    with the legend that says what the tags mean, so that an agent's claim is never read as
    the project's instruction. A ledger written by humans alone packs as before."""
    parts = _assemble(inp, budget, measure, "")
    if not any(f" `{word}`" in parts.text for word in TAGS.values() if word):
        return parts
    return _assemble(inp, budget, measure, TRUST_LEGEND)


def _assemble(inp: ContextInput, budget: Optional[int], measure: Measure, legend: str) -> ContextParts:
    st = inp.state
    limit = budget if budget is not None else UNLIMITED
    plan = Plan(inp, limit)
    worst = sum(len(s.items) for s in plan.sections)
    # The footer is reserved first, at its largest possible size: it anchors the
    # whole payload. Below the smallest footer nothing honest fits.
    tier = next((t for t in (2, 1, 0) if measure(footer(inp, worst, t)) <= limit), None)
    if tier is None:
        return ContextParts("", "")
    used = measure(footer(inp, worst, tier))

    def take(piece: str) -> str:
        nonlocal used
        if piece and used + measure(piece) <= limit:
            used += measure(piece)
            return piece
        return ""

    notice_p = take(inp.notice)
    integrity = _integrity_text(st)
    integrity_p = take(integrity)
    if integrity and not integrity_p:  # never silently: at least the count
        integrity_p = take(f"_{len(st.broken)} entries failed verification._\n")
    notes = []
    if inp.stale_unknown:
        notes.append(inp.stale_unknown)
    if inp.stale:
        notes.append(
            "a code-changed mark clears when a human re-reads the decision: `git lifeline reaffirm <id>`, "
            "or a commit whose `Lifeline: <id>` trailer names it"
        )
    stale_p = take("".join(f"_{n}_\n" for n in notes))  # our own text: nothing to escape
    title = f"# Lifeline context: {md(inp.line)}" + (f", thread {md(inp.thread)}" if inp.thread else "") + "\n"
    title_p = take(title)
    legend_p = take(legend) if title_p else ""
    gap = take("\n") if title_p else ""
    empty = ""
    if st.identity is None and not st.count:
        empty = take(
            inp.empty_text
            or "_The ledger is empty. Record the project's why: "
            '`git lifeline log --kind bootstrap --summary "..." --body "..."`_\n'
        )

    room = limit - used
    # Pass 1 plans everything, the volatile items costed by their shape; its stable part is kept.
    run(Packer(measure, room, exact=False), plan.groups, plan.sections, skip=lambda s: s is plan.recent)
    stable = [s for s in plan.sections if s.stable]
    volatile = [s for s in plan.sections if not s.stable]
    # Pass 2 plans the volatile part, exactly, in what the stable part left.
    for s in volatile:
        s.reset()
    packer = Packer(measure, room, exact=True)
    packer.used = sum(s.cost for s in stable)
    run(packer, plan.groups, plan.sections, skip=lambda s: s.stable or s is plan.recent_plan)

    omitted = sum(s.missing for s in plan.sections)
    stable_text = (
        notice_p
        + title_p
        + legend_p
        + empty
        + "".join(s.render() for s in stable[:1])
        + gap
        + "".join(s.render() for s in stable[1:])
    )
    volatile_text = integrity_p + stale_p + "".join(s.render() for s in volatile) + footer(inp, omitted, tier)
    parts = ContextParts(stable_text, volatile_text)
    if budget is not None and measure(parts.text) > limit:
        # Only non-additive measures (a real tokenizer) can land here; shrink and retry.
        return _assemble(inp, budget - max(1, measure(parts.text) - limit), measure, legend)
    return parts
