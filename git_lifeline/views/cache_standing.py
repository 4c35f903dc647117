"""The cache's standing table (docs/FORMAT.md §10): each entry's status apart from the
clock, by id (core/status.py `Kept`), so that recall gives its few hits their status and
the entry that replaced them without reading the fold.

One row per id that is superseded, withdrawn or closed (with the end of its chain of
revisions), a carrier not superseded (with its validity window, applied when read) or an
open item; an id without a row is `recorded`. Written by the fold's writer
(views/cache.py) in the transaction that seals the fold: whole, by difference from the
rows it holds, when the fold's base is written (the derived truth may have changed
anywhere), and only the appended entries' rows when an append goes to the journal (the
derived truth was kept: no correction, only decisions after every carrier in force).

Rows fall in buckets (cache_check.STANDING_BUCKETS) by a CRC-32 of their id. `meta.standing` is the text of each
bucket's sum (of its rows' checksums, as the entries' rows are summed), and its sha256 is
in the seal (views/cache_check.py): a reader checks that text against the seal once, then
each bucket it reads against its sum, so a row edited, dropped or added under a stamp put
back is never served, and no read sums the whole table."""

from __future__ import annotations

import sqlite3
from typing import Callable, Iterable, Optional

from ..core import truth
from ..core.dates import utc_now_key
from ..core.status import Class, Kept, KeptStandings, Status
from . import cache_check as check

_MASK = (1 << 64) - 1
COLUMNS = "id, kind, valid_from, valid_until, successor"
_INSERT = f"INSERT OR REPLACE INTO standing(bucket, {COLUMNS}) VALUES (?,?,?,?,?,?)"
# One row as summed: id, kind, valid-from, valid-until, successor
Row = tuple[str, str, str, str, str]
_CLASSES: dict[str, Class] = {
    "superseded": "superseded",
    "withdrawn": "withdrawn",
    "closed": "closed",
    "carrier": "carrier",
    "open": "open",
}


def standings_of(f: truth.Fold) -> KeptStandings:
    return KeptStandings(f.derived, f.corrections, f.opens, f.facts)


def _row(entry_id: str, kept: Kept) -> Row:
    return (entry_id, kept.kind, kept.valid_from, kept.valid_until, kept.successor)


def write_all(db: sqlite3.Connection, f: truth.Fold, fresh: bool) -> str:
    """The table for fold `f`, whole; returns its sums text. `fresh`: the table is emptied
    and filled (a cold build); else only the rows that differ are written."""
    standings = standings_of(f)
    keyed = sorted((check.bucket_of(i), i) for i in standings.ids())
    sums = [0] * check.STANDING_BUCKETS
    new: list[tuple] = []
    for b, entry_id in keyed:
        kept = standings.of(entry_id)
        if kept is not None:
            row = _row(entry_id, kept)
            sums[b] = (sums[b] + check.row_sum(row)) & _MASK
            new.append((b, *row))
    del keyed
    if fresh:
        db.execute("DELETE FROM standing")
        db.executemany(_INSERT, new)
        return check.sums_text(sums)
    # Both in (bucket, id) order, side by side; the changes are written once the old rows are read.
    changed: list[tuple] = []
    gone: list[tuple[int, str]] = []
    n = 0
    for old in db.execute(f"SELECT bucket, {COLUMNS} FROM standing ORDER BY bucket, id"):
        while n < len(new) and new[n][:2] < old[:2]:
            changed.append(new[n])
            n += 1
        if n < len(new) and new[n][:2] == old[:2]:
            if new[n] != old:
                changed.append(new[n])
            n += 1
        else:
            gone.append((old[0], old[1]))
    changed.extend(new[n:])
    db.executemany("DELETE FROM standing WHERE bucket=? AND id=?", gone)
    db.executemany(_INSERT, changed)
    return check.sums_text(sums)


def write_some(db: sqlite3.Connection, f: truth.Fold, ids: Iterable[str], text: str) -> str:
    """The rows of `ids` (the entries an append folded onto a fold whose derived truth was
    kept: nothing else's standing changed), from the sums text before; returns it after."""
    standings = standings_of(f)
    sums: Optional[list[int]] = None
    for entry_id in ids:
        b = check.bucket_of(entry_id)
        old = _read(db, b, entry_id)
        kept = standings.of(entry_id)
        if old is None and kept is None:
            continue
        if sums is None:
            sums = check.sums_of(text)
        if old is not None:
            sums[b] = (sums[b] - check.row_sum(old)) & _MASK
            db.execute("DELETE FROM standing WHERE bucket=? AND id=?", (b, entry_id))
        if kept is not None:
            row = _row(entry_id, kept)
            db.execute(_INSERT, (b, *row))
            sums[b] = (sums[b] + check.row_sum(row)) & _MASK
    return check.sums_text(sums) if sums is not None else text


def read_sums(db: sqlite3.Connection, standing_sum: str) -> str:
    """The sums text the file holds, checked against `standing_sum` (the seal's, read in the
    same transaction)."""
    row = db.execute("SELECT value FROM meta WHERE key='standing'").fetchone()
    if row is None or not isinstance(row[0], str) or check.text_sum(row[0]) != standing_sum:
        raise check.Corrupt("its standing sums do not match its seal")
    return row[0]


def _read(db: sqlite3.Connection, b: int, entry_id: str) -> Optional[Row]:
    row = db.execute(f"SELECT {COLUMNS} FROM standing WHERE bucket=? AND id=?", (b, entry_id)).fetchone()
    return tuple(row) if row is not None else None


def sealed_sum(db: sqlite3.Connection, known: Optional[check.Sealed], version: str) -> str:
    """The sha256 of the standing sums that the seal the file holds now names (called in a
    read transaction: another process may have advanced the file since `known` was read)."""
    row = db.execute("SELECT value FROM meta WHERE key='seal'").fetchone()
    fresh = known is not None and row is not None and row[0] == known.seal
    sealed = known if fresh else check.read_sealed(db, version, in_transaction=True)
    if sealed is None:
        raise check.Corrupt("its seal is missing")
    return sealed.standing_sum


class Standings:
    """Statuses read from the table by id, at one time (`now`, as a State is made at one).
    `sealed` gives the sha256 of the sums text the seal holds, read afresh (the file may
    have been advanced by another process since): each bucket read is checked against its
    sum, and a bucket that does not match the sums of the seal the file holds raises
    Corrupt."""

    def __init__(self, db: sqlite3.Connection, sealed: Callable[[], str], now: Optional[str] = None):
        self.db = db
        self.now = now or utc_now_key()
        self._sealed = sealed
        self._sums: Optional[list[int]] = None
        self._buckets: dict[int, dict[str, Kept]] = {}

    def _load_sums(self) -> list[int]:
        """The sums text, checked against the seal (read in one transaction with it)."""
        self.db.execute("BEGIN")
        try:
            text = read_sums(self.db, self._sealed())
        finally:
            if self.db.in_transaction:
                self.db.execute("COMMIT")
        return check.sums_of(text)

    def _bucket(self, b: int) -> dict[str, Kept]:
        if b not in self._buckets:
            if self._sums is None:
                self._sums = self._load_sums()
            for again in (False, True):
                rows = [tuple(r) for r in self.db.execute(f"SELECT {COLUMNS} FROM standing WHERE bucket=?", (b,))]
                if check.add_sums(0, rows) == self._sums[b]:
                    break
                if again:
                    raise check.Corrupt("its standing table does not match its seal")
                self._sums = self._load_sums()  # another process may have advanced it meanwhile
            kept: dict[str, Kept] = {}
            for entry_id, kind, valid_from, valid_until, successor in rows:
                if kind not in _CLASSES:
                    raise check.Corrupt("its standing table holds a status it does not know")
                kept[entry_id] = Kept(_CLASSES[kind], valid_from, valid_until, successor)
            self._buckets[b] = kept
        return self._buckets[b]

    def kept(self, entry_id: str) -> Optional[Kept]:
        return self._bucket(check.bucket_of(entry_id)).get(entry_id)

    def status(self, entry_id: str) -> Status:
        kept = self.kept(entry_id)
        return kept.status(self.now) if kept is not None else "recorded"

    def superseded(self, entry_id: str) -> bool:
        """Named by an acting correction (what `State.superseded` holds)."""
        kept = self.kept(entry_id)
        return kept is not None and kept.kind in ("superseded", "withdrawn", "closed")

    def successor(self, entry_id: str) -> Optional[str]:
        """The carrier in force that replaced `entry_id`, following its chain of revisions to
        the end; None when a revert or nothing in force stands there."""
        kept = self.kept(entry_id)
        end = kept.successor if kept is not None and self.superseded(entry_id) else ""
        return end if end and end != entry_id and self.status(end) == "in force" else None
