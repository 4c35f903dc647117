"""Use cases: import a directory of ADRs into a line, export the decisions in force as MADR files.

How an ADR becomes entries (docs/VIEW.md, "ADRs"):

* Every entry made from an ADR ends with the line `adr: <file name>`; the ADR's number (or,
  for log4brains' date-named files, its file stem) ties all of them into the ADR's *group*.
* The ADR's *main* entry carries its title (summary) and text (body), dated by the ADR:
  accepted, superseded and deprecated ADRs are decisions, proposed ones are `open` items
  ("Proposed: …"), rejected ones are notes ("Rejected: …"): never decisions in force.
* An ADR that supersedes others (its `Supersedes`, or their `Superseded by`) is a correction
  whose parents are their entries. Deprecated ADRs, and superseded ones whose successor is not
  in the directory, get a *closer*: a correction with `action: revert`, so they are recorded
  but not in force.
* Any status is taken in and kept as written in an `adr-status:` header; one whose words are not
  in core/adr.py's table reads as proposed, with a warning naming the file.
* Other links between ADRs ("Amends", "Amended by", "Relates to", ...) are `relation` entries
  between the two ADRs' current entries (`rel:`, `from:`, `to:`), written once.
* Re-importing adds only what changed. An edited ADR (or one whose predecessors changed) gets
  a new main entry: a correction of every earlier entry of its group, dated when it is imported.

Under the truth rule a correction supersedes only while it is itself active, so a new entry
names the whole chain it replaces (its group, its predecessors' groups, and whatever their
corrections replaced): nothing it makes inactive can come back into force. At most 64 parents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core import adr as core_adr
from ..core import blocks
from ..core.content_rules import MAX_PARENTS, MAX_SUMMARY_CHARS
from ..core.entry import entry_order_key
from ..core.supersession import acting, superseded_by
from ..core.truth import is_revert
from ..errors import InputError

if TYPE_CHECKING:
    from ..core.entry import Entry
    from .ledger import Ledger

_DECISIONISH = ("accepted", "superseded", "deprecated")
_TICK = timedelta(microseconds=1)


@dataclass
class AdrImport:
    """What an ADR import did."""

    line: str
    read: int  # ADR files read
    added: list[Entry]  # entries written
    existing: int  # planned entries already in the line
    commit: Optional[str]
    warnings: list[str] = field(default_factory=list)


# ---- reading the directory ----------------------------------------------------------------
MAX_ADR_BYTES = 1 << 20  # an entry's body holds at most 64 KiB; a file 16 times that is no ADR


def read_adr_dir(directory: Path) -> list[core_adr.Adr]:
    """Every ADR file directly in `directory`, read and parsed (InputError names the bad file)."""
    if not directory.exists():
        raise InputError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory")
    from ..git.fs import read_input_text

    adrs = []
    try:  # a link is listed (and refused below), whatever it points at
        names = sorted(
            p.name for p in directory.iterdir() if (p.is_symlink() or p.is_file()) and core_adr.is_adr_file(p.name)
        )
    except OSError as exc:
        raise InputError(f"cannot list {directory}: {exc.strerror}") from None
    for name in names:
        # never through a link (a planted `0002-x.md -> ~/notes.md` would enter the ledger,
        # and travel with the next push), never a device, never unbounded
        refusal = f"an ADR is a regular file of at most {MAX_ADR_BYTES} bytes; nothing was imported"
        try:
            text = read_input_text(directory / name, MAX_ADR_BYTES, refusal, name, follow=False)
        except OSError as exc:
            raise InputError(f"cannot read {directory / name}: {exc.strerror}") from None
        adrs.append(core_adr.parse_adr(name, text))
    if not adrs:
        raise InputError(f"{directory}: no ADR files (NNNN-title.md) in it")
    return adrs


# ---- planning ----------------------------------------------------------------------------
def _is_closer(e: Entry) -> bool:
    return e.kind == "correction" and blocks.field(e.body, "action") == "revert"


def _family(kind: str) -> str:
    return "decision" if kind in ("decision", "correction") else kind


class _Planner:
    """Plans the entries one import writes, from the ADRs and the line as it is."""

    def __init__(self, adrs: list[core_adr.Adr], entries: list[Entry], author: str, now: datetime):
        self.author = author
        self.now = now
        self.warnings: list[str] = []
        self.by_key: dict[str, core_adr.Adr] = {}
        for a in adrs:
            if a.key in self.by_key:
                raise InputError(f"{self.by_key[a.key].filename} and {a.filename} are both {a.label}")
            self.by_key[a.key] = a
        self.by_id = {e.id: e for e in entries}
        self.groups: dict[str, list[Entry]] = {}
        for e in sorted(entries, key=entry_order_key):
            name = core_adr.marker_of(e.body)
            ident = core_adr.adr_key(name) if name else None
            if ident is not None:
                self.groups.setdefault(ident[0], []).append(e)
        corrections = [(e.id, e.parents, is_revert(e.body)) for e in entries if e.kind == "correction"]
        self.dead = set(superseded_by(corrections))  # grows with what the plan supersedes
        self.killers: dict[str, list[str]] = {}  # id -> acting corrections naming it
        live = acting(corrections)
        for cid, parents, _ in corrections:
            if cid in live:
                for p in parents:
                    self.killers.setdefault(p, []).append(cid)
        self.carriers = self._carriers(entries)
        self.key_of = {e.id: k for k, group in self.groups.items() for e in group}
        self.preds = self._predecessors()
        self.planned: list[Entry] = []
        for a in adrs:
            if not a.status_known:
                self.warnings.append(
                    f"{a.filename}: status {a.status_text[:60]!r} is not one git-lifeline knows; imported as "
                    f"proposed (an open item, not in force), the status kept as {core_adr.STATUS_HEADER}:"
                )
        self.relations = {_relation_key(e) for e in entries if e.kind == "relation"}

    # -- the links between ADRs
    def _predecessors(self) -> dict[str, set[str]]:
        by_file = {a.filename: a.key for a in self.by_key.values()}
        by_number = {a.number: a.key for a in self.by_key.values() if a.number is not None}
        preds: dict[str, set[str]] = {k: set() for k in self.by_key}
        for a in self.by_key.values():
            for ref in a.supersedes:
                k = core_adr.resolve_reference(ref, by_file, by_number)
                if k is None:
                    self.warnings.append(f"{a.filename}: supersedes {ref!r}, which is not in the directory")
                elif k != a.key:
                    preds[a.key].add(k)
            for ref in a.superseded_by:
                k = core_adr.resolve_reference(ref, by_file, by_number)
                if k is None:
                    self.warnings.append(f"{a.filename}: superseded by {ref!r}, which is not in the directory")
                elif k != a.key:
                    preds[k].add(a.key)
        # Only a successor that was decided replaces anything: a proposed or rejected one leaves
        # its predecessor in force.
        return {k: (v if self.by_key[k].status in _DECISIONISH else set()) for k, v in preds.items()}

    def successors(self, key: str) -> set[str]:
        return {s for s, ps in self.preds.items() if key in ps}

    def order(self) -> list[str]:
        """ADR keys, every predecessor before its successors (then by number, key)."""

        def rank(k: str) -> tuple[int, str]:
            a = self.by_key[k]
            return (a.number if a.number is not None else 10**9, k)

        pending = {k: set(ps) for k, ps in self.preds.items()}
        out: list[str] = []
        while pending:
            ready = sorted((k for k, ps in pending.items() if not ps), key=rank)
            if not ready:
                names = ", ".join(self.by_key[k].filename for k in sorted(pending, key=rank))
                raise InputError(f"the supersession links form a cycle among: {names}")
            k = ready[0]
            out.append(k)
            del pending[k]
            for ps in pending.values():
                ps.discard(k)
        return out

    # -- the truth bookkeeping
    def _carriers(self, entries: list[Entry]) -> set[str]:
        carried: set[str] = set()
        for e in sorted(entries, key=entry_order_key):
            self._note_carrier(e, carried)
        return carried

    @staticmethod
    def _note_carrier(e: Entry, carried: set[str]) -> None:
        if e.kind == "decision":
            carried.add(e.id)
        elif e.kind == "correction" and not _is_closer(e) and any(p in carried for p in e.parents):
            carried.add(e.id)

    def closure(self, seeds: list[Entry]) -> set[str]:
        """The seeds and, through every correction among them, what it replaces."""
        out: set[str] = set()
        stack = [s.id for s in seeds]
        while stack:
            i = stack.pop()
            if i in out:
                continue
            out.add(i)
            e = self.by_id.get(i)
            if e is not None and e.kind == "correction":
                stack.extend(p for p in e.parents if p in self.by_id)
        return out

    def group(self, key: str) -> list[Entry]:
        return self.groups.setdefault(key, [])

    # -- one ADR
    def plan(self, key: str) -> None:
        a = self.by_key[key]
        group = self.group(key)
        fresh = not group
        preds = sorted(self.preds[key])
        pred_entries = [e for p in preds for e in self.group(p)]
        withdrawn = a.status == "deprecated" or (a.status == "superseded" and not self.successors(key))
        if a.status == "superseded" and not self.successors(key) and not a.superseded_by:
            self.warnings.append(f"{a.filename}: superseded, but by no ADR named in it; recorded as not in force")
        family = "decision" if a.status in _DECISIONISH else ("open" if a.status == "proposed" else "note")
        prefix = {"open": "Proposed: ", "note": "Rejected: "}.get(family, "")
        summary = _clip(prefix + a.title)
        body = core_adr.entry_body(a)
        mains = [e for e in group if not _is_closer(e)]
        head = mains[-1] if mains else None
        if head is None or not self._up_to_date(head, a, family, summary, body, pred_entries, withdrawn):
            parents = self.closure(group + pred_entries)
            kind = family
            if family == "decision" and parents & self.carriers:
                kind = "correction"
            main = self._write(a, kind, summary, body, parents, fresh)
        else:
            main = head
        mains = [e for e in self.group(key) if not _is_closer(e)]
        must_die = [e for e in mains if e is not main] + [e for e in pred_entries if not _is_closer(e)]
        if withdrawn:
            must_die.append(main)
        if any(e.id not in self.dead for e in must_die):
            self._write(
                a,
                "correction",
                _clip(f"{a.label} {a.status}: {a.title}"),
                _closer_body(a, withdrawn, self.successors(key)),
                self.closure(must_die),
                fresh,
                after=main,
            )

    def _up_to_date(
        self,
        head: Entry,
        a: core_adr.Adr,
        family: str,
        summary: str,
        body: str,
        pred_entries: list[Entry],
        withdrawn: bool,
    ) -> bool:
        if _family(head.kind) != family or head.summary != summary:
            return False
        if core_adr.without_status(head.body) != core_adr.without_status(body):
            return False
        older = [e for e in self.group(a.key) if entry_order_key(e) < entry_order_key(head)]
        if not self.closure(older + pred_entries) <= set(head.parents):
            return False  # a predecessor changed, or a new one was named
        if withdrawn or head.id not in self.dead:
            return True
        # Dead although it should stand: brought back when its own closer or an ADR that no
        # longer supersedes it did that; left alone when someone corrected it by hand.
        expected = {e.id for s in self.successors(a.key) for e in self.group(s)}
        killers = [k for k in self.killers.get(head.id, []) if k not in expected]
        return not killers or any(k not in self.key_of for k in killers)

    def _write(
        self,
        a: core_adr.Adr,
        kind: str,
        summary: str,
        body: str,
        parents: set[str],
        fresh: bool,
        after: Optional[Entry] = None,
    ) -> Entry:
        from ..core.entry import new_entry

        if len(parents) > MAX_PARENTS:
            raise InputError(
                f"{a.filename}: its history and the ADRs it supersedes come to {len(parents)} "
                f"entries, more than the {MAX_PARENTS} parents an entry can name"
            )
        start = _day(a.date) if fresh and a.date else self.now
        latest = max((self.by_id[p].ts for p in parents), default=None)
        ts = max(start, latest + _TICK) if latest is not None else start
        if after is not None:
            # a closer sorts after the main entry it stands beside: a tie on `ts` would leave
            # their order to the ids, and re-import would read the closer as newer history
            ts = max(ts, after.ts + _TICK)
        try:
            e = new_entry(
                kind=kind,
                summary=summary,
                body=body,
                author=self.author,
                parents=sorted(parents),
                ts=ts,
                honour_override=False,
            )
        except InputError as exc:
            raise InputError(f"{a.filename}: {exc}") from None
        self.by_id[e.id] = e
        self.group(a.key).append(e)
        self.key_of[e.id] = a.key
        self.planned.append(e)
        self._note_carrier(e, self.carriers)
        if kind == "correction":
            self.dead |= parents
        return e

    # -- links that are not supersession
    def plan_links(self) -> None:
        """A relation between the current entries of two linked ADRs, once per link: both
        `Amends` in one file and `Amended by` in the other give one."""
        by_file = {a.filename: a.key for a in self.by_key.values()}
        by_number = {a.number: a.key for a in self.by_key.values() if a.number is not None}
        wanted: list[tuple[str, tuple[str, str]]] = []
        for a in sorted(self.by_key.values(), key=lambda x: (x.number if x.number is not None else 10**9, x.key)):
            for link in a.links:
                other = core_adr.resolve_reference(link.target, by_file, by_number)
                if other is None:
                    self.warnings.append(f"{a.filename}: {link.rel} {link.target!r}, which is not in the directory")
                    continue
                if other == a.key:
                    continue
                ends = (other, a.key) if link.inward else (a.key, other)
                if link.rel in core_adr.SYMMETRIC_LINKS:
                    ends = (min(ends), max(ends))
                if (link.rel, ends) not in wanted:
                    wanted.append((link.rel, ends))
        for rel, (frm, to) in wanted:
            source, target = self.current(frm), self.current(to)
            if source is None or target is None:
                continue
            key = (rel, source.id, target.id)
            if key in self.relations:
                continue
            self.relations.add(key)
            self._relate(rel, self.by_key[frm], source, self.by_key[to], target)

    def current(self, key: str) -> Optional[Entry]:
        mains = [e for e in self.group(key) if not _is_closer(e)]
        return mains[-1] if mains else None

    def _relate(self, rel: str, a: core_adr.Adr, source: Entry, b: core_adr.Adr, target: Entry) -> None:
        from ..core.entry import new_entry

        body = f"rel: {rel}\nfrom: {source.id}\nto: {target.id}"
        ts = max(source.ts, target.ts) + _TICK  # after both ends, as a child is (ts is not hashed)
        try:
            e = new_entry(
                kind="relation",
                summary=_clip(f"{a.label} {rel.replace('-', ' ')} {b.label}"),
                body=body,
                author=self.author,
                parents=sorted({source.id, target.id}),
                ts=ts,
            )
        except InputError as exc:
            raise InputError(f"{a.filename}: {exc}") from None
        self.by_id[e.id] = e
        self.planned.append(e)


def _relation_key(e: Entry) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(rel, from, to) of a relation entry's body."""
    fields = dict(
        line.split(": ", 1)
        for line in e.body.split("\n")
        if line.split(":", 1)[0] in ("rel", "from", "to") and ": " in line
    )
    return (fields.get("rel"), fields.get("from"), fields.get("to"))


def _closer_body(a: core_adr.Adr, withdrawn: bool, successors: set[str]) -> str:
    if a.status == "deprecated":
        why = f"{a.label} is deprecated (status: {a.status_text or 'Deprecated'}): its decision is no longer in force."
    elif withdrawn:
        named = ", ".join(a.superseded_by) or "no ADR"
        why = f"{a.label} is superseded by {named}, which is not in the directory: its decision is no longer in force."
    else:
        why = f"{a.label} is {a.status}: its earlier versions, and the ADRs it supersedes, are closed."
    return f"action: revert\n\n{why}\n\n{core_adr.MARKER}: {a.filename}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SUMMARY_CHARS else text[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def plan_import(
    adrs: list[core_adr.Adr], entries: list[Entry], author: str, now: datetime
) -> tuple[list[Entry], list[str]]:
    """(entries to write, warnings): what importing `adrs` into a line holding `entries` adds."""
    planner = _Planner(adrs, entries, author, now)
    for key in planner.order():
        planner.plan(key)
    planner.plan_links()
    return planner.planned, planner.warnings


# ---- the use cases ---------------------------------------------------------------------------
def import_adrs(led: "Ledger", directory: Path) -> AdrImport:
    """Import a directory of ADRs into the ledger's line, in one commit."""
    from ..core.entry import utcnow

    adrs = read_adr_dir(directory)
    planned, warnings = plan_import(adrs, led.entries(), led.default_author(), utcnow())
    if not planned:
        return AdrImport(led.line, len(adrs), [], 0, None, warnings)
    result = led.append(planned, imported="adr")
    return AdrImport(led.line, len(adrs), list(result.added), len(result.existing), result.commit, warnings)


def export_madr(led: "Ledger", directory: Path) -> list[Path]:
    """Write each decision in force as a MADR file in `directory` (missing or empty); returns
    the paths written. An ADR imported before keeps its number; the others follow."""
    from ..git.fs import write_atomic

    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InputError(f"{directory}: not an empty directory; nothing was written")
    st = led.state()
    decisions = st.decisions
    numbers: dict[str, int] = {}
    for e in decisions:
        name = core_adr.marker_of(e.body)
        ident = core_adr.adr_key(name) if name else None
        if ident and ident[1] is not None and ident[1] not in numbers.values():
            numbers[e.id] = ident[1]
    following = max(numbers.values(), default=0) + 1
    files = []
    for e in decisions:
        if e.id not in numbers:
            numbers[e.id] = following
            following += 1
        body = core_adr.strip_marker(e.body)
        header = blocks.header_fields(body)
        meta = {k: v for k, v in header.items() if k in core_adr.HEADER_KEYS}
        meta.update({"deciders": e.author, "lifeline-id": e.id})
        text = core_adr.render_madr(e.summary, f"{e.ts:%Y-%m-%d}", blocks.strip_header(body), meta)
        files.append((directory / core_adr.madr_filename(numbers[e.id], e.summary), text))
    directory.mkdir(parents=True, exist_ok=True)
    for path, text in files:
        write_atomic(path, text)
    return [p for p, _ in files]
