"""The cache (views/cache.py) read by a process that has not opened the repository with
pygit2: the warm `context` (app/warm_context.py).

The cache is keyed by the `entries` tree it reflects, and which tree a ledger commit
holds takes libgit2 (or git) to read. So LineCache leaves one more fact beside the file,
the **tip**: `<cache>.tip`, "commit C's entries tree is T", written whenever it served
C's truth from a cache at T. It is a fact about two content-addressed objects, true
whatever happens to the cache afterwards, so it needs no seal and never goes stale:
the reader serves only when the line's ref holds exactly C *and* the cache, checked as
LineCache checks it on every open (schema version, seal, stamp), reflects exactly T.
Anything else (no tip, another commit, another tree, a stamp that does not match, a
fold of another version, a damaged row met while rendering) raises or answers None,
and the caller takes the normal path, which repairs, rebuilds or warns as it always does.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from typing import TYPE_CHECKING, Optional

from ..core.entry import Entry, abbrev
from . import cache_check as check
from . import cache_rows as cr

if TYPE_CHECKING:  # annotations only: a kept answer (views/context_kept.py) is served without the fold
    from ..core import truth

TIP_SUFFIX = ".tip"
_TIP = re.compile(r"([0-9a-f]{40}) ([0-9a-f]{40})\n")
_TS_WIDTH = len("2023-01-01T00:00:00.000000Z")  # a row's ts as the blob stores it
_ANCHOR = re.compile(r"\[([0-9a-f]{8})\]")  # an entry's anchor in the context (core/entry.abbrev)


class NotWarm(Exception):
    """The cache cannot answer for this head without git: take the normal path."""


# ---- what LineCache and this reader share ---------------------------------------------------
def schema_version(db: sqlite3.Connection) -> Optional[str]:
    """The schema version the file holds; None for an empty file (Corrupt: another program's)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is None:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise check.Corrupt("it holds tables of another program")
        return None
    row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
    if row is None:
        raise check.Corrupt("its schema version is missing")
    return row[0]


def read_row(db: sqlite3.Connection, entry_id: str) -> tuple[bool, Optional[Entry]]:
    """(whether the row agrees with itself, the entry it serves). A row is served checked
    against its id once more: one that does not hash to its id, or claims to be broken
    when it is not, was damaged under us. A missing row is sound and serves None."""
    row = db.execute("SELECT json, ok FROM entries WHERE id=?", (entry_id,)).fetchone()
    if row is None:
        return True, None
    try:
        e: Optional[Entry] = Entry.from_json(row[0])
        sound = e is not None and e.id == entry_id and e.verify()
    except ValueError:
        e, sound = None, False
    if sound == bool(row[1]):
        return True, e if sound else None
    return False, None


def all_ids(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM entries WHERE ok=1 ORDER BY ts, id")]


def cache_file(lifeline_dir: str, line: str) -> str:
    return os.path.join(lifeline_dir, f"{line}.sqlite3")


# ---- the tip -------------------------------------------------------------------------------
def tip_path(cache_path: str) -> str:
    return cache_path + TIP_SUFFIX


def read_tip(cache_path: str) -> Optional[tuple[str, str]]:
    """(commit, tree) the tip file says, or None when it is absent or not exactly that."""
    data = check.read_small_file(tip_path(cache_path), 128)
    if data is None:
        return None
    m = _TIP.fullmatch(data.decode("ascii", "replace"))
    return (m.group(1), m.group(2)) if m else None


def write_tip(cache_path: str, commit: str, tree: str) -> None:
    """Record that `commit`'s entries tree is `tree` (when it is not recorded already). A
    tip that cannot be written only sends the next warm `context` the normal way."""
    if not (re.fullmatch(r"[0-9a-f]{40}", commit) and re.fullmatch(r"[0-9a-f]{40}", tree)):
        return
    if read_tip(cache_path) == (commit, tree):
        return
    check.replace_small_file(tip_path(cache_path), f"{commit} {tree}\n")


# ---- what the line already holds of the remotes' heads ---------------------------------------
# `<cache>.fetched`: "commit C contains these commits" (the remotes' heads of the line as last
# fetched, each found to be C or an ancestor of C by the normal path). Like the tip, a fact
# about content-addressed objects that never goes stale: the warm reader serves only while
# every tracking ref it reads is named there for exactly the line's head; anything fetched
# since sends the read the normal way, which brings it in (app/catch_up.py).
FETCHED_SUFFIX = ".fetched"
_FETCHED = re.compile(r"([0-9a-f]{40})((?: [0-9a-f]{40}){0,64})\n")


def holds_fetched(cache_path: str, head: str, fetched: list[str]) -> bool:
    """Whether `head` is known to contain every one of the `fetched` commits."""
    if all(c == head for c in fetched):
        return True
    data = check.read_small_file(cache_path + FETCHED_SUFFIX, 64 * 41 + 64)
    m = _FETCHED.fullmatch(data.decode("ascii", "replace")) if data is not None else None
    if m is None or m.group(1) != head:
        return False
    return set(fetched) <= set(m.group(2).split())


def write_fetched(cache_path: str, head: str, contained: list[str]) -> None:
    """Record that `head` contains `contained` (at most 64 commits; a file that cannot be
    written only sends the next warm `context` the normal way)."""
    wanted = sorted({c for c in contained if re.fullmatch(r"[0-9a-f]{40}", c) and c != head})
    if not re.fullmatch(r"[0-9a-f]{40}", head) or not wanted or len(wanted) > 64:
        return
    if holds_fetched(cache_path, head, wanted):
        return
    check.replace_small_file(cache_path + FETCHED_SUFFIX, f"{head}{''.join(' ' + c for c in wanted)}\n")


# ---- the reader ----------------------------------------------------------------------------
class Opened:
    """The cache file within one read transaction, checked as far as serving needs without
    reading its fold: its tip says the line's head, its schema version is this module's,
    its `tree` is the tip's and the file is as this module sealed it (its stamp). The rows
    served are those the seal was made over, whatever another process writes meanwhile."""

    def __init__(self, db: sqlite3.Connection, tree: str, seal: str):
        self.db, self.tree, self.seal = db, tree, seal

    def warm(self) -> Warm:
        """The truth the cache holds, its fold checked against the seal (NotWarm otherwise)."""
        try:
            sealed = check.read_sealed(self.db, cr.SCHEMA_VERSION, in_transaction=True)
            if sealed is None or sealed.seal != self.seal or sealed.tree != self.tree:
                raise NotWarm("not the seal the stamp was written with")
            f = cr.read_fold(self.db, sealed)  # the base checked against its sum, the journal folded on
        except sqlite3.Error as exc:
            raise NotWarm(str(exc)) from None
        if f is None:
            raise NotWarm("a fold of another version")
        return Warm(self.db, f)

    def ids_shown(self, text: str) -> Optional[list[str]]:
        """The ids of the entries whose anchor (`[<8 hex>]`) `text` shows: every id of the
        cache that begins with one (two ids may share those 8 digits). None when the file
        cannot say."""
        shown: set[str] = set()
        try:
            for short in set(_ANCHOR.findall(text)):
                rows = self.db.execute("SELECT id FROM entries WHERE id >= ? AND id < ?", (short, short + "g"))
                shown.update(r[0] for r in rows)
        except sqlite3.Error:
            return None
        return sorted(shown)

    def rows_sound(self, ids: list[str]) -> bool:
        """Whether each of these rows is there and hashes to its id (as a rendering checks
        every row it meets)."""
        try:
            for entry_id in ids:
                sound, e = read_row(self.db, entry_id)
                if not sound or e is None:
                    return False
        except sqlite3.Error:
            return False
        return True

    # ---- the line's order, for a first projection (app/projection_file.py) ----------------
    def sound_count(self) -> Optional[int]:
        """How many rows hold an entry that hashes to its id, when every other row is one
        that could not be read at all and every ts has a blob's fixed width (so the text
        sorts as the time does); None otherwise: a row read but not sound (another id
        than its path, content that does not hash to its id) is counted by the line's
        reader as a read entry, which the rows cannot tell apart."""
        try:
            row = self.db.execute(
                "SELECT coalesce(sum(ok), 0), coalesce(sum(ok = 0 AND ts != ''), 0),"
                f" coalesce(sum(ok = 1 AND length(ts) != {_TS_WIDTH}), 0) FROM entries"
            ).fetchone()
        except sqlite3.Error:
            return None
        return int(row[0]) if row[1] == 0 and row[2] == 0 else None

    def newest_sound(self, before: Optional[tuple[str, str]], limit: int) -> Optional[list[tuple[str, str]]]:
        """(ts, id) of up to `limit` sound rows, newest first, all older than `before`; None
        when the file cannot be read."""
        older = "" if before is None else "AND (ts < ? OR (ts = ? AND id < ?))"
        args = () if before is None else (before[0], before[0], before[1])
        try:
            return self.db.execute(
                f"SELECT ts, id FROM entries WHERE ok = 1 {older} ORDER BY ts DESC, id DESC LIMIT ?", (*args, limit)
            ).fetchall()
        except sqlite3.Error:
            return None

    def close(self) -> None:
        self.db.close()  # ends the read transaction


class Warm:
    """The truth served from the cache's fold, its rows checked as they are read."""

    def __init__(self, db: sqlite3.Connection, f: truth.Fold):
        from ..core import truth

        self.db = db
        self.state = truth.State(f, self.record, self.ids)

    def record(self, entry_id: str) -> Optional[Entry]:
        try:
            sound, e = read_row(self.db, entry_id)
        except sqlite3.Error as exc:
            raise NotWarm(str(exc)) from None
        if not sound:
            raise NotWarm(f"the row of {abbrev(entry_id)} does not match its id")
        return e

    def ids(self) -> list[str]:
        try:
            return all_ids(self.db)
        except sqlite3.Error as exc:
            raise NotWarm(str(exc)) from None


def opened(cache_path: str, head: str) -> Optional[Opened]:
    """The cache file opened for `head` (see Opened), or None. The caller closes it."""
    tip = read_tip(cache_path)
    if tip is None or tip[0] != head:
        return None
    found = opened_as_sealed(cache_path)
    if found is not None and found.tree != tip[1]:
        found.close()
        return None
    return found


def opened_as_sealed(cache_path: str) -> Optional[Opened]:
    """The cache file opened read-only at whatever tree it reflects (Opened.tree), checked as
    `opened` checks it but for the tip, or None. The caller closes it."""
    if any(c in cache_path for c in "?#%"):
        return None  # would need escaping in the URI below
    try:
        if not stat.S_ISREG(os.lstat(cache_path).st_mode):
            return None
        # read-only: a hot journal, a lock held too long, anything to repair is the normal path's
        db = sqlite3.connect(check.read_only_uri(cache_path), uri=True, timeout=30, isolation_level=None)
    except (OSError, sqlite3.Error):
        return None
    try:
        db.execute("BEGIN")
        if schema_version(db) != cr.SCHEMA_VERSION:
            raise NotWarm("another schema version")
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('tree', 'seal')").fetchall())
        tree, seal = meta.get("tree"), meta.get("seal")
        if not isinstance(tree, str) or not isinstance(seal, str) or not check.stamp_matches(cache_path, seal):
            raise NotWarm("not as this module left it")
        return Opened(db, tree, seal)
    except (sqlite3.Error, NotWarm):
        db.close()
        return None
