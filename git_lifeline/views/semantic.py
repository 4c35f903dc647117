"""Semantic recall: sentence embeddings of the entries, kept in the cache database.

Opt-in (`pip install '.[semantic]'` from a checkout and `git config lifeline.semantic.model DIR`):
the model is a local directory in the sentence-transformers layout, run by views/minilm.py
(numpy, no torch). Vectors are computed lazily — the first question after new entries
embeds only those — and stored in the cache database beside the FTS index, keyed by the
entry id (an id fixes the entry's text, so a vector never goes stale) and by the model's
fingerprint (another model never reuses them). Deleting the cache loses nothing.

Recall never downloads: without a usable model it stays lexical and says so.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import install_hint
from .recall import SEMANTIC_FLOOR

if TYPE_CHECKING:  # annotations only: numpy is imported where a vector is made
    from .minilm import Embedder, FloatArray

_TABLE = (
    "CREATE TABLE IF NOT EXISTS vectors (id TEXT NOT NULL, model TEXT NOT NULL, v BLOB NOT NULL, "
    "PRIMARY KEY (id, model))"
)
_BODY_CHARS = 1200  # the model reads at most 256 word pieces; more text only costs time
_LOADED: dict[str, Embedder] = {}  # model dir -> Embedder, for long-running processes (the MCP server)


class ModelUnavailable(Exception):
    """The configured model cannot be used (the reason is the message)."""


def fingerprint(model_dir: Path) -> str:
    """Cheap identity of a model directory: its config and the sizes of its weights."""
    h = hashlib.sha256()
    for name in ("config.json", "tokenizer.json"):
        p = model_dir / name
        h.update(p.read_bytes() if p.exists() else b"-")
    for p in sorted(model_dir.glob("*.safetensors")):
        h.update(f"{p.name}:{p.stat().st_size}".encode())
    return h.hexdigest()[:16]


_INDEXES: dict[
    tuple[str, float], Index
] = {}  # (model dir, floor) -> Index: a long-running process keeps its fingerprint and vectors


def index_for(model_dir: Path, floor: float = SEMANTIC_FLOOR) -> "Index":
    """The Index of a model directory, made once per process (the fingerprint reads the
    tokenizer and the matrix of vectors is kept between questions)."""
    key = (str(model_dir), floor)
    if key not in _INDEXES:
        _INDEXES[key] = Index(model_dir, floor)
    return _INDEXES[key]


def text_of(summary: str, body: str) -> str:
    return f"{summary}\n{body[:_BODY_CHARS]}" if body else summary


class Index:
    """Cosine similarity of a question to every entry in force or not (the truth orders later)."""

    def __init__(self, model_dir: Path, floor: float = SEMANTIC_FLOOR):
        # One question is a handful of small matrix products: a second BLAS thread only
        # contends with the rest of the machine (measured: twice slower under load).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        try:
            import numpy  # noqa: F401

            from . import minilm
        except ImportError as exc:
            raise ModelUnavailable(
                f"the semantic extra is not installed ({exc.name} is missing): {install_hint('semantic')}"
            ) from None
        key = str(model_dir)
        if key not in _LOADED:
            try:
                _LOADED[key] = minilm.load(model_dir)
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(f"lifeline.semantic.model {model_dir}: {exc}") from None
        self.embedder = _LOADED[key]
        self.model = fingerprint(model_dir)
        self.floor = floor
        self._matrix: Optional[tuple[list[str], FloatArray]] = None  # (ids, vectors) for the last set of ids seen

    def _missing(self, db: sqlite3.Connection) -> list[tuple[str, str, str]]:
        return db.execute(
            "SELECT e.id, e.summary, e.body FROM entries e WHERE e.ok = 1 AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.id = e.id AND v.model = ?)",
            (self.model,),
        ).fetchall()

    def refresh(self, db: sqlite3.Connection) -> int:
        """Embed the entries that have no vector yet; returns how many were embedded."""
        import numpy as np

        try:
            db.execute(_TABLE)
        except sqlite3.OperationalError:  # a read-only cache: vectors are computed in memory
            return self._refresh_in_memory(db)
        rows = self._missing(db)
        if not rows:
            return 0
        vectors = self.embedder.embed([text_of(s, b) for _, s, b in rows]).astype(np.float32)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR REPLACE INTO vectors(id, model, v) VALUES (?, ?, ?)",
                [(r[0], self.model, vec.tobytes()) for r, vec in zip(rows, vectors, strict=False)],
            )
            db.execute("COMMIT")
        except sqlite3.OperationalError:
            if db.in_transaction:
                db.execute("ROLLBACK")
            return self._refresh_in_memory(db)
        return len(rows)

    def _refresh_in_memory(self, db: sqlite3.Connection) -> int:
        import numpy as np

        rows = db.execute("SELECT id, summary, body FROM entries WHERE ok = 1 ORDER BY id").fetchall()
        ids = [r[0] for r in rows]
        if self._matrix is None or self._matrix[0] != ids:
            vectors = self.embedder.embed([text_of(s, b) for _, s, b in rows]) if rows else np.zeros((0, 1))
            self._matrix = (ids, np.asarray(vectors, dtype=np.float32))
        return len(rows)

    def vectors(self, db: sqlite3.Connection) -> tuple[list[str], FloatArray]:
        import numpy as np

        self.refresh(db)
        if self._matrix is not None and not self._has_table(db):
            return self._matrix
        stored = "FROM vectors v JOIN entries e ON e.id = v.id WHERE e.ok = 1 AND v.model = ? ORDER BY v.id"
        if self._matrix is not None:
            # A vector never changes under its (id, model): the same ids are the same matrix.
            # Reading only the ids spares every later question the blobs (15 MB at 10,000
            # entries: 50 ms a question).
            if [r[0] for r in db.execute(f"SELECT v.id {stored}", (self.model,))] == self._matrix[0]:
                return self._matrix
        rows = db.execute(f"SELECT v.id, v.v {stored}", (self.model,)).fetchall()
        ids = [r[0] for r in rows]
        matrix = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            if rows
            else np.zeros((0, 1), dtype=np.float32)
        )
        self._matrix = (ids, matrix)
        return self._matrix

    @staticmethod
    def _has_table(db: sqlite3.Connection) -> bool:
        return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone() is not None

    def similarities(self, db: sqlite3.Connection, query: str) -> dict[str, float]:
        """entry id -> cosine similarity to the question (vectors are unit length)."""
        ids, matrix = self.vectors(db)
        if not ids or not query.strip():
            return {}
        q = self.embedder.embed([query])[0]
        return dict(zip(ids, (matrix @ q).tolist(), strict=False))
