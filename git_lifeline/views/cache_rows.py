"""The rows of the cache (views/cache.py): its schema, one blob to one row, a batch in,
a row out, the fold made again from the rows, and the fold as stored: a base text and a
journal. Every write keeps the rows' digest (views/cache_check.py) in step.

The fold is stored as a **base** (`meta.fold`, core/fold_text.py: the whole fold as it
stood when it was last written whole) and a **journal** (`meta.journal`: the entries
folded onto that base since, in the order they were folded, one id a line, `!` before
a broken one). An append adds its entries to the journal and leaves the base alone, so
it writes what the new entries cost, not the line; reading folds the journal's rows onto
the base again (`read_fold`). Past `journal_limit` entries the next write writes the
base whole and empties the journal (one whole write in thousands of appends), and so does
an append that changes the derived truth beyond what `supersession.with_decision` extends
(a correction, a decision that sorts early): the base holds the derived truth, so that a
read never derives the whole graph again."""

from __future__ import annotations

import gc
import sqlite3
from contextlib import contextmanager
from operator import attrgetter
from typing import TYPE_CHECKING, Iterator, Optional

from ..core import fold_text
from ..core.entry import Entry, compute_id, sort_in_order
from . import cache_check as check

if TYPE_CHECKING:  # the truth is imported where a fold is made or read: a `log` that
    # renders its first projection file from the rows never imports it
    from ..core import truth

# 9: the standing table (cache_standing.py), the indexes entries_newest and entries_broken; 8: the fold is a base and a journal (meta fold,
# fold_sum, journal); 7: ids by index
SCHEMA_VERSION = "9"
BATCH = 2000
COLUMNS = "rowid, id, blob, ts, kind, ok, summary, body, dedup, json"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    rowid INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    blob TEXT NOT NULL,
    ts TEXT NOT NULL,
    kind TEXT NOT NULL,
    ok INTEGER NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    dedup TEXT,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_dedup ON entries(dedup) WHERE dedup IS NOT NULL;
-- recall's newest entry and its count of broken rows, read without a scan of the rows
CREATE INDEX IF NOT EXISTS entries_newest ON entries(ts) WHERE ok = 1;
CREATE INDEX IF NOT EXISTS entries_broken ON entries(id) WHERE ok = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    summary, body, content='entries', content_rowid='rowid',
    tokenize="unicode61 remove_diacritics 2"
);
-- each id's standing in the truth (views/cache_standing.py reads and writes it; defined here
-- with the other tables so that a process that only appends never imports the truth)
CREATE TABLE IF NOT EXISTS standing (
    bucket INTEGER NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT NOT NULL,
    successor TEXT NOT NULL,
    PRIMARY KEY (bucket, id)
) WITHOUT ROWID;
"""


_NO_HEADER: dict[str, str] = {}  # shared by every slim record without header fields (the fold only reads it)

# One entry's row as a build writes it: id, blob, ts, kind, ok (0/1), summary, body, dedup key, blob text
Row = tuple[str, str, str, str, int, str, str, Optional[str], str]


class Slim:
    """What the fold reads of an entry, without its body or summary (the fold reads a
    subject from the header, never from the summary): a cold build holds one per entry
    until it is folded. The id, parents, kind and names are shared through `names`."""

    __slots__ = ("ts", "id", "kind", "agent", "provider", "model", "parents", "header")
    summary = ""

    def __init__(self, e: Entry, ts: str, names: dict[str, str], header: dict[str, str]):
        self.ts = ts
        self.id = names.setdefault(e.id, e.id)
        self.kind = names.setdefault(e.kind, e.kind)
        self.parents = tuple(names.setdefault(p, p) for p in e.parents) if e.parents else ()
        self.agent = names.setdefault(e.agent, e.agent)
        self.provider = names.setdefault(e.provider, e.provider)
        self.model = names.setdefault(e.model, e.model)
        self.header = header or _NO_HEADER  # truth.header_of(e), from the caller that folds


def fold_slims(slims: list[Optional[Slim]], broken: list[str]) -> truth.Fold:
    """The fold of a cold build: slim records in (ts, id) order. Each is let go once
    folded (the list is emptied), so the fold grows into the memory they leave."""
    from ..core import truth

    sort_in_order(slims, attrgetter("ts"), attrgetter("id"))
    f = truth.Fold()
    for n, s in enumerate(slims):
        slims[n] = None  # each slot is emptied once folded: none is None before
        if s is not None:
            f.add(s, s.header, [s.ts, s.id])
    slims.clear()
    f.broken = sorted(broken)
    return f


def parse(entry_id: str, blob_id: str, data: bytes) -> tuple[Optional[Entry], bool, Row]:
    """(Entry or None, ok, row) for one blob (its oid and bytes) at an entry path.

    `ok` says the content hashes to its id and its path; content rules are
    verify's business. An unreadable blob is kept as a broken row, so the truth
    warns about it instead of dropping it silently. No pydantic here, so a cold
    build stays cheap."""
    text = data.decode("utf-8", "replace")  # for the row only: the parse judges the bytes, as verify does
    try:
        r = Entry.from_json(data)
        ok = int(
            r.id == entry_id
            and compute_id(r.kind, r.author, r.agent, r.provider, r.model, r.summary, r.body, r.parents) == r.id
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, False, (entry_id, blob_id, "", "", 0, "", "", None, text)
    row = (entry_id, blob_id, f"{r.ts:%Y-%m-%dT%H:%M:%S.%f}Z", r.kind, ok, r.summary, r.body, r.dedup_key, text)
    return r, bool(ok), row


def drop(db: sqlite3.Connection, entry_id: str, digest: int) -> int:
    """Forget an entry before re-indexing it (a merge chose the other blob of its id)."""
    old = db.execute(f"SELECT {COLUMNS} FROM entries WHERE id=?", (entry_id,)).fetchone()
    if old is None:
        return digest
    db.execute("INSERT INTO fts(fts, rowid, summary, body) VALUES ('delete', ?, ?, ?)", (old[0], old[6], old[7]))
    db.execute("DELETE FROM entries WHERE rowid=?", (old[0],))
    return check.add_sums(digest, [old], -1)


def insert(db: sqlite3.Connection, rows: list[Row], digest: int, searchable: bool = True) -> int:
    """Add rows (and, unless the caller indexes every row at the end, their search index)."""
    if not rows:
        return digest
    first = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM entries").fetchone()[0] + 1
    numbered = [(first + n, *row) for n, row in enumerate(rows)]
    db.executemany(f"INSERT INTO entries({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", numbered)
    if searchable:
        db.executemany(
            "INSERT INTO fts(rowid, summary, body) VALUES (?, ?, ?)", [(row[0], row[6], row[7]) for row in numbered]
        )
    return check.add_sums(digest, numbered)


def index_all(db: sqlite3.Connection) -> None:
    """The search index made again from every row, in one statement: what a cold build
    does once its rows are in (SQLite lets go of Python's lock while it runs)."""
    db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")


def refold(db: sqlite3.Connection) -> truth.Fold:
    """Fold every row again, streamed in (ts, id) order: the ts column's fixed format
    sorts as time does (a merge brought entries older than the fold, a blob changed)."""
    from ..core import truth

    f = truth.Fold()
    broken = []
    for ok, text, entry_id in db.execute("SELECT ok, json, id FROM entries ORDER BY ts, id"):
        if ok:
            f.add(Entry.from_json(text))
        else:
            broken.append(entry_id)
    f.broken = sorted(broken)
    return f


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector kept off while a cold build or a fold read allocates: they
    make millions of small containers that form no cycles (reference counting frees them),
    and each full collection walks every one of them again (~1 s of a 100k build, 8 full
    passes; a third of reading a 100k fold)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


JOURNAL_MAX = 2048


def journal_limit(count: int) -> int:
    """How many entries the journal holds before the base is written whole again. Folding
    one again as the fold is read costs a row read and a parse (~30 us); writing the base
    whole ~10 us per entry of the line: a 64th of the line keeps the replay a small share
    of reading the base, and 2,048 bounds it at any size."""
    return max(16, min(JOURNAL_MAX, count // 64))


def journal_after(journal: str, folded: list[str], broken: list[str]) -> str:
    """The journal once these entries (ids in the order they were folded) and these broken
    ids were added to the fold."""
    return journal + "".join(f"{i}\n" for i in folded) + "".join(f"!{i}\n" for i in broken)


def journal_length(journal: str) -> int:
    return journal.count("\n")


def read_fold(db: sqlite3.Connection, sealed: check.Sealed) -> Optional[truth.Fold]:
    """The fold the cache holds (read in the transaction `sealed` was read in): its base,
    checked against its sum, with the journal's entries folded onto it in their order.
    None for a base of another fold version (folded again by the caller); Corrupt when the
    base does not match its sum or the journal names a row the file does not hold sound."""
    f = fold_of(check.read_base(db, sealed))
    if f is None or not sealed.journal:
        return f
    broken: list[str] = []
    with no_cycle_collection():
        for line in sealed.journal.splitlines():
            if line.startswith("!"):
                broken.append(line[1:])
                continue
            row = db.execute("SELECT json, ok FROM entries WHERE id=?", (line,)).fetchone()
            try:
                e = Entry.from_json(row[0]) if row is not None and row[1] else None
            except ValueError:
                e = None
            if e is None or e.id != line:
                raise check.Corrupt("its fold's journal names a row it does not hold")
            f.add(e)
    if broken:
        f.broken = sorted(set(f.broken) | set(broken))
    return f


def fold_of(text: str) -> Optional[truth.Fold]:
    from ..core import truth

    try:
        with no_cycle_collection():
            return fold_text.read(truth.Fold, text)
    except (ValueError, TypeError):
        return None  # an older fold version: folded again
