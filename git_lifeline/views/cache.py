"""A rebuildable SQLite cache of one line, under the git common dir.

Never the source of truth: it is keyed by the `entries` tree oid it reflects and
advanced by a tree diff from that tree to the head's (cost follows the change, not
the ledger). Deleting it loses nothing. A corrupt file is detected and rebuilt.
Several processes may use it at once: writers serialise on SQLite's write lock and
re-check the key inside their transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Optional

from ..core import truth
from ..core.canonical import compute_id
from ..core.record import Record
from ..git.store import LineStore, diff_entry_trees, is_entry_path

SCHEMA_VERSION = "5"
_BATCH = 2000
_SCHEMA = """
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
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    summary, body, content='entries', content_rowid='rowid',
    tokenize="unicode61 remove_diacritics 2"
);
"""


class LineCache:
    def __init__(self, store: LineStore, warnings: Optional[list] = None):
        self.store = store
        self.path = store.gr.lifeline_dir() / f"{store.line}.sqlite3"
        self.db: Optional[sqlite3.Connection] = None
        # What the user should know (a rebuilt cache, a rewound line): the caller's warning
        # sink when it gives one, so that every face prints them.
        self.warnings: list = warnings if warnings is not None else []

    # ---- connection ------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        if row is None:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise sqlite3.DatabaseError("cache schema version changed")
        db.execute("PRAGMA quick_check").fetchone()
        return db

    def open(self) -> sqlite3.Connection:
        if self.db is not None:
            return self.db
        try:
            self.db = self._connect()
        except sqlite3.DatabaseError:
            self._discard("the cache was unreadable; rebuilt it")
            self.db = self._connect()
        return self.db

    def _discard(self, why: str) -> None:
        self.warnings.append(why)
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    # ---- keeping in step with the ref --------------------------------------
    def cached_tree(self) -> Optional[str]:
        row = self.open().execute("SELECT value FROM meta WHERE key='tree'").fetchone()
        return row[0] if row else None

    def ensure(self, commit_id: Optional[str]) -> sqlite3.Connection:
        """Bring the cache up to the line's head; returns the connection.

        The cache only ever follows the ref forward. A caller that read the head a
        moment ago may find the cache already at a newer head (another process
        appended): that is served as is, never rolled back, so processes at slightly
        different heads cannot make each other rebuild (or read a half-rebuilt cache)."""
        target = self.store.entries_tree_id(commit_id)
        db = self.open()
        cached = self.cached_tree()
        if cached == (target or "none"):
            return db
        if self.store.entries_tree_id(self.store.head()) == cached:
            return db
        try:
            self._advance(db)
        except sqlite3.DatabaseError:
            self.close()
            self._discard("the cache was corrupt; rebuilt it")
            db = self.open()
            self._advance(db)
        return db

    def _advance(self, db: sqlite3.Connection) -> None:
        """Advance to the head as it is once this process holds the write lock."""
        repo = self.store.repo
        db.execute("BEGIN IMMEDIATE")
        try:
            target = self.store.entries_tree_id(self.store.head())
            current = db.execute("SELECT value FROM meta WHERE key='tree'").fetchone()
            current = current[0] if current else None
            if current == (target or "none"):
                db.execute("COMMIT")
                return
            old_tree = None
            if current not in (None, "none"):
                try:
                    old_tree = repo[current]
                except (KeyError, ValueError):
                    old_tree = None
                    current = None
            if current is None and db.execute("SELECT 1 FROM entries LIMIT 1").fetchone():
                self._clear(db)
            new_tree = repo[target] if target else None
            rebuild = old_tree is None  # a cold build folds from the table, streaming
            changes = list(diff_entry_trees(repo, old_tree, new_tree))
            if any(new is None and is_entry_path(path) for path, old, new, _ in changes):
                # history only grows: a removal means the ref was rewritten — start over
                self.warnings.append("the line lost entries since the cache was built (rewritten history?); "
                                     "rebuilt the cache — run `git lifeline verify`")
                self._clear(db)
                changes = list(diff_entry_trees(repo, None, new_tree))
                rebuild = True
            added, replaced, rows = [], False, []
            for path, old, new, kind in changes:
                if new is None or kind != "blob" or not is_entry_path(path):
                    continue
                entry_id = path.replace("/", "")
                record, ok, row = self._parse(entry_id, str(new), repo[new].data)
                if old is not None:
                    replaced = True
                    self._drop(db, entry_id)
                if not rebuild:
                    added.append((entry_id, record if ok else None, ok))
                rows.append(row)
                if len(rows) >= _BATCH:  # bounded memory on a cold build of a large ledger
                    self._insert(db, rows)
                    rows = []
            self._insert(db, rows)
            self._advance_fold(db, added, rebuild or replaced)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tree', ?)", (target or "none",))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _clear(self, db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
        db.execute("DELETE FROM entries")

    def _advance_fold(self, db: sqlite3.Connection, added: list, rebuild: bool) -> None:
        """Fold what was added onto the cached fold; refold everything when the new
        entries do not all sort after it (a merge brought older ones) or a blob changed."""
        good = [r for _, r, ok in added if ok]
        bad = [i for i, _, ok in added if not ok]
        f = None if rebuild else self._read_fold(db)
        if f is not None and f.accepts_after(good):
            for r in sorted(good, key=lambda r: (r.ts, r.id)):
                f.add(r)
            f.broken = sorted(set(f.broken) | set(bad))
        else:
            # Refold everything, streaming rows in (ts, id) order: the ts column's fixed
            # format sorts as time does, so no list of every entry is held in memory.
            f = truth.Fold()
            broken = []
            for ok, text, entry_id in db.execute("SELECT ok, json, id FROM entries ORDER BY ts, id"):
                if ok:
                    f.add(Record.from_json(text))
                else:
                    broken.append(entry_id)
            f.broken = sorted(broken)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('fold', ?)", (json.dumps(f.to_json()),))

    def _read_fold(self, db: sqlite3.Connection):
        row = db.execute("SELECT value FROM meta WHERE key='fold'").fetchone()
        if row is None:
            return None
        try:
            return truth.Fold.from_json(json.loads(row[0]))
        except (ValueError, TypeError):
            return None

    def _parse(self, entry_id: str, blob_id: str, data: bytes):
        """(Record or None, ok, row) for one blob (its oid and bytes) at an entry path.

        `ok` says the content hashes to its id and its path; content rules are
        verify's business. An unreadable blob is kept as a broken row, so the truth
        warns about it instead of dropping it silently. No pydantic here, so a cold
        build stays cheap."""
        text = data.decode("utf-8", "replace")  # for the row only: the parse judges the bytes, as verify does
        try:
            r = Record.from_json(data)
            ok = int(r.id == entry_id and compute_id(r.kind, r.author, r.agent, r.provider, r.model,
                                                     r.summary, r.body, r.parents) == r.id)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None, False, (entry_id, blob_id, "", "", 0, "", "", None, text)
        row = (entry_id, blob_id, f"{r.ts:%Y-%m-%dT%H:%M:%S.%f}Z", r.kind, ok, r.summary, r.body,
               r.dedup_key, text)
        return r, bool(ok), row

    def _drop(self, db: sqlite3.Connection, entry_id: str) -> None:
        """Forget an entry before re-indexing it (a merge chose the other blob of its id)."""
        old = db.execute("SELECT rowid, summary, body FROM entries WHERE id=?", (entry_id,)).fetchone()
        if old is not None:
            db.execute("INSERT INTO fts(fts, rowid, summary, body) VALUES ('delete', ?, ?, ?)", old)
            db.execute("DELETE FROM entries WHERE rowid=?", (old[0],))

    def _insert(self, db: sqlite3.Connection, rows: list) -> None:
        if not rows:
            return
        first = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM entries").fetchone()[0] + 1
        db.executemany("INSERT INTO entries(rowid, id, blob, ts, kind, ok, summary, body, dedup, json) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?)", [(first + n, *row) for n, row in enumerate(rows)])
        db.executemany("INSERT INTO fts(rowid, summary, body) VALUES (?, ?, ?)",
                       [(first + n, row[5], row[6]) for n, row in enumerate(rows)])

    # ---- reading -----------------------------------------------------------
    def state(self, commit_id: Optional[str]) -> truth.State:
        """The current truth at `commit_id`, from the cached fold; entries load lazily."""
        db = self.ensure(commit_id)
        f = self._read_fold(db)
        if f is None:  # an old or damaged fold: recompute it once
            db.execute("BEGIN IMMEDIATE")
            try:
                self._advance_fold(db, [], True)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            f = self._read_fold(db)
        return truth.State(f, self.record, self.all_ids)

    def record(self, entry_id: str) -> Optional[Record]:
        row = self.open().execute("SELECT json FROM entries WHERE id=? AND ok=1", (entry_id,)).fetchone()
        return Record.from_json(row[0]) if row else None

    def has_dedup_key(self, commit_id: Optional[str], key: str) -> bool:
        db = self.ensure(commit_id)
        return db.execute("SELECT 1 FROM entries WHERE dedup=? AND ok=1 LIMIT 1", (key,)).fetchone() is not None

    def all_ids(self) -> list:
        return [r[0] for r in self.open().execute("SELECT id FROM entries WHERE ok=1 ORDER BY ts, id")]

    def entries(self, commit_id: Optional[str]) -> tuple[list, list]:
        """(records whose id matches their content, ids of those that do not)."""
        db = self.ensure(commit_id)
        good, broken = [], []
        for ok, text, entry_id in db.execute("SELECT ok, json, id FROM entries ORDER BY ts, id"):
            if ok:
                good.append(Record.from_json(text))
            else:
                broken.append(entry_id)
        return good, broken
