"""Moving entries in and out of a line: import and export with lifeline-context,
migrate from a projection file, promote between lines.

Every id is recomputed on the way in; a batch is written as one pack and one commit.
The formats are core/seed.py's and views/projection.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional

from ..core.entry import Entry, abbrev
from ..core.json_input import JSONObject
from ..errors import InputError
from ..git.bulk import BulkWriter
from ..git.fanout import AppendResult
from ..git.fs import read_input_text, write_atomic
from ..git.trees import TreeLookup
from .ledger import Ledger, commit_message

# Handed to the faces, which may import only app/ (tests/test_layers.py): how cli/common.py
# writes what export -o, graph -o and view -o produce, in one rename.
__all__ = ["write_atomic"]

if TYPE_CHECKING:
    from ..core.seed_queue import SeedProposal
    from ..git.lines import LineIndex
    from ..git.records import Record


@dataclass
class Mismatch:
    where: str  # where the record sits in the source
    summary: str
    recorded: str  # the id the source recorded
    computed: str  # the id its content hashes to


@dataclass
class ImportReport:
    format: str
    read: int
    added: int
    existing: int
    commit: Optional[str]
    line: str
    mismatched: list[Mismatch] = field(default_factory=list)  # skipped (exit 1)
    skipped: list[tuple[Entry, str]] = field(default_factory=list)  # (entry, why): not written, not refused
    duplicates: int = 0
    unrecorded: int = 0  # records with no id to compare
    reordered: int = 0  # recorded out of time order in the source
    external: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (entry id, parent id, line): parents in other lines
    proposals: Optional[ProposalsImport] = None  # the source's pending proposals (a .db only)

    def to_json(self) -> JSONObject:
        return {
            "format": self.format,
            "read": self.read,
            "added": self.added,
            "existing": self.existing,
            "commit": self.commit,
            "line": self.line,
            "mismatched": [
                {"where": m.where, "summary": m.summary, "recorded": m.recorded, "computed": m.computed}
                for m in self.mismatched
            ],
            "skipped": [{"id": e.id, "summary": e.summary, "why": why} for e, why in self.skipped],
            "duplicates": self.duplicates,
            "unrecorded": self.unrecorded,
            "reordered": self.reordered,
            "external": [{"id": i, "parent": p, "line": ln} for i, p, ln in self.external],
            "proposals": self.proposals.to_json() if self.proposals is not None else None,
        }


@dataclass
class ProposalsImport:
    """What became of the source's pending proposals: filed in the line's review trail (a human
    approves or rejects them there, as any proposal), already there, or left out with why."""

    filed: list[Record] = field(default_factory=list)  # review records
    already: int = 0  # the same content already in the line or in its review trail
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (where in the source, why)
    elsewhere: list[tuple[Path, int]] = field(
        default_factory=list
    )  # (a .db beside the markdown, its pending count): not read

    def to_json(self) -> JSONObject:
        return {
            "filed": [r.id for r in self.filed],
            "already": self.already,
            "left_out": [{"where": where, "why": why} for where, why in self.left_out],
            "elsewhere": [{"file": str(db), "pending": n} for db, n in self.elsewhere],
        }


@dataclass
class MigrateReport:
    read: int
    added: int
    existing: int
    mismatched: list[str]  # ids whose content does not match (skipped)


@dataclass
class PromoteReport:
    promoted: list[Entry]  # the copies written
    already: list[tuple[Optional[str], str]]  # (source id or None, id of the copy already there)
    commit: Optional[str]


# A file read whole to be imported or migrated: ~40 times a 10,000-entry projection.
MAX_SOURCE_BYTES = 256 << 20


def _bulk_append(led: Ledger, entries: list[Entry]) -> AppendResult:
    """Append many entries as one pack (git fast-import) and one commit, ref by CAS."""
    led.checks.check_batch(entries)  # what verify would refuse is never written
    writer = BulkWriter(led.store)
    try:
        for e in entries:
            writer.add(e)
        return writer.publish(entries, commit_message)
    except BaseException:
        writer.abort()
        raise


def migrate(led: Ledger, source: Path, strict: bool = False) -> MigrateReport:
    """Rebuild the line from a projection file; every recorded id is checked first."""
    from ..git.lines import LineIndex
    from ..views import projection

    refusal = f"a projection to migrate is a regular file of at most {MAX_SOURCE_BYTES} bytes"
    try:
        text = read_input_text(source, MAX_SOURCE_BYTES, refusal, str(source))
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    parsed = projection.parse(text, str(source))
    left_out = projection.omitted(text)
    if left_out:
        raise InputError(
            f"{source} shows only the newest {len(parsed)} entries of its line: {left_out} earlier ones were left "
            "out to keep it under lifeline.projectionMaxBytes, so it cannot rebuild the line; nothing was "
            "written. Render a whole one where the line is: git -c lifeline.projectionMaxBytes=0 lifeline "
            "render (or copy the ledger itself: git lifeline push, git fetch)"
        )
    good: list[Entry] = []
    bad: list[Entry] = []
    for e in parsed:
        (good if e.verify() else bad).append(e)
    if bad and strict:
        raise InputError(
            f"{len(bad)} entr{'y' if len(bad) == 1 else 'ies'} in {source} do not match their recorded id "
            f"(first: {abbrev(bad[0].id)} '{bad[0].summary[:40]}'); nothing was written"
        )
    known = {e.id for e in good}
    index = LineIndex.scan(led.gr)
    for e in good:
        missing = [
            p
            for p in e.parents
            if p not in known and not led.store.has(p) and index.locate(p, exclude=led.line) is None
        ]  # cross-line parents count
        if missing:
            raise InputError(
                f"{source}: entry {abbrev(e.id)} names parent {abbrev(missing[0])} which is in "
                "neither the file nor the line; nothing was written"
            )
    result = _bulk_append(led, good) if good else AppendResult([], [], None)
    if result.commit:
        led.projection.render_quietly()
    return MigrateReport(len(parsed), len(result.added), len(result.existing), [e.id for e in bad])


def import_from(
    led: Ledger,
    source: Path,
    strict: bool = False,
    assume_utc: bool = False,
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> ImportReport:
    """Import a lifeline-context ledger (LIFELINE.md, legacy markdown or .db) into the line.

    Every id is recomputed; refused records raise (nothing written); mismatches are
    skipped and listed (or abort with `strict`). One commit, written as a pack.
    `progress(stage, done, total)` is called while checking and writing.
    """
    from ..core import seed, seed_queue
    from ..core.seed_check import check_records
    from ..git.lines import LineIndex

    fmt, records = seed.read_source(Path(source))  # a SQLite ledger streams: rows are read as checked
    # the review queue is read before anything is written: a .db whose proposals cannot be
    # read (a view, no status column) is refused whole, its entries not half imported
    waiting = seed_queue.read_seed_proposals(Path(source)) if fmt == seed.DB_FORMAT else None
    total = len(records)
    store = led.store
    head = store.head()
    in_tree = TreeLookup(store.tree(head))
    index = LineIndex.scan(led.gr)

    def in_line(entry_id: str) -> bool:
        return in_tree.find(entry_id) is not None

    def dedup_used() -> dict[str, str]:
        if head is None:
            return {}
        return {e.dedup_key: e.id for e in store.load(head).entries.values() if e.dedup_key}

    def counted(items: Iterable[seed.SeedRecord]) -> Iterator[seed.SeedRecord]:
        for n, rec in enumerate(items, 1):
            if progress is not None and (n % 1000 == 0 or n == total):
                progress("checking", n, total)
            yield rec

    writer = BulkWriter(store)
    try:
        plan = check_records(
            counted(records),
            str(source),
            strict=strict,
            assume_utc=assume_utc,
            in_line=in_line,
            elsewhere=lambda p: index.locate(p, exclude=led.line),
            dedup_used=dedup_used,
            sink=writer.add,
        )
        led.checks.check_batch(plan.entries)  # what verify would refuse is never written
        write_progress = (lambda done, n: progress("writing", done, n)) if progress is not None else None
        result = writer.publish(
            plan.entries, lambda new: commit_message(new, imported="lifeline-context"), write_progress
        )
    except BaseException:
        writer.abort()
        raise
    if result.commit:
        if result.parent is None:
            led.projection.write_entries(result.added, result.commit)
        else:
            led.projection.refresh(result.parent, result.added, result.commit)
    pending = _import_proposals(led, Path(source), index, waiting) if waiting is not None else _beside(Path(source))
    return ImportReport(
        format=fmt,
        read=total,
        added=len(result.added),
        existing=len(result.existing),
        commit=result.commit,
        line=led.line,
        # a record mismatches only its recorded id: it always has one
        mismatched=[Mismatch(r.where, r.summary, r.recorded_id or "", c) for r, c in plan.mismatched],
        skipped=list(plan.skipped),
        duplicates=plan.duplicates,
        unrecorded=plan.unrecorded,
        reordered=plan.reordered,
        external=list(plan.external),
        proposals=pending,
    )


def _beside(source: Path) -> Optional[ProposalsImport]:
    """A LIFELINE.md holds no proposals: its ledger's .db beside it (`.lifeline/*.db`) may. Say
    how many wait there, so an import from the markdown drops none without a word."""
    from ..core import seed_queue

    found = ProposalsImport()
    home = source.parent / ".lifeline"
    for db in sorted(home.glob("*.db"))[:8] if home.is_dir() else []:
        try:
            waiting = len(seed_queue.read_seed_proposals(db)) if db.is_file() and not db.is_symlink() else 0
        except InputError:
            continue  # only a hint: the import itself read the markdown
        if waiting:
            found.elsewhere.append((db, waiting))
    return found if found.elsewhere else None


def _import_proposals(led: Ledger, source: Path, index: LineIndex, waiting: list[SeedProposal]) -> ProposalsImport:
    """File a lifeline-context ledger's pending proposals in the line's review trail, in one
    commit, after its entries are in (a proposal may name one as its parent). A proposal whose
    content is already in the line or in the trail is not filed again (importing twice files
    nothing); one that is no valid entry, is dated in the future beyond the clock's tolerance
    (its record would sort as the newest for ever), or names a parent found nowhere, is left
    out with why."""
    from ..core import clock, seed_queue
    from ..core.entry import utcnow
    from ..git.records import entry_content
    from ..git.trails import ReviewTrail

    out = ProposalsImport()
    if not waiting:
        return out
    trail = ReviewTrail(led.gr, led.line)
    known = {p.content for p in trail.proposals().values()}
    to_file: list[Entry] = []
    now, skew = utcnow(), led.checks.max_clock_skew()
    for p in waiting:
        try:
            entry = seed_queue.proposal_entry(p)
        except InputError as exc:
            out.left_out.append((p.where, str(exc)))
            continue
        late = clock.future_problem(entry.ts, now, skew)
        if late:
            out.left_out.append((p.where, late))
            continue
        content = entry_content(entry)
        if led.store.has(entry.id) or content in known:
            out.already += 1
            continue
        missing = [x for x in entry.parents if not led.store.has(x) and index.locate(x, exclude=led.line) is None]
        if missing:
            out.left_out.append((p.where, f"its parent {abbrev(missing[0])} is in no line of this repository"))
            continue
        known.add(content)
        to_file.append(entry)
    if to_file:
        out.filed = trail.propose_all(
            to_file, by=led.default_author(), via="cli", source=f"{source.name} (lifeline-context)"
        )
    return out


def export_seed(led: Ledger) -> str:
    """The line in lifeline-context's markdown; refuses entries it would misread."""
    from ..core import seed

    entries = led.entries()
    seed.check_export(entries, led.line)
    return seed.render_seed_markdown(entries, led.line)


def promote(led: Ledger, src: str, refs: list[str], parents: Optional[list[str]] = None) -> PromoteReport:
    """Copy entries of line `src` into this line, each with an origin block."""
    from ..git.lines import plan_promote

    plan = plan_promote(led.gr, src, led.line, refs, parents)
    result = led.append(plan.copies) if plan.copies else AppendResult([], [], None)
    return PromoteReport(result.added, plan.already + [(None, e.id) for e in result.existing], result.commit)
