"""Checking the records of a lifeline-context ledger before any is written (import):
each rebuilt as an Entry under every rule, its id recomputed and compared, its parents
found. The records are core/seed.py's (read from a file, or streamed from SQLite)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from ..errors import InputError, LifelineError
from .entry import Entry, NaiveTimestamp, abbrev, entry_order_key, parse_ts
from .seed import ImportRefused, SeedRecord


# ---- checking ---------------------------------------------------------------------------
@dataclass
class ImportPlan:
    entries: list[Entry] = field(default_factory=list)  # valid, matching, to write (source order)
    mismatched: list[tuple[SeedRecord, str]] = field(default_factory=list)  # (record, recomputed id): skipped
    skipped: list[tuple[Entry, str]] = field(default_factory=list)  # (entry, why): skipped, not refused
    duplicates: int = 0  # same id twice in the source
    unrecorded: int = 0  # records without a recorded id to compare
    reordered: int = 0  # source order differs from (ts, id) order
    external: list[tuple[str, str, str]] = field(default_factory=list)  # (entry id, parent id, line)


def check_records(
    records: Iterable[SeedRecord],
    source: str,
    *,
    strict: bool,
    assume_utc: bool,
    in_line: Callable[[str], bool],
    elsewhere: Callable[[str], Optional[str]],
    dedup_used: Optional[Callable[[], dict[str, str]]] = None,
    sink: Optional[Callable[[Entry], None]] = None,
) -> ImportPlan:
    """Validate every record; raise ImportRefused (nothing written) or return the plan.

    `sink` receives each entry as soon as it is valid (the bulk writer streams it);
    the caller discards what the sink wrote when this raises.
    """
    plan = ImportPlan()
    refused: list[tuple[SeedRecord, str]] = []
    by_id: dict[str, Entry] = {}
    bad_ids: set[str] = set()
    for rec in records:
        if rec.problem:
            refused.append((rec, rec.problem))
            continue
        try:
            # The one builder checks every field's type (naming the first bad one) and every rule;
            # pydantic's model on top of it cost a third of an import's time and checked nothing more.
            e = Entry.new(
                kind=rec.kind,
                author=rec.author,
                agent=rec.agent,
                provider=rec.provider,
                model=rec.model,
                summary=rec.summary,
                body=rec.body,
                parents=rec.parents,
                ts=parse_ts(rec.ts, assume_utc),
                dedup_key=rec.dedup_key,
                require_why=False,
                honour_override=False,
            )  # lifeline-context stores empty bodies; ids must not change
        except NaiveTimestamp as exc:
            refused.append((rec, f"{exc} (rerun with --assume-utc if the source wrote UTC)"))
            continue
        except LifelineError as exc:
            refused.append((rec, str(exc)))
            continue
        if rec.recorded_id is None:
            plan.unrecorded += 1
        elif rec.recorded_id != e.id:
            plan.mismatched.append((rec, e.id))
            bad_ids.update({rec.recorded_id, e.id})
            continue
        if e.id in by_id:
            plan.duplicates += 1
            continue
        by_id[e.id] = e
        plan.entries.append(e)
        if sink is not None and not refused:
            sink(e)
    if refused:
        raise ImportRefused(source, refused)
    if plan.mismatched and strict:
        rec, got = plan.mismatched[0]
        raise InputError(
            f"{source}: {len(plan.mismatched)} entr{'y' if len(plan.mismatched) == 1 else 'ies'} do not match "
            f"their recorded id (first: {rec.label()} recomputes to {abbrev(got)}); --strict: nothing was written"
        )
    # parents: in the source, the line, or (external anchor) another real line
    missing: list[tuple[Entry, str]] = []
    changed = True
    while changed:
        changed = False
        for e in list(plan.entries):
            for p in e.parents:
                if p in by_id or in_line(p):
                    continue
                home = elsewhere(p)
                if home is not None:
                    continue
                if p in bad_ids:
                    plan.entries.remove(e)
                    del by_id[e.id]
                    bad_ids.add(e.id)
                    plan.skipped.append((e, f"its parent {abbrev(p)} was skipped"))
                    changed = True
                    break
                missing.append((e, p))
        if missing:
            break
    if missing:
        refused = [
            (
                SeedRecord(where=abbrev(e.id), summary=e.summary),
                f"its parent {abbrev(p)} is in neither the source, this line, nor another line of this "
                "repository (import the line that holds it first)",
            )
            for e, p in missing
        ]
        raise ImportRefused(source, refused)
    for e in plan.entries:
        for p in e.parents:
            home = None if p in by_id or in_line(p) else elsewhere(p)
            if home is not None:  # never None here: a parent found nowhere was refused above
                plan.external.append((e.id, p, home))
    if dedup_used is not None and any(e.dedup_key for e in plan.entries):
        used = dict(dedup_used())
        for e in list(plan.entries):
            if e.dedup_key is None:
                continue
            owner = used.setdefault(e.dedup_key, e.id)
            if owner != e.id:
                plan.entries.remove(e)
                plan.skipped.append((e, f"its dedup key is already used by {abbrev(owner)}"))
    ordered = sorted(plan.entries, key=entry_order_key)
    plan.reordered = sum(1 for a, b in zip(plan.entries, ordered, strict=True) if a.id != b.id)
    return plan
