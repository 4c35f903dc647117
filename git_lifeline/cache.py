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
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

import pygit2

from .model import Entry
from .store import LineStore, diff_entry_trees, is_entry_path

SCHEMA_VERSION = "3"
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
    json TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    summary, body, content='entries', content_rowid='rowid',
    tokenize="unicode61 remove_diacritics 2"
);
"""


def _fast_entry(doc: dict) -> Entry:
    """Rebuild an Entry already validated when it entered the cache."""
    ts = datetime.fromisoformat(doc["ts"][:-1]).replace(tzinfo=timezone.utc)  # C-fast; strptime is 10x slower
    fields = dict(doc)
    fields["ts"] = ts
    return Entry.model_construct(**fields)


class LineCache:
    def __init__(self, store: LineStore):
        self.store = store
        self.path = store.gr.lifeline_dir() / f"{store.line}.sqlite3"
        self.db: Optional[sqlite3.Connection] = None
        self.warnings: list = []

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
        """Bring the cache to the entries tree of `commit_id`; returns the connection."""
        target = self.store.entries_tree_id(commit_id)
        db = self.open()
        if self.cached_tree() == (target or "none"):
            return db
        try:
            self._advance(db, target)
        except sqlite3.DatabaseError:
            self.close()
            self._discard("the cache was corrupt; rebuilt it")
            db = self.open()
            self._advance(db, target)
        return db

    def _advance(self, db: sqlite3.Connection, target: Optional[str]) -> None:
        repo = self.store.repo
        db.execute("BEGIN IMMEDIATE")
        try:
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
            rebuild = False
            changes = list(diff_entry_trees(repo, old_tree, new_tree))
            if any(new is None and is_entry_path(path) for path, old, new, _ in changes):
                # history only grows: a removal means the ref was rewritten — start over
                self.warnings.append("the line lost entries since the cache was built (rewritten history?); "
                                     "rebuilt the cache — run `git lifeline verify`")
                self._clear(db)
                changes = list(diff_entry_trees(repo, None, new_tree))
                rebuild = True
            for path, old, new, kind in changes:
                if new is None or kind != "blob" or not is_entry_path(path):
                    continue
                self._put(db, path.replace("/", ""), repo[new])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tree', ?)", (target or "none",))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _clear(self, db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
        db.execute("DELETE FROM entries")

    def _put(self, db: sqlite3.Connection, entry_id: str, blob: pygit2.Blob) -> None:
        try:
            e = Entry.from_json(blob.data)
        except Exception:
            return  # unreadable blobs are verify's to report, never the truth's
        ok = 1 if (e.verify() and e.id == entry_id) else 0
        old = db.execute("SELECT rowid, summary, body FROM entries WHERE id=?", (entry_id,)).fetchone()
        if old is not None:  # a merge chose the other blob of the same id
            db.execute("INSERT INTO fts(fts, rowid, summary, body) VALUES ('delete', ?, ?, ?)", old)
            db.execute("DELETE FROM entries WHERE rowid=?", (old[0],))
        cur = db.execute(
            "INSERT INTO entries(id, blob, ts, kind, ok, summary, body, json) VALUES (?,?,?,?,?,?,?,?)",
            (entry_id, str(blob.id), e.ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), e.kind, ok, e.summary, e.body,
             blob.data.decode("utf-8")))
        db.execute("INSERT INTO fts(rowid, summary, body) VALUES (?, ?, ?)", (cur.lastrowid, e.summary, e.body))

    # ---- reading -----------------------------------------------------------
    def entries(self, commit_id: Optional[str]) -> tuple[list, list]:
        """(entries whose id matches their content, ids of those that do not)."""
        db = self.ensure(commit_id)
        good, broken = [], []
        for ok, text, entry_id in db.execute("SELECT ok, json, id FROM entries ORDER BY ts, id"):
            if ok:
                good.append(_fast_entry(json.loads(text)))
            else:
                broken.append(entry_id)
        return good, broken
