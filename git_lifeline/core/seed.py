"""Interop with lifeline-context 0.6: read its ledgers, write a file it reads back.

Sources (`read_source` tells them apart by content, not by name):
* its markdown view in the current format: entries cut by an end sentinel line;
* its older heading-only markdown: entries cut at each `### #` heading, bodies
  closed by `---`, and, where an entry lists no parents, the previous entry as
  its parent;
* its SQLite ledger (`.lifeline/<line>.db`): the `entries` table, read only.

Every record becomes an Entry through the one builder (`Entry.new`: the type of every
field another tool wrote, then every rule and the secret scan), its id is
recomputed and compared with the id the source recorded, and nothing is guessed:
a record the seed's own reader would get wrong (an empty summary, a summary with
a line break, a body that contains the end sentinel) is refused with its name.
The layer knows nothing of click; `import_from` and `export_seed` in app/interop.py
drive it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, TypeVar, Union

from ..errors import InputError
from .content_rules import HEX64
from .entry import MAX_BLOB_BYTES, Entry, abbrev, compute_id
from .json_input import read_json

SEED_SENTINEL = "<!-- lifeline:end -->"
T = TypeVar("T")
# Sizes checked before anything is parsed: a source file is read whole (a 10,000-entry
# ledger is ~6 MB), a payload holds one entry (and what else the other tool stored).
MAX_SOURCE_BYTES = 256 << 20
MAX_PAYLOAD_BYTES = 2 * MAX_BLOB_BYTES
# A SQLite file's size does not bound what a query over it yields (a view can be an
# endless recursive query), so the rows and the time the read takes are bounded too.
MAX_SEED_ROWS = 1_000_000
MAX_SEED_SECONDS = 60.0
SQLITE_MAGIC = b"SQLite format 3\x00"
SqlValue = Union[str, int, float, bytes, None]  # what a SQLite column of another tool's file holds
DB_FORMAT = "lifeline-context db"  # the one source that also holds a review queue (core/seed_queue.py)

_HEADING = re.compile(r"### #(?P<n>\d+)\s+—\s+(?P<ts>\S+)\s+—\s+(?P<kind>\w+)[ \t]*")
_FIELD = re.compile(r"- \*\*(?P<name>[a-z_]+)\*\*:(?P<value>.*)")
_NAME = re.compile(r"[a-z_]+")
# The field block exactly as lifeline-context writes it (fast path; anything else takes
# the line-by-line path, which accepts the same files and names what is wrong).
_STD_ORDER = ("author", "agent", "provider", "model", "kind", "summary", "parents", "id")
_STD_BLOCK = re.compile("\n\n" + "".join(rf"- \*\*{name}\*\*: ([^\n]*)\n" for name in _STD_ORDER))
_BODY_MARK = "**Body**:"
_FIELDS = ("author", "agent", "provider", "model", "kind", "summary", "parents", "id", "hash")
_ROOT_MARKS = ("", "—", "-")
_LEGACY_RULE = re.compile(r"\n*---\s*\Z")


class ImportRefused(InputError):
    """The source holds records that cannot be imported faithfully; nothing was written."""

    def __init__(self, source: str, refused: "list[tuple[SeedRecord, str]]"):
        self.refused = refused
        shown = [f"  {r.label()}: {why}" for r, why in refused[:20]]
        more = [f"  … and {len(refused) - 20} more"] if len(refused) > 20 else []
        super().__init__(
            f"{source}: {len(refused)} entr{'y' if len(refused) == 1 else 'ies'} refused, nothing was written:",
            *shown,
            *more,
        )


@dataclass
class SeedRecord:
    """One entry as the source recorded it, before validation."""

    where: str  # "#0003 (line 41)" or "seq 3"
    kind: str = ""
    author: str = ""
    agent: str = "human"
    provider: str = "none"
    model: str = "human"
    summary: str = ""
    body: str = ""
    parents: list[str] = field(default_factory=list)
    ts: str = ""
    dedup_key: Optional[str] = None
    recorded_id: Optional[str] = None
    problem: Optional[str] = None  # set by the reader when the record is already known bad

    def label(self) -> str:
        rid = f" {abbrev(self.recorded_id)}" if self.recorded_id else ""
        summary = self.summary.replace("\n", "⏎")[:50] if self.summary else "(no summary)"
        return f"{self.where}{rid} '{summary}'"


# ---- reading --------------------------------------------------------------------------
def read_source(path: Path) -> "tuple[str, Union[list[SeedRecord], SeedDb]]":
    """(format name, records) for a lifeline-context ledger file: a SQLite ledger is
    streamed (SeedDb: bounded by rows and time), a markdown one is a regular file of at
    most MAX_SOURCE_BYTES, told before a byte of it is parsed, read whole."""
    try:
        # non-blocking: opening a FIFO must not wait for a writer (it is refused below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory: give a LIFELINE.md or a .lifeline/<line>.db file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path} is a directory: give a LIFELINE.md or a .lifeline/<line>.db file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"{path} is not a regular file; a ledger to import is a regular file of at most "
                f"{MAX_SOURCE_BYTES} bytes"
            )
        head = f.read(16)
        if head == SQLITE_MAGIC:  # bounded by rows and time, not by size (SeedDb), and streamed
            return DB_FORMAT, SeedDb(path)
        if st.st_size > MAX_SOURCE_BYTES:
            raise InputError(
                f"{path} has {st.st_size} bytes; a ledger to import is a regular file of at most "
                f"{MAX_SOURCE_BYTES} bytes"
            )
        data = head + f.read(MAX_SOURCE_BYTES + 1 - len(head))  # checked again: a file can grow
    if len(data) > MAX_SOURCE_BYTES:
        raise InputError(f"{path} grew past {MAX_SOURCE_BYTES} bytes while it was read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if SEED_SENTINEL in text:
        return "lifeline-context markdown", parse_seed_markdown(text, str(path))
    if re.search(r"(?m)^### #\d+", text):
        return "lifeline-context legacy markdown", parse_legacy_markdown(text, str(path))
    raise InputError(
        f"{path} is not a lifeline-context ledger: no '### #NNNN' entry headings "
        "(for a git-lifeline projection use: git lifeline migrate --from FILE)"
    )


def _parse_fields(lines: list[str], start: int, where: str) -> tuple[dict[str, str], int, Optional[str]]:
    """Field lines `- **name**: value` from `start`; returns (fields, next index, problem)."""
    fields: dict[str, str] = {}
    i = start
    n = len(lines)
    while i < n and lines[i] == "":
        i += 1
    while i < n:
        line = lines[i]
        # `- **name**:value` (string operations: this runs for every line of a big import)
        end = line.find("**:", 4) if line.startswith("- **") else -1
        name = line[4:end] if end > 4 else ""
        if not name or not _NAME.fullmatch(name):
            break
        value = line[end + 3 :]
        if name not in _FIELDS:
            return fields, i, f"unknown field {name!r}"
        if name in fields:
            return fields, i, f"field {name!r} given twice"
        fields[name] = value[1:] if value.startswith(" ") else value
        i += 1
    return fields, i, None


def _recorded_id_anywhere(lines: list[str]) -> Optional[str]:
    """The recorded id of a block whose field list could not be read to the end (for naming it)."""
    for line in lines:
        m = _FIELD.fullmatch(line)
        if m and m.group("name") in ("id", "hash") and HEX64.fullmatch(m.group("value").strip()):
            return m.group("value").strip()
    return None


def _record(
    where: str,
    heading: re.Match,
    fields: dict[str, str],
    body: str,
    parents: list[str],
    problem: Optional[str],
    lines: Optional[list[str]] = None,
) -> SeedRecord:
    rec = SeedRecord(
        where=where, ts=heading.group("ts"), kind=heading.group("kind"), body=body, parents=parents, problem=problem
    )
    rec.author = fields.get("author", "")
    rec.agent = fields.get("agent") or "human"
    rec.provider = fields.get("provider") or "none"
    rec.model = fields.get("model") or "human"
    rec.summary = fields.get("summary", "")
    rec.recorded_id = (fields.get("id") or fields.get("hash") or "").strip() or None
    if rec.recorded_id is None and problem and lines:
        rec.recorded_id = _recorded_id_anywhere(lines)
    if rec.problem is None and "kind" in fields and fields["kind"] != rec.kind:
        rec.problem = f"the heading says kind {rec.kind!r} but the kind field says {fields['kind']!r}"
    if rec.problem is None and "summary" not in fields:
        rec.problem = "it has no summary field"
    return rec


def _parents_field(raw: Optional[str]) -> Optional[list[str]]:
    if raw is None or raw.strip() in _ROOT_MARKS:
        return None
    return [p.strip() for p in raw.split(",") if p.strip()]


def _find_heading(seg: str) -> int:
    """Offset of the first line of `seg` that is an entry heading, or -1."""
    if seg.startswith("### #"):
        start = 0
    else:
        k = seg.find("\n### #")
        start = k + 1 if k >= 0 else -1
    while start >= 0:
        eol = seg.find("\n", start)
        if _HEADING.fullmatch(seg[start:] if eol < 0 else seg[start:eol]):
            return start
        k = seg.find("\n### #", start)
        start = k + 1 if k >= 0 else -1
    return -1


def parse_seed_markdown(text: str, source: str = "LIFELINE.md") -> list[SeedRecord]:
    """Records of the sentinel format, strictly: anything the seed's own reader would
    silently misread becomes a record with a `problem` naming it.

    Works on offsets within each sentinel-delimited segment (a big import spends its
    time here): only the few header lines of an entry are split into lines."""
    records = []
    segments = text.split(SEED_SENTINEL)
    last = len(segments) - 1
    offset_line = 1
    prev: Optional[SeedRecord] = None
    for index, seg in enumerate(segments):
        h = _find_heading(seg)
        before = seg if h < 0 else seg[:h]
        if index > 0 and before.strip() and prev is not None and prev.problem is None:
            prev.problem = (
                f"its body contains the end sentinel {SEED_SENTINEL!r}; lifeline-context cuts "
                "the body there and drops the rest"
            )
        if h < 0:
            offset_line += seg.count("\n")
            continue
        eol = seg.find("\n", h)
        m = _HEADING.fullmatch(seg[h:] if eol < 0 else seg[h:eol])
        assert m is not None  # _find_heading returned the offset of a line it matched
        where = f"#{m.group('n')} (line {offset_line + before.count(chr(10))})"
        if index == last:
            # text after the last sentinel that opens an entry: an entry without its end
            records.append(
                SeedRecord(
                    where=where,
                    kind=m.group("kind"),
                    problem="the entry is not closed by the end sentinel (truncated file?)",
                )
            )
            break
        if len(seg) - h > MAX_BLOB_BYTES:  # sized before its fields are parsed
            records.append(
                SeedRecord(
                    where=where,
                    kind=m.group("kind"),
                    problem=(
                        f"it is larger than any entry can be ({len(seg) - h} characters; at most {MAX_BLOB_BYTES})"
                    ),
                )
            )
            prev = None
            offset_line += seg.count("\n")
            continue
        mark = seg.find("\n" + _BODY_MARK, h)
        std = _STD_BLOCK.fullmatch(seg, eol, mark) if mark >= 0 and eol >= 0 else None
        if std is not None:
            lines = [""]
            fields, i, problem = dict(zip(_STD_ORDER, std.groups(), strict=True)), 1, None
        else:
            lines = (seg[h:mark] if mark >= 0 else seg[h:]).split("\n")
            fields, i, problem = _parse_fields(lines, 1, where)
        while i < len(lines) and lines[i] == "":
            i += 1
        body = ""
        if problem is None:
            rest = mark + 1 + len(_BODY_MARK)
            nl = seg.find("\n", rest) if mark >= 0 else -1
            if i < len(lines):
                problem = (
                    f"unexpected text {lines[i][:40]!r} among its fields (a value with a line break? "
                    "lifeline-context misreads it)"
                )
            elif mark < 0:
                problem = "it has no **Body**: section"
            elif (seg[rest:] if nl < 0 else seg[rest:nl]).strip():
                problem = f"unexpected text after {_BODY_MARK!r} on its line"
            else:
                body = seg[nl + 1 :].strip() if nl >= 0 else ""
        if problem is None and fields.get("summary", "x").strip() == "":
            problem = "its summary is empty (lifeline-context reads the next field line as the summary)"
        parents = _parents_field(fields.get("parents")) or []
        rec = _record(where, m, fields, body, parents, problem, lines)
        records.append(rec)
        prev = rec
        offset_line += seg.count("\n")
    return records


def parse_legacy_markdown(text: str, source: str = "LIFELINE.md") -> list[SeedRecord]:
    """Records of the heading-only format. An entry without a parents field (or with
    an empty one) has the previous entry as its parent, as the format defines; the
    previous entry's id is the one recomputed from its content."""
    records = []
    lines = text.split("\n")
    starts = [k for k, line in enumerate(lines) if line.startswith("### #")]
    prev_id: Optional[str] = None
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        block = lines[start:end]
        m = _HEADING.fullmatch(block[0])
        if not m:
            records.append(
                SeedRecord(
                    where=f"line {start + 1}",
                    problem=(
                        f"{block[0][:50]!r} starts with '### #' but is not an entry heading: a body quoting a heading "
                        "cannot be told apart from a new entry in this format"
                    ),
                )
            )
            prev_id = None
            continue
        where = f"#{m.group('n')} (line {start + 1})"
        fields, i, problem = _parse_fields(block, 1, where)
        while i < len(block) and block[i] == "":
            i += 1
        body = ""
        if problem is None:
            if i < len(block) and block[i].rstrip() == _BODY_MARK:
                body = _LEGACY_RULE.sub("", "\n".join(block[i + 1 :])).strip()
            elif i < len(block) and block[i].strip() != "---":
                problem = f"unexpected text {block[i][:40]!r} among its fields (a value with a line break?)"
        if problem is None and fields.get("summary", "x").strip() == "":
            problem = "its summary is empty (lifeline-context reads the next field line as the summary)"
        explicit = _parents_field(fields.get("parents"))
        parents = explicit if explicit is not None else ([prev_id] if prev_id else [])
        rec = _record(where, m, fields, body, parents, problem, block)
        records.append(rec)
        prev_id = _computed_id(rec)
    return records


def _computed_id(rec: SeedRecord) -> Optional[str]:
    try:
        return compute_id(rec.kind, rec.author, rec.agent, rec.provider, rec.model, rec.summary, rec.body, rec.parents)
    except Exception:
        return None


def _require_plain_table(con: sqlite3.Connection, path: Path) -> None:
    """`entries` must be a table that stores its rows: a view or a virtual table computes
    them, and may compute them without end."""
    row = con.execute("SELECT type, sql FROM sqlite_master WHERE name = 'entries' COLLATE NOCASE").fetchone()
    if row is None or row[0] != "table" or re.match(r"\s*create\s+virtual\b", str(row[1] or ""), re.I):
        what = (
            "no entries table"
            if row is None
            else f"its entries is a {'virtual table' if row[0] == 'table' else row[0]}"
        )
        raise InputError(f"{path} is not a lifeline-context ledger ({what}; only a table is read)")


class SeedDb:
    """The records of a lifeline-context SQLite ledger, in its insertion order (seq), read
    from the file as they are iterated (a 1,000,000-entry ledger is ~1.5 GB: fetched whole,
    its rows alone held more than a gigabyte).

    The file's size bounds nothing here (a query's yield is not the file's size), so what
    is bounded is what the reading can cost: `entries` must be a table that stores its rows
    (a view or a virtual table computes them, and may compute them without end), at most
    MAX_SEED_ROWS rows (counted before the first is read, and again while reading), no
    payload larger than any entry (measured before it is fetched), and at most
    MAX_SEED_SECONDS spent inside SQLite (the time the caller takes between rows is its
    own: validating and writing a million entries takes longer than reading them)."""

    BATCH = 1000  # rows fetched at a time

    def __init__(self, path: Path):
        self.path = path
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        try:
            self._con = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise InputError(f"{path}: cannot open the SQLite file: {exc}") from None
        self._spent = 0.0  # seconds spent inside SQLite so far
        self._deadline = 0.0
        self._con.set_progress_handler(lambda: int(time.monotonic() > self._deadline), 10_000)  # non-zero aborts
        try:
            self.rows = self._timed(self._count)
        except BaseException:
            self._con.close()
            raise
        if self.rows > MAX_SEED_ROWS:
            self._con.close()
            raise InputError(f"{path} holds more than {MAX_SEED_ROWS} entries; nothing was imported")

    def __len__(self) -> int:
        return self.rows

    def _count(self) -> int:
        _require_plain_table(self._con, self.path)
        return int(self._con.execute("SELECT count(*) FROM entries").fetchone()[0])

    def _timed(self, step: Callable[[], T]) -> T:
        """One step of SQLite's work, within what is left of the time bound."""
        start = time.monotonic()
        self._deadline = start + MAX_SEED_SECONDS - self._spent
        try:
            return step()
        except sqlite3.Error as exc:
            if time.monotonic() > self._deadline:
                raise InputError(f"{self.path}: reading its entries took longer than {MAX_SEED_SECONDS:g} s") from None
            raise InputError(
                f"{self.path} is not a lifeline-context ledger (no readable entries table: {exc})"
            ) from None
        finally:
            self._spent += time.monotonic() - start

    def __iter__(self) -> Iterator[SeedRecord]:
        try:
            # a payload's size is known before it is fetched: no entry is larger than a blob
            cursor = self._timed(
                lambda: self._con.execute(
                    "SELECT seq, id, CASE WHEN length(CAST(payload AS BLOB)) <= ? THEN payload END, "
                    "length(CAST(payload AS BLOB)) FROM entries ORDER BY seq LIMIT ?",
                    (MAX_PAYLOAD_BYTES, MAX_SEED_ROWS + 1),
                )
            )
            read = 0
            while True:
                rows = self._timed(lambda: cursor.fetchmany(self.BATCH))
                if not rows:
                    return
                read += len(rows)
                if read > MAX_SEED_ROWS:  # the file grew since it was counted
                    raise InputError(f"{self.path} holds more than {MAX_SEED_ROWS} entries; nothing was imported")
                for seq, row_id, payload, size in rows:
                    yield _db_record(seq, row_id, payload, size)
        finally:
            self._con.close()


def row_label(prefix: str, value: SqlValue) -> str:
    """Where a SQLite row sits ("seq 3"); a non-integer (a hostile TEXT column) shown escaped."""
    return f"{prefix}{value}" if type(value) is int else f"{prefix}{ascii(value)[:60]}"


def _db_record(seq: SqlValue, row_id: str, payload: Optional[str], size: Optional[int]) -> SeedRecord:
    rec = SeedRecord(where=row_label("seq ", seq), recorded_id=row_id)
    if payload is None and size is not None:
        rec.problem = f"its payload is larger than any entry can be ({size} bytes; at most {MAX_PAYLOAD_BYTES})"
        return rec
    if payload is None:
        rec.problem = "its payload is not JSON (it is NULL)"
        return rec
    try:
        doc = read_json(payload, MAX_PAYLOAD_BYTES)
        if not isinstance(doc, dict):
            raise ValueError("not an object")
    except (ValueError, TypeError) as exc:
        rec.problem = f"its payload is not JSON ({exc})"
        return rec
    for name in ("kind", "author", "agent", "provider", "model", "summary", "body", "ts"):
        value = doc.get(name)
        if value is not None:
            setattr(rec, name, value)
    rec.parents = doc.get("parents") or []
    rec.dedup_key = doc.get("dedup_key")
    if doc.get("id") and doc.get("id") != row_id:
        rec.problem = f"its row id {abbrev(row_id)} differs from its payload id {abbrev(str(doc['id']))}"
    return rec


# ---- writing a file lifeline-context reads -----------------------------------------------
def export_problem(e: Entry) -> Optional[str]:
    """Why lifeline-context would not read `e` back with the same id, or None."""
    if SEED_SENTINEL in e.body:
        return f"its body contains {SEED_SENTINEL!r}, where lifeline-context cuts an entry"
    for name in ("author", "agent", "provider", "model", "summary"):
        value = getattr(e, name)
        if SEED_SENTINEL in value:
            return f"its {name} contains {SEED_SENTINEL!r}"
        if value.endswith(_BODY_MARK):
            return f"its {name} ends with {_BODY_MARK!r}, which lifeline-context takes for the body's start"
    return None


def render_seed_markdown(entries: Iterable[Entry], line: str) -> str:
    """The ledger in lifeline-context's markdown (sentinel format), oldest first."""
    head = (
        f"# LIFELINE — {line}\n\n"
        f"> Exported by git-lifeline from refs/lifeline/{line}. lifeline-context reads it with\n"
        f"> `lifeline migrate --from <this file>`; every id is the same in both tools.\n\n"
        "## Entries\n\n"
    )
    blocks = []
    for n, e in enumerate(entries, 1):
        parents = ", ".join(e.parents) if e.parents else "—"
        blocks.append(
            f"### #{n:04d} — {e.ts.isoformat()} — {e.kind}\n\n"
            f"- **author**: {e.author}\n- **agent**: {e.agent}\n- **provider**: {e.provider}\n"
            f"- **model**: {e.model}\n- **kind**: {e.kind}\n- **summary**: {e.summary}\n"
            f"- **parents**: {parents}\n- **id**: {e.id}\n\n"
            f"**Body**:\n{e.body}\n\n{SEED_SENTINEL}\n"
        )
    return head + "\n".join(blocks)


def check_export(entries: Iterable[Entry], line: str) -> None:
    bad = [(e, why) for e in entries if (why := export_problem(e))]
    if bad:
        raise InputError(
            f"line {line!r}: {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} cannot be written "
            "in lifeline-context's format without changing an id; nothing was written:",
            *(f"  {abbrev(e.id)} '{e.summary[:50]}': {why}" for e, why in bad[:20]),
        )
