"""How the cache (views/cache.py) checks itself before it serves anything.

Three layers, cheapest first:

* **The seal**, on every read: `meta.seal` is a sha256 over the schema version, the
  entries tree the cache reflects, the number of rows, the rows' digest, the sha256 of
  the standing table's sums by bucket (`meta.standing_sum`, views/cache_standing.py), the
  sha256 of the fold's base text (`meta.fold_sum`) and the fold's journal (`meta.journal`:
  the entries folded onto the base since it was written, views/cache_rows.py). The count is
  one `count(*)`; the base text itself (~100 MB at a million entries) is not read to
  check the seal: whoever reads it checks it against `fold_sum` first (`read_base`), so
  a base that does not match is never folded; likewise whoever reads a bucket of the
  standing table checks the sums text against `standing_sum` and the bucket's rows against
  their sum. A stale tip, an edited or torn fold, an edited journal, a deleted or extra
  row, an edited standing row, an edited seal: each is a mismatch.
* **The stamp**, on every open: `<cache>.stamp`, written beside the file after each
  write of ours, holds the file's device, inode, size, mtime and ctime and the seal it
  was written with. Anything that changes the file without going through this module
  (a row edited with the sqlite3 shell, bytes flipped, a truncation, a copy, a hot
  journal rolled back) changes one of those; ctime cannot be set back by a user.
* **The full check**, when the stamp does not match: `PRAGMA quick_check` (the b-tree
  structure), every row re-summed against the digest in the seal (a summary edited in
  place, a flipped byte in a page's payload), every bucket of the standing table against
  its sum, the base text against its sum, and FTS5's
  `integrity-check` with rank 1 (the index against its rows: an emptied or stale index).
  It passes only for the very rows the seal was made over; then the
  stamp is rewritten and the next open is cheap again.

What this cannot see: a forgery that recomputes the seal and the stamp with this code.
The cache is under the git dir; whoever can write there can move the refs too.
Served entries are checked once more against their ids (views/cache.py, `record`).

Measured on the realistic 100k ledger (2 cores): the seal costs a `count(*)` (3 ms) and
a sha256 of a few small values; reading the base costs a sha256 of its text (~10 MB,
~25 ms) on top of its parse; the full check ~1 s (quick_check 0.14 s, the row sums
0.4 s, FTS against the rows 0.47 s), ~10x less at 10k.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional, Union

from ..core.json_input import read_json

if TYPE_CHECKING:  # annotations only: the warm `context` (cache_warm.py) starts without pathlib
    from pathlib import Path

_SEP = "\x1f"
_MASK = (1 << 64) - 1

# A cache row as SQLite gives it back (rowid first) or as a build writes it
SqlRow = tuple[Union[str, int, None], ...]


class Corrupt(sqlite3.DatabaseError):
    """The cache does not match its own seal: never served, rebuilt."""


def row_sum(row: SqlRow) -> int:
    """The checksum of one row (rowid, id, blob, ts, kind, ok, summary, body, dedup, json).
    Rows are summed, so a row dropped or replaced is subtracted without a rescan."""
    text = _SEP.join("" if v is None else str(v) for v in row)
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def add_sums(digest: int, rows: Iterable[SqlRow], sign: int = 1) -> int:
    for row in rows:
        digest = (digest + sign * row_sum(row)) & _MASK
    return digest


def text_sum(text: str) -> str:
    """The sha256 of a fold's base text, hashed in slices: a million-entry fold is ~100 MB
    of text, never encoded whole."""
    h = hashlib.sha256()
    step = 1 << 20
    for i in range(0, len(text), step):
        h.update(text[i : i + step].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


# The standing table's rows fall in this many buckets by a CRC-32 of their id
# (views/cache_standing.py): `meta.standing` holds each bucket's sum, `meta.standing_sum`
# the sha256 of that text, and the seal the latter.
STANDING_BUCKETS = 4096


def bucket_of(entry_id: str) -> int:
    return zlib.crc32(entry_id.encode("utf-8", "surrogatepass")) % STANDING_BUCKETS


def sums_text(sums: list[int]) -> str:
    """The buckets' sums as `meta.standing` holds them: 16 lowercase hex digits each, in order."""
    return "".join(f"{s:016x}" for s in sums)


def sums_of(text: str) -> list[int]:
    """The buckets' sums in `meta.standing`; Corrupt when it is not of their form."""
    if len(text) != 16 * STANDING_BUCKETS:
        raise Corrupt("its standing sums are not of their size")
    try:
        return [int(text[16 * b : 16 * b + 16], 16) for b in range(STANDING_BUCKETS)]
    except ValueError:
        raise Corrupt("its standing sums are not hex") from None


def standing_sums(db: sqlite3.Connection) -> str:
    """The sums text of the standing table as it is (what the full check compares)."""
    sums = [0] * STANDING_BUCKETS
    for row in db.execute("SELECT bucket, id, kind, valid_from, valid_until, successor FROM standing"):
        sums[row[0]] = (sums[row[0]] + row_sum(row[1:])) & _MASK
    return sums_text(sums)


def make_seal(version: str, tree: str, count: int, rows: int, standing_sum: str, fold_sum: str, journal: str) -> str:
    h = hashlib.sha256(f"{version}\0{tree}\0{count}\0{rows:016x}\0{standing_sum}\0{fold_sum}\0".encode("ascii"))
    h.update(journal.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass
class Sealed:
    """What one consistent read of the cache's meta found, checked against its seal (the
    base text is not read: `read_base` reads it, checked against `fold_sum`)."""

    tree: str  # the entries tree oid reflected ("none" for an empty line)
    fold_sum: str  # the sha256 of the fold's base text (meta `fold`)
    journal: str  # the entries folded onto the base since it was written (cache_rows.journal_lines)
    rows: int  # the digest of the rows (sum of row_sum)
    standing_sum: str  # the sha256 of `meta.standing`, the standing table's sums by bucket
    count: int
    seal: str


def read_sealed(db: sqlite3.Connection, version: str, in_transaction: bool = False) -> Optional[Sealed]:
    """The cache's tree, fold sum and journal, checked against the seal; None for a cache
    that was never filled (no tree, no rows). Raises Corrupt on any mismatch. The meta and
    the count are read in one transaction (the caller's, when it is in one), so a writer in
    another process cannot pair one state's fold with another's count. The base text is
    left in the file (its key only is read): most reads never need it."""
    if not in_transaction:
        db.execute("BEGIN")
    try:
        meta = dict(db.execute("SELECT key, CASE WHEN key='fold' THEN '' ELSE value END FROM meta").fetchall())
        count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    finally:
        if not in_transaction:
            db.execute("COMMIT")
    if "tree" not in meta and "seal" not in meta and "fold" not in meta and count == 0:
        return None
    try:
        if "fold" not in meta:
            raise KeyError("fold")
        sealed = Sealed(
            meta["tree"],
            meta["fold_sum"],
            meta["journal"],
            int(meta["rows"], 16),
            meta["standing_sum"],
            count,
            meta["seal"],
        )
    except (KeyError, ValueError) as exc:
        raise Corrupt(f"its seal is missing ({exc.__class__.__name__} {exc})") from None
    if (
        make_seal(version, sealed.tree, count, sealed.rows, sealed.standing_sum, sealed.fold_sum, sealed.journal)
        != sealed.seal
    ):
        raise Corrupt("its rows, fold or tip do not match its seal")
    return sealed


def read_base(db: sqlite3.Connection, sealed: Sealed) -> str:
    """The fold's base text, checked against the sum `sealed` holds (read in the transaction
    `sealed` was read in). Raises Corrupt."""
    row = db.execute("SELECT value FROM meta WHERE key='fold'").fetchone()
    if row is None or not isinstance(row[0], str) or text_sum(row[0]) != sealed.fold_sum:
        raise Corrupt("its fold does not match its seal")
    return row[0]


def write_seal(
    db: sqlite3.Connection,
    version: str,
    tree: str,
    rows: int,
    standing: str,
    journal: str,
    base: Optional[str] = None,
) -> Sealed:
    """Seal what this write transaction leaves (called inside it, last): the rows' digest,
    the standing table's sums text, a new base text when `base` is given (the journal then
    holds what was folded onto it: usually nothing), else the base the file holds, with
    this `journal`."""
    count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    if base is not None:
        fold_sum = text_sum(base)
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("fold", base), ("fold_sum", fold_sum)])
    else:
        row = db.execute("SELECT value FROM meta WHERE key='fold_sum'").fetchone()
        if row is None:
            raise Corrupt("its fold sum is missing")
        fold_sum = row[0]
    standing_sum = text_sum(standing)
    seal = make_seal(version, tree, count, rows, standing_sum, fold_sum, journal)
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("tree", tree),
            ("journal", journal),
            ("rows", f"{rows:016x}"),
            ("standing", standing),
            ("standing_sum", standing_sum),
            ("seal", seal),
        ],
    )
    return Sealed(tree, fold_sum, journal, rows, standing_sum, count, seal)


# ---- the stamp -------------------------------------------------------------------------------
def stamp_path(path: Union[str, Path]) -> Union[str, Path]:
    """The stamp beside the cache file `path` (of the same type: a str or a Path)."""
    return type(path)(os.fspath(path) + ".stamp")


def _file_stamp(path: Union[str, Path]) -> Optional[dict[str, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return {
        "dev": st.st_dev,
        "ino": st.st_ino,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


def stamp_matches(path: Union[str, Path], seal: str) -> bool:
    """True when the file is, byte for byte as far as the file system can tell, the one
    this module last sealed."""
    data = read_small_file(os.fspath(stamp_path(path)), 4096)
    try:
        doc = read_json(data, 4096) if data is not None else None
    except ValueError:
        return False
    now = _file_stamp(path)
    return isinstance(doc, dict) and now is not None and doc == {**now, "seal": seal}


def write_stamp(path: Union[str, Path], seal: str) -> None:
    """Remember the file as it is now (after a write of ours, or a full check that passed).
    A stamp that cannot be written only costs the next open a full check."""
    now = _file_stamp(path)
    if now is None:
        return
    replace_small_file(os.fspath(stamp_path(path)), json.dumps({**now, "seal": seal}, sort_keys=True))


def read_only_uri(path: str) -> str:
    """SQLite's URI for opening the file at `path` read-only. '%', '?' and '#' in the path
    are escaped: raw, a directory named 'a?mode=rwc' or 'b#c' cut the path short and opened
    another file (or none) with other options."""
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{escaped}?mode=ro"


def read_small_file(path: str, limit: int) -> Optional[bytes]:
    """The first `limit` bytes of the cache's side file `path`, or None when it is absent or
    not a regular file: a link is not followed, and a FIFO or a device planted there must
    not hold the read (a `context` waiting forever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def replace_small_file(target: str, text: str) -> None:
    """Write the cache's side file `target` (ASCII) whole, through a temporary file and a
    rename, or not at all: each side file only spares work, so a failure is not an error."""
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="ascii") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def full_check(db: sqlite3.Connection, sealed: Sealed) -> None:
    """Structure, every row against the seal's digest, and the FTS index against the rows.
    Raises Corrupt."""
    problems = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise Corrupt(f"quick_check: {problems[0]}")
    digest = add_sums(0, db.execute("SELECT rowid, id, blob, ts, kind, ok, summary, body, dedup, json FROM entries"))
    if digest != sealed.rows:
        raise Corrupt("a row does not match its seal")
    standing = db.execute("SELECT value FROM meta WHERE key='standing'").fetchone()
    if standing is None or standing[0] != standing_sums(db) or text_sum(standing[0]) != sealed.standing_sum:
        raise Corrupt("its standing table does not match its seal")
    read_base(db, sealed)
    try:
        # rank=1: the index against the rows too (without it an emptied index passes)
        db.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc) and "read-only" not in str(exc):
            raise Corrupt(f"its search index: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise Corrupt(f"its search index: {exc}") from None
