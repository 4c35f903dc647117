"""A rebuildable SQLite cache of one line, under the git common dir.

Never the source of truth: it is keyed by the `entries` tree oid it reflects and
advanced by a tree diff from that tree to the head's (cost follows the change, not
the ledger). Deleting it loses nothing. It checks itself before serving anything
(views/cache_check.py: a seal over tip, rows and fold on every read; a full check when
the file changed behind its back): a cache that fails is discarded and rebuilt with a
one-line warning, never served. Several processes may use it at once: writers
serialise on SQLite's write lock and re-check the key inside their transaction.

Where the file cannot be written (a read-only mount, a CI cache, another user's
repository) the cache is opened read-only and served when it is current and sound;
otherwise the line is folded into an in-memory database for this process.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Optional

from ..core import fold_text, truth
from ..core.entry import Entry, abbrev, entry_order_key
from ..git.blobs import tree_blobs
from ..git.store import LineStore
from ..git.trees import TreeGain, is_entry_path
from . import cache_check as check
from . import cache_rows as cr
from . import cache_standing as cs
from . import cache_warm as warm
from .cache_check import Corrupt, Sealed

_DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def _tree_or_none(tree: str) -> Optional[str]:
    """A tree id as the seal writes it ("none": the empty line) as tree_gain takes it."""
    return None if tree == "none" else tree


def _folded_while_indexing(db: sqlite3.Connection, slims: list, broken: list) -> truth.Fold:
    """The fold of a cold build, made while SQLite indexes every row for search on a thread
    of its own: SQLite runs that one statement without Python's lock, so on two cores
    neither waits for the other. (Hence the writable connections are opened with
    check_same_thread off: this thread leaves the connection alone until the other is done.
    The fold stays on this thread: made on another, its memory went to another malloc
    arena, +12 MB of peak RSS at 100k entries.)"""
    failed: list = []

    def index() -> None:
        try:
            cr.index_all(db)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=index, name="lifeline-index", daemon=True)
    worker.start()
    try:
        f = cr.fold_slims(slims, broken)
    finally:
        worker.join()
    if failed:
        raise failed[0]
    return f


def _rows_and_fold(db: sqlite3.Connection, store: LineStore, target: str) -> tuple[int, truth.Fold]:
    """(the rows' digest, the fold) of a cold build of tree `target`: each blob read once (git
    cat-file, beside this process), parsed once, inserted in batches; the fold is made from
    slim records sorted by (ts, id), so no entry's body is held after its row is written."""
    db.execute("DELETE FROM entries")
    rows: list = []
    slims: list = []
    broken: list = []
    names: dict = {}
    digest = 0
    if target != "none":
        for path, oid, data in tree_blobs(store.gr, target):
            if not is_entry_path(path):
                continue
            entry_id = path.replace("/", "")
            record, ok, row = cr.parse(entry_id, oid, data)
            if ok and record is not None:
                slims.append(cr.Slim(record, row[2][:-1], names, truth.header_of(record)))
            else:
                broken.append(entry_id)
            rows.append(row)
            if len(rows) >= cr.BATCH:
                digest = cr.insert(db, rows, digest, searchable=False)
                rows = []
        digest = cr.insert(db, rows, digest, searchable=False)
    names.clear()
    return digest, _folded_while_indexing(db, slims, broken)


class _ReadOnly(Exception):
    """The cache file cannot be created or written here."""


class LineCache:
    def __init__(self, store: LineStore, warnings: Optional[list] = None):
        self.store = store
        self.path = Path(warm.cache_file(str(store.gr.lifeline_dir()), store.line))
        self.db: Optional[sqlite3.Connection] = None
        # "file" (read-write), "read-only" (a sound, current file we cannot write) or
        # "memory" (this process's own fold)
        self.mode = "file"
        self._sealed: Optional[Sealed] = None
        self._fold: Optional[tuple] = None  # (seal, Fold) this process made or read
        # What the user should know (a rebuilt cache, a rewound line): the caller's warning
        # sink when it gives one, so that every face prints them.
        self.warnings: list = warnings if warnings is not None else []

    # ---- opening: a sound file, a read-only one, or memory ----------------------------------
    def open(self) -> sqlite3.Connection:
        if self.db is not None:
            return self.db
        try:
            self.db = self._open_file()
        except _ReadOnly:
            self.db = self._open_read_only()
        except sqlite3.DatabaseError as exc:
            self._warn_corrupt(exc)
            self.db = self._reopen_fresh()
        return self.db

    def _open_file(self) -> sqlite3.Connection:
        """The cache file, read-write and sound (raises _ReadOnly, or DatabaseError when
        it is damaged; an empty or other-version file is replaced silently)."""
        if self.path.is_symlink() or (self.path.is_dir() and not any(self.path.iterdir())):
            raise Corrupt("a symlink or an empty directory stands where the file belongs")
        if self.path.is_dir():
            self.warnings.append(
                f"{self.path} is a directory, not the cache: the line was folded in memory "
                "(remove it to let the cache be rebuilt)"
            )
            raise _ReadOnly()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.OperationalError) as exc:
            raise _ReadOnly() from exc
        try:
            version = warm.schema_version(db)
            if version is not None and version != cr.SCHEMA_VERSION:  # another release's cache
                db.close()
                self._discard()
                db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
                version = None
            if version is None:
                self._create(db)
            self._sealed = self._checked(db, writable=True)
            return db
        except sqlite3.DatabaseError as exc:
            db.close()
            if not isinstance(exc, Corrupt) and not self._writable_here():
                raise _ReadOnly() from exc
            raise

    def _create(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=DELETE")
        db.executescript(cr.SCHEMA)
        db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (cr.SCHEMA_VERSION,))

    def _checked(self, db: sqlite3.Connection, writable: bool) -> Optional[Sealed]:
        """The seal, and the full check when the file is not as this module left it."""
        db.execute("PRAGMA synchronous=NORMAL")
        sealed = check.read_sealed(db, cr.SCHEMA_VERSION)
        if sealed is None or check.stamp_matches(self.path, sealed.seal):
            return sealed
        # The seal and every row from one snapshot, no writer committing in between (else a
        # write of another process would read as damage); readers go on meanwhile.
        db.execute("BEGIN IMMEDIATE" if writable else "BEGIN")
        try:
            sealed = check.read_sealed(db, cr.SCHEMA_VERSION, in_transaction=True)
            if sealed is not None:
                check.full_check(db, sealed)
        finally:
            if db.in_transaction:
                db.execute("COMMIT")
        if writable and sealed is not None:
            check.write_stamp(self.path, sealed.seal)
        return sealed

    def _writable_here(self) -> bool:
        """Whether a file can be made beside the cache: what tells a read-only or full disk
        (or another user's directory) from a damaged file when SQLite fails."""
        probe = self.path.with_name(f"{self.path.name}.probe-{os.getpid()}")
        try:
            probe.open("xb").close()
            probe.unlink()
            return True
        except OSError:
            return False

    def _open_read_only(self) -> sqlite3.Connection:
        """The file opened read-only when it is sound; memory otherwise."""
        if self.path.is_file() and not self.path.is_symlink():
            db = None
            try:
                db = sqlite3.connect(
                    check.read_only_uri(os.fspath(self.path)), uri=True, timeout=30, isolation_level=None
                )
                if warm.schema_version(db) == cr.SCHEMA_VERSION:
                    self._sealed = self._checked(db, writable=False)
                    if self._sealed is not None:
                        self.mode = "read-only"
                        return db
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, Corrupt) or getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGED:
                    self._warn_corrupt(exc, rebuilt=False)
            if db is not None:
                db.close()
        return self._memory()

    def _memory(self) -> sqlite3.Connection:
        self.mode, self._sealed = "memory", None
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        db.executescript(cr.SCHEMA)
        db.execute("INSERT INTO meta VALUES ('version', ?)", (cr.SCHEMA_VERSION,))
        return db

    def _to_memory(self) -> sqlite3.Connection:
        """Leave a file this process cannot write for an in-memory fold."""
        self.close()
        self.db = self._memory()
        return self.db

    def _reopen_fresh(self) -> sqlite3.Connection:
        """A new, empty cache file in place of a damaged one (memory when it cannot be)."""
        self.close()
        try:
            self._discard()
            return self._open_file()
        except (_ReadOnly, OSError, sqlite3.DatabaseError):
            return self._memory()

    def _warn_corrupt(self, exc: BaseException, rebuilt: bool = True) -> None:
        why = str(exc) or exc.__class__.__name__
        self.warnings.append(
            f"the cache was unreadable or did not match the ledger ({why}); "
            + ("rebuilt it" if rebuilt else "not used: folded the line in memory")
        )

    def _discard(self) -> None:
        if self.path.is_dir() and not self.path.is_symlink():
            self.path.rmdir()  # only ever an empty one (_open_file)
        for suffix in ("", "-journal", "-wal", "-shm", ".stamp", warm.TIP_SUFFIX):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def restamp(self) -> None:
        """After another view wrote into the file through this connection (semantic
        recall's vectors): the stamp follows the file, so the next open does not take that
        write for damage and pay a full check. The file matched its stamp when opened."""
        if self.mode == "file" and self._sealed is not None and not check.stamp_matches(self.path, self._sealed.seal):
            check.write_stamp(self.path, self._sealed.seal)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        self._sealed = None

    # ---- keeping in step with the ref --------------------------------------
    def _current(self, db: sqlite3.Connection) -> Optional[Sealed]:
        """The seal as the file holds it now (another process may have advanced it)."""
        if self._sealed is not None:
            row = db.execute("SELECT value FROM meta WHERE key='seal'").fetchone()
            if row is not None and row[0] == self._sealed.seal:
                return self._sealed
        self._sealed = check.read_sealed(db, cr.SCHEMA_VERSION)
        return self._sealed

    def ensure(self, commit_id: Optional[str]) -> sqlite3.Connection:
        """Bring the cache up to the line's head; returns the connection.

        The cache only ever follows the ref forward. A caller that read the head a
        moment ago may find the cache already at a newer head (another process
        appended): that is served as is, never rolled back, so processes at slightly
        different heads cannot make each other rebuild (or read a half-rebuilt cache)."""
        target = self.store.tree_id(commit_id) or "none"
        db = self.open()
        try:
            sealed = self._current(db)
            cached = sealed.tree if sealed is not None else None
            if cached != target and (cached is None or (self.store.tree_id(self.store.head()) or "none") != cached):
                if self.mode == "read-only":
                    db = self._to_memory()
                self._advance(db)
        except sqlite3.DatabaseError as exc:
            db = self.recover(exc)
        if self.mode == "file" and commit_id is not None and self._sealed is not None and self._sealed.tree == target:
            warm.write_tip(str(self.path), commit_id, target)  # for the warm `context` (cache_warm.py)
        return db

    def recover(self, exc: sqlite3.DatabaseError) -> sqlite3.Connection:
        """The one way out of a cache that failed a read: never served. In memory mode the
        error stands; a file this process cannot rewrite is folded into memory instead; any
        other is warned of and rebuilt. Either way the connection is brought to the head."""
        if self.mode == "memory":
            raise exc
        if not isinstance(exc, Corrupt) and not self._writable_here():
            db = self._to_memory()
        else:
            self._warn_corrupt(exc)
            db = self.db = self._reopen_fresh()
        self._advance(db)
        return db

    def _advance(self, db: sqlite3.Connection) -> None:
        """Advance to the head as it is once this process holds the write lock."""
        db.execute("BEGIN IMMEDIATE")
        try:
            target = self.store.tree_id(self.store.head()) or "none"
            sealed = check.read_sealed(db, cr.SCHEMA_VERSION, in_transaction=True)
            if sealed is not None and sealed.tree == target:
                db.execute("COMMIT")
                self._sealed = sealed
                return
            gain = None
            if sealed is not None:
                try:
                    gain = self.store.gain(_tree_or_none(sealed.tree), _tree_or_none(target))
                except (KeyError, ValueError):
                    gain = None
            if sealed is None or gain is None:
                self._sealed = self._cold_build(db, target)
            else:
                self._sealed = self._incremental(db, sealed, gain, target)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        if self.mode == "file":
            check.write_stamp(self.path, self._sealed.seal)

    def _cold_build(self, db: sqlite3.Connection, target: str) -> Sealed:
        """Every entry of the tree, streamed (`_rows_and_fold`)."""
        with cr.no_cycle_collection():
            digest, f = _rows_and_fold(db, self.store, target)
            return self._sealed_fold(db, target, digest, f, fresh=True)

    def _sealed_fold(
        self, db: sqlite3.Connection, target: str, digest: int, f: truth.Fold, fresh: bool = False
    ) -> Sealed:
        """Store the fold whole as the new base (an empty journal), its standing table (`fresh`:
        anew, else the rows that differ), and seal it; this process keeps `f` (no re-parse)."""
        standing = cs.write_all(db, f, fresh)
        sealed = check.write_seal(db, cr.SCHEMA_VERSION, target, digest, standing, "", base=fold_text.text_of(f))
        self._fold = (sealed.seal, f)
        return sealed

    def _held_fold(self, db: sqlite3.Connection, sealed: Sealed) -> Optional[truth.Fold]:
        """The fold `sealed` names, to be added to: the one this process holds when it is that
        one (a server's next call after an append reads nothing), else read from the file.
        Let go of here: what is added to it is not what it was sealed as."""
        held, self._fold = self._fold, None
        if held is not None and held[0] == sealed.seal:
            return held[1]
        return cr.read_fold(db, sealed)

    def _incremental(self, db: sqlite3.Connection, sealed: Sealed, gain: TreeGain, target: str) -> Sealed:
        if gain.removed:
            # history only grows: a removal means the ref was rewritten — start over
            self.warnings.append(
                "the line lost entries since the cache was built (rewritten history?); "
                "rebuilt the cache — run `git lifeline verify`"
            )
            return self._cold_build(db, target)
        added, replaced, rows, digest = [], False, [], sealed.rows
        for g in gain.entries:
            if g.kind != "blob":
                continue
            record, ok, row = cr.parse(g.entry_id, g.oid, self.store.blob_bytes(g.oid))
            if g.replaced:
                replaced = True
                digest = cr.drop(db, g.entry_id, digest)
            added.append((g.entry_id, record if ok else None, ok))
            rows.append(row)
        digest = cr.insert(db, rows, digest)
        f = None if replaced else self._held_fold(db, sealed)
        good = [r for _, r, ok in added if ok and r is not None]
        if f is None or not f.accepts_after(good):
            return self._sealed_fold(db, target, digest, cr.refold(db))
        folded = sorted(good, key=entry_order_key)
        for r in folded:
            f.add(r)
        broken = sorted({i for i, _, ok in added if not ok} - set(f.broken))
        f.broken = sorted(set(f.broken) | set(broken))
        journal = cr.journal_after(sealed.journal, [r.id for r in folded], broken)
        if cr.journal_length(journal) > cr.journal_limit(f.count) or not f.derived_kept:
            # a correction (or a decision out of order) changed the derived truth: the base
            # is written whole with it, so that no read derives the whole graph again
            return self._sealed_fold(db, target, digest, f)
        # Only what the new entries add is written: the base stays as it is (cache_rows.py),
        # and the standing of the new entries only (the derived truth was kept).
        standing = cs.write_some(db, f, [r.id for r in folded], cs.read_sums(db, sealed.standing_sum))
        self._sealed = check.write_seal(db, cr.SCHEMA_VERSION, target, digest, standing, journal)
        self._fold = (self._sealed.seal, f)
        return self._sealed

    # ---- reading -----------------------------------------------------------
    def state(self, commit_id: Optional[str]) -> truth.State:
        """The current truth at `commit_id`, from the cached fold; entries load lazily."""
        db = self.ensure(commit_id)
        sealed = self._sealed
        if sealed is not None and self._fold is not None and self._fold[0] == sealed.seal:
            return truth.State(self._fold[1], self.record, self.all_ids)
        try:
            f = self._read_fold(db)
        except sqlite3.DatabaseError as exc:
            # the base does not match its sum, or the journal a row: never served, rebuilt
            db = self.recover(exc)
            f = self._fold[1] if self._fold is not None else cr.refold(db)
        if f is None and self.mode != "read-only":  # a fold of an older version: recompute it once
            db.execute("BEGIN IMMEDIATE")
            try:
                sealed = check.read_sealed(db, cr.SCHEMA_VERSION, in_transaction=True)
                f = cr.refold(db)
                if sealed is not None:
                    standing = cs.write_all(db, f, fresh=False)
                    base = fold_text.text_of(f)
                    self._sealed = check.write_seal(db, cr.SCHEMA_VERSION, sealed.tree, sealed.rows, standing, "", base)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            if self.mode == "file" and self._sealed is not None:
                check.write_stamp(self.path, self._sealed.seal)
        elif f is None:
            f = cr.refold(db)
        return truth.State(f, self.record, self.all_ids)

    def _read_fold(self, db: sqlite3.Connection) -> Optional[truth.Fold]:
        """The fold the file holds now, its seal, base and journal read in one transaction
        (another process may have advanced it since `ensure`: only ever forward)."""
        db.execute("BEGIN")
        try:
            sealed = check.read_sealed(db, cr.SCHEMA_VERSION, in_transaction=True)
            f = cr.read_fold(db, sealed) if sealed is not None else None
        finally:
            if db.in_transaction:
                db.execute("COMMIT")
        self._sealed = sealed
        if f is not None and sealed is not None:
            self._fold = (sealed.seal, f)
        return f

    def standings(self, db: sqlite3.Connection, now: Optional[str] = None) -> cs.Standings:
        """Statuses by id (views/cache_standing.py) of `db`, brought to the head by `ensure`."""
        return cs.Standings(db, lambda: cs.sealed_sum(db, self._sealed, cr.SCHEMA_VERSION), now)

    def record(self, entry_id: str) -> Optional[Entry]:
        """The entry of a row, checked against its id once more as it is served: a row
        that does not hash to its id (or claims to be broken when it is not) means the
        file was damaged under us; the entry is then read from git and the cache dropped."""
        sound, e = warm.read_row(self.open(), entry_id)
        return e if sound else self._damaged_row(entry_id)

    def _damaged_row(self, entry_id: str) -> Optional[Entry]:
        self.warnings.append(
            f"the cache's row for {abbrev(entry_id)} did not match the ledger; "
            "dropped the cache (the next command rebuilds it)"
        )
        if self.mode == "file":
            try:
                self._discard()
            except OSError:
                pass
        try:
            e = self.store.read(entry_id)
        except Exception:  # the entry as git has it: whatever it is, not the damaged row
            return None
        return e if e is not None and e.verify() else None

    def dedup_holder(self, commit_id: Optional[str], key: str) -> Optional[str]:
        """The id of the first verified entry holding dedup key `key`, or None."""
        db = self.ensure(commit_id)
        row = db.execute("SELECT id FROM entries WHERE dedup=? AND ok=1 ORDER BY ts, id LIMIT 1", (key,)).fetchone()
        return row[0] if row is not None else None

    def all_ids(self) -> list:
        return warm.all_ids(self.open())

    def entries(self, commit_id: Optional[str]) -> tuple[list, list]:
        """(records whose id matches their content, ids of those that do not)."""
        db = self.ensure(commit_id)
        good, broken = [], []
        for ok, text, entry_id in db.execute("SELECT ok, json, id FROM entries ORDER BY ts, id"):
            if ok:
                good.append(Entry.from_json(text))
            else:
                broken.append(entry_id)
        return good, broken
