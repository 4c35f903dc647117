"""Changing one's mind in an append-only ledger: revise, revert, close, resolve.

Nothing is edited: each verb plans corrections (docs/FORMAT.md §9) that the truth then
reads. A *revision* (a correction without `action: revert`) replaces what it names and,
when that was a decision, carries the decision on; a *revert* withdraws what it names.

* revise ID   — a revision of ID: the decision as it now stands (ID's `paths:`,
  validity window and thread carry over unless given anew).
* revert ID   — a revert of ID: withdrawn, nothing replaces it (reverting a revert puts
  back what it withdrew).
* close OPEN  — an open question answered. A correction of an open never becomes a
  decision, so the answer is kept in the correction's body and, when it decides
  something (`decision=True`), also as a decision in force whose parent is the open.
  The decision is planned first and the correction names only the open (a correction
  naming the decision would replace it); both land in one commit.
* resolve ID  — decisions in force that conflict (core/truth.py, `conflicts_of`):
  keep ID and revert the others, or replace them all with one new decision (a revision
  of every one of them). The outcome is computed before anything is written; a plan
  that would leave ID in a conflict is refused.

Every plan is a list of entries and the first line of the commit that writes them; the
faces persist it with `apply` (or route it through the write policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ..core import blocks, truth
from ..core.content_rules import MAX_SUMMARY_CHARS
from ..core.entry import abbrev
from ..errors import InputError
from .draft import HUMAN, NO_HEADERS, Headers, Writer
from .entry_view import REAFFIRM_PREFIX, entry_view
from .ledger import Ledger, LogOutcome, Planned, with_headers

if TYPE_CHECKING:  # annotations only
    from ..core.entry import Entry

# What a revision carries over from what it revises, unless given anew.
_CARRIED = ("paths", "valid-from", "valid-until", "thread")


@dataclass
class Edit:
    """Planned entries (in the order they are written) and the commit's first line."""

    entries: list[Entry]
    subject: str
    correction: Entry  # the correction that does the correcting
    decision: Optional[Entry] = None  # close: the answer kept as a decision in force
    kept: Optional[str] = None  # resolve: the decision left in force


@dataclass
class EditOutcome:
    edit: Edit
    added: list[Entry]
    commit: Optional[str]

    @property
    def written(self) -> bool:
        return bool(self.added)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_SUMMARY_CHARS else flat[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"


def _why(body: Optional[str], what: str) -> str:
    text = (body or "").strip()
    if not text:
        raise InputError(f"{what}: say why (--body); a correction needs its why")
    return text


def _acting_corrections(led: Ledger, entry_id: str) -> list[tuple[str, bool]]:
    """Corrections that act and name `entry_id`, as (id, is revert)."""
    view = entry_view(led, led.show(entry_id))
    return [(link.id, link.how == "reverts") for link in view.superseded_by if link.acts]


def _target(led: Ledger, ref: str) -> Entry:
    return led.show(ref)


def _refuse_if_replaced(led: Ledger, e: Entry, verb: str) -> None:
    acting = _acting_corrections(led, e.id)
    revisions = [c for c, revert in acting if not revert]
    reverts = [c for c, revert in acting if revert]
    if revisions:
        raise InputError(
            f"{abbrev(e.id)} is already superseded by {abbrev(revisions[0])}; {verb} that one "
            f"(git lifeline {verb} {abbrev(revisions[0])})"
        )
    if reverts:
        raise InputError(
            f"{abbrev(e.id)} was withdrawn by {abbrev(reverts[0])}; revert that revert to put it back "
            f"(git lifeline revert {abbrev(reverts[0])})"
        )


def plan_revise(
    led: Ledger,
    ref: str,
    body: Optional[str],
    summary: Optional[str] = None,
    headers: Headers = NO_HEADERS,
    writer: Writer = HUMAN,
) -> Edit:
    """A revision of `ref`: what now holds (`summary`, default the same) and why (`body`)."""
    e = _target(led, ref)
    if e.kind == "open":
        raise InputError(
            f"{abbrev(e.id)} is an open item: answer it with git lifeline close {abbrev(e.id)} --answer TEXT "
            "(a correction of an open closes it)"
        )
    if e.kind == "checkpoint":
        raise InputError(f"{abbrev(e.id)} is a checkpoint: record a new one with git lifeline checkpoint")
    if e.kind == "correction" and truth.is_revert(e.body):
        raise InputError(f"{abbrev(e.id)} is a revert: undo it with git lifeline revert {abbrev(e.id)}")
    _refuse_if_replaced(led, e, "revise")
    text = with_headers(_why(body, "revise"), headers)
    given = blocks.header_fields(text)
    carried = {k: v for k, v in blocks.header_fields(e.body).items() if k in _CARRIED and k not in given}
    text = blocks.with_header(text, carried)
    entry = led.plan_entry(writer.draft("correction", (summary or e.summary).strip(), text, [e.id]))
    return Edit([entry], f"revise {abbrev(e.id)}: {_clip(entry.summary)}", correction=entry)


def plan_revert(led: Ledger, ref: str, body: Optional[str] = None, writer: Writer = HUMAN) -> Edit:
    """A revert of `ref`: withdrawn, nothing in its place."""
    e = _target(led, ref)
    reverts = [c for c, revert in _acting_corrections(led, e.id) if revert]
    if reverts:
        raise InputError(f"{abbrev(e.id)} is already withdrawn by {abbrev(reverts[0])}; nothing to revert")
    why = (body or "").strip() or f"Reverts {abbrev(e.id)} ({e.kind}: {_clip(e.summary)[:120]})."
    entry = led.plan_entry(
        writer.draft("correction", _clip(f"revert: {e.summary}"), f"action: revert\n\n{why}", [e.id])
    )
    return Edit([entry], f"revert {abbrev(e.id)}: {_clip(e.summary)}", correction=entry)


def plan_close(
    led: Ledger,
    ref: str,
    answer: str,
    decision: bool = False,
    summary: Optional[str] = None,
    headers: Headers = NO_HEADERS,
    writer: Writer = HUMAN,
) -> Edit:
    """Close an open item with its answer; with `decision`, the answer is also a decision in
    force (parent: the open) with `summary` (default: the answer's first line) and `headers`."""
    e = _target(led, ref)
    if e.kind != "open":
        raise InputError(
            f"{abbrev(e.id)} is a {e.kind}, not an open item; close takes an open "
            f"(to withdraw it: git lifeline revert {abbrev(e.id)})"
        )
    st = led.state()
    if e.id not in st.open_ids:
        closers = [c for c, _ in _acting_corrections(led, e.id)]
        raise InputError(f"{abbrev(e.id)} is already closed" + (f" by {abbrev(closers[0])}" if closers else ""))
    text = (answer or "").strip()
    if not text:
        raise InputError("close: --answer TEXT is required (what was found or decided)")
    if headers and not decision:
        raise InputError("--subject/--paths/--valid-from/--valid-until describe a decision: add --decision")
    if summary is not None and not decision:
        raise InputError("--summary names the decision: add --decision")
    decided = None
    entries = []
    closing_body = text
    if decision:
        decided = led.plan_entry(
            writer.draft("decision", _clip(summary or _answered(e.summary, text)), with_headers(text, headers), [e.id])
        )
        entries.append(decided)
        closing_body = f"{text}\n\nDecided: {decided.id} ({_clip(decided.summary)[:120]})."
    closing = led.plan_entry(writer.draft("correction", _clip(f"closed: {e.summary}"), closing_body, [e.id]))
    entries.append(closing)
    return Edit(entries, f"close {abbrev(e.id)}: {_clip(e.summary)}", decision=decided, correction=closing)


def _answered(question: str, answer: str) -> str:
    """A decision's default summary: the question with the answer's first line, so the
    decision read alone still says what it decides ("Which queue? RabbitMQ")."""
    asked, first = " ".join(question.split()), answer.splitlines()[0].strip()
    return f"{asked} {first}" if asked.endswith("?") else f"{asked}: {first}"


def plan_resolve(
    led: Ledger,
    ref: str,
    body: Optional[str] = None,
    summary: Optional[str] = None,
    headers: Headers = NO_HEADERS,
    writer: Writer = HUMAN,
) -> Edit:
    """Resolve the conflict(s) `ref` is in: keep it and revert the others, or, with
    `summary`, replace every decision of the conflict with one new decision."""
    e = _target(led, ref)
    st = led.state()
    groups = st.conflicts_of(e.id)
    if not groups:
        why = "is not a decision in force" if e.id not in st.decision_ids else "is in no conflict"
        raise InputError(f"{abbrev(e.id)} {why} (git lifeline conflicts lists the conflicts)")
    members = sorted({i for g in groups for i in g.ids})
    label = ", ".join(f"'{g.label}'" for g in groups)
    if summary is None:
        if headers:
            raise InputError("--subject/--paths/--valid-from/--valid-until describe a new decision: add --summary")
        others = [i for i in members if i != e.id]
        why = (
            body or ""
        ).strip() or f"Resolved the conflict on {label}: kept {abbrev(e.id)} ({_clip(e.summary)[:120]})."
        entry = led.plan_entry(
            writer.draft("correction", _clip(f"resolve: keep {e.summary}"), f"action: revert\n\n{why}", others)
        )
        edit = Edit([entry], f"resolve {label}: keep {abbrev(e.id)}", correction=entry)
        kept = e.id
    else:
        text = with_headers(_why(body, "resolve --summary"), headers)
        entry = led.plan_entry(writer.draft("correction", summary.strip(), text, members))
        edit = Edit([entry], f"resolve {label}: replace {len(members)} decisions", correction=entry)
        kept = entry.id
    edit.kept = kept
    after = truth.reduce(list(led.store.load().entries.values()) + edit.entries)
    if after.conflicts_of(kept) or kept not in after.decision_ids:
        left = sorted({i for g in after.conflicts_of(kept) for i in g.ids} - {kept})
        hint = " (reverting them puts back what they had replaced, which conflicts again)" if summary is None else ""
        raise InputError(
            f"this would leave {abbrev(kept)} in conflict with {', '.join(abbrev(i) for i in left) or 'nothing'}"
            f"{hint}; replace them all instead: git lifeline resolve {abbrev(e.id)} --summary TEXT --body WHY"
        )
    return edit


def apply(led: Ledger, edit: Edit) -> EditOutcome:
    """Write the planned entries in one commit."""
    result = led.append(edit.entries, subject=edit.subject)
    return EditOutcome(edit, list(result.added), result.commit)


# ---- pins: decisions the context keeps as its foundation ----------------------------
def plan_pin(led: Ledger, ref: str, writer: Writer = HUMAN) -> Planned:
    """A note that pins the decision in force `ref` names (unchanged when it is pinned already)."""
    st = led.state()
    target = led.store.resolve(ref)
    if target not in set(st.decision_ids):
        raise InputError(f"{ref!r} is not a decision in force; only those can be pinned")
    if target in st.pinned:
        return Planned(st.by_id[target], new=False)
    d = st.by_id[target]
    return Planned(
        led.plan_entry(
            writer.draft(
                "note",
                f"pin: {d.summary}"[:300],
                f"pin: {target}\n\nPinned as a foundation of the context.",
                [target],
            )
        )
    )


def plan_unpin(led: Ledger, ref: str, writer: Writer = HUMAN) -> Entry:
    """A revert of the notes that pin `ref`."""
    st = led.state()
    target = led.store.resolve(ref)
    notes = st.pin_notes_of(target)
    if not notes:
        raise InputError(f"{ref!r} is not pinned")
    return led.plan_entry(
        writer.draft("correction", f"unpin: {st.by_id[target].summary}"[:300], "action: revert\n\nUnpinned.", notes)
    )


def pin(led: Ledger, ref: str, writer: Writer = HUMAN) -> LogOutcome:
    planned = plan_pin(led, ref, writer)
    return led.persist(planned.entry) if planned.new else led.unchanged(planned)


def unpin(led: Ledger, ref: str, writer: Writer = HUMAN) -> LogOutcome:
    return led.persist(plan_unpin(led, ref, writer))


# ---- re-affirmation: a decision re-read against the code, its why unchanged ----------
def plan_reaffirm(
    led: Ledger, ref: str, at: Optional[str] = None, body: Optional[str] = None, writer: Writer = HUMAN
) -> Entry:
    """A note naming the decision in force `ref` as its parent, with a `commit:` header (the
    code it was re-read against: `at`, else HEAD): a re-check (FORMAT §9), so the code
    that commit's history holds no longer makes it stale. The decision is not touched."""
    st = led.state()
    target = led.store.resolve(ref)
    if target not in set(st.decision_ids):
        raise InputError(f"{ref!r} is not a decision in force; only those can be re-affirmed")
    rev = at if at is not None else "HEAD"
    commit = None if rev.startswith("-") else led.gr.resolve_commit(rev)
    if commit is None:
        raise InputError(f"--at {rev!r}: not a commit" if at is not None else "HEAD has no commit to re-affirm against")
    why = (body or "").strip() or f"Re-read against the code at {commit[:12]}; it still holds."
    d = st.by_id[target]
    return led.plan_entry(
        writer.draft("note", _clip(REAFFIRM_PREFIX + d.summary), f"commit: {commit}\n\n{why}", [target])
    )


def reaffirm(
    led: Ledger, ref: str, at: Optional[str] = None, body: Optional[str] = None, writer: Writer = HUMAN
) -> LogOutcome:
    return led.persist(plan_reaffirm(led, ref, at, body, writer))
