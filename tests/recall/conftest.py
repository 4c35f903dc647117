"""The blind sets' ledgers, built once per test session and shared by the files that ask them.

Building a blind ledger logs every entry through git, and semantic recall then embeds them
all: the lexical and the semantic tests of one set used to pay both apiece, and with xdist's
work stealing each worker logged the sets it was handed again. Here each set is logged once per
session, by the first worker that asks (the others wait on a lock and copy the repository, its
cache built); its semantic ledger is a copy of that repository with the model configured.
Its vectors come from a store in pytest's cache directory, keyed by the model's fingerprint
and the entry's id (an id fixes its text, as in the cache itself), shared by xdist's workers
and kept between sessions: only entries no session embedded yet are embedded (the real path:
a fresh checkout, as CI's, embeds every set once; tests/recall/test_minilm.py checks the
vectors themselves).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest
from kit.repos import open_ledger
from kit.run import ROOT, git

from git_lifeline.app.ledger import Ledger
from git_lifeline.views import semantic

sys.path.insert(0, str(ROOT / "bench"))

import eval_blind  # noqa: E402


@dataclass(frozen=True)
class BlindSet:
    """One blind set's ledger (lexical, or semantic with a model) with what eval_blind scores."""

    ledger: Ledger
    entries: list[dict]
    questions: list[dict]
    ids: dict[str, str]  # an entry's label in ledger.json -> its id

    def report(self, questions: Optional[list[dict]] = None, split: str = "all") -> dict:
        """eval_blind's figures for `questions` (all of the set's by default)."""
        asked = self.questions if questions is None else questions
        return eval_blind.score(eval_blind.ours(self.ledger, asked), self.entries, self.ids, self.questions, split)


BlindSets = Callable[[Path, Optional[str]], BlindSet]


def with_shared_vectors(ledger: Ledger, store: Path) -> Ledger:
    """`ledger`'s cache given the vectors `store` holds for its entries and model; the ones it
    lacks embedded (Index.refresh) and added to `store`."""
    index = ledger.semantic_index()
    assert index is not None, ledger.recall_mode
    cache = ledger.cache()
    db = cache.ensure(ledger.store.head())
    db.execute(semantic._TABLE)
    with sqlite3.connect(store, timeout=120) as shared:
        shared.execute(semantic._TABLE)
        kept = shared.execute("SELECT id, model, v FROM vectors WHERE model = ?", (index.model,)).fetchall()
    db.executemany("INSERT OR IGNORE INTO vectors(id, model, v) VALUES (?, ?, ?)", kept)
    db.commit()
    index.refresh(db)
    cache.restamp()
    made = db.execute("SELECT id, model, v FROM vectors WHERE model = ?", (index.model,)).fetchall()
    with sqlite3.connect(store, timeout=120) as shared:
        shared.executemany("INSERT OR IGNORE INTO vectors(id, model, v) VALUES (?, ?, ?)", made)
    return ledger


def logged_once(shared: Path, data: Path, entries: list[dict]) -> tuple[Path, dict[str, str]]:
    """The set's repository, every entry logged and its cache built, and each entry's id by
    label: logged by the first of the session's workers to ask, under a lock the others wait on."""
    done = shared / f"blind-{data.name}" / "ids.json"
    done.parent.mkdir(parents=True, exist_ok=True)
    with open(shared / f"blind-{data.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            ledger = eval_blind.fresh_ledger(done.parent / "repo")
            ids = eval_blind.build(ledger, entries)
            ledger.cache().ensure(ledger.store.head())
            done.write_text(json.dumps(ids), encoding="utf-8")
    return done.parent / "repo", json.loads(done.read_text(encoding="utf-8"))


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory the whole test session shares: under xdist, the parent of the workers' own
    base directories (this session's alone); without it, the session's base directory."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def blind_sets(tmp_path_factory, hermetic_git, pytestconfig) -> BlindSets:
    """blind_sets(data_dir, model_dir or None) -> BlindSet, each built at most once."""
    built: dict[tuple[Path, Optional[str]], BlindSet] = {}
    repos: dict[Path, Path] = {}

    def get(data: Path, model: Optional[str] = None) -> BlindSet:
        key = (data, model)
        if key in built:
            return built[key]
        entries, questions = eval_blind.load(data)
        if data not in repos:
            logged, ids = logged_once(session_dir(tmp_path_factory), data, entries)
            repo = tmp_path_factory.mktemp(f"blind-{data.name}") / "repo"
            shutil.copytree(logged, repo, symlinks=True)
            built[(data, None)] = BlindSet(open_ledger(repo), entries, questions, ids)
            repos[data] = repo
        if model is not None:
            repo = tmp_path_factory.mktemp(f"blind-{data.name}-semantic") / "repo"
            shutil.copytree(repos[data], repo, symlinks=True)
            git(repo, "config", "lifeline.semantic.model", model)
            store = pytestconfig.cache.mkdir("lifeline-vectors") / "vectors.sqlite3"
            ledger = with_shared_vectors(open_ledger(repo), store)
            built[key] = BlindSet(ledger, entries, questions, built[(data, None)].ids)
        return built[key]

    return get
