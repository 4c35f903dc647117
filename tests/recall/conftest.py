"""The blind sets' ledgers, built once per test session and shared by the files that ask them.

Building a blind ledger logs every entry through git, and semantic recall then embeds them
all: the lexical and the semantic tests of one set used to pay both apiece. Here each set is
logged once; its semantic ledger is a copy of that repository with the model configured, so
only the embedding is paid again, once per set and session.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest
from kit.repos import open_ledger
from kit.run import ROOT, git

from git_lifeline.app.ledger import Ledger

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


@pytest.fixture(scope="session")
def blind_sets(tmp_path_factory, hermetic_git) -> BlindSets:
    """blind_sets(data_dir, model_dir or None) -> BlindSet, each built at most once."""
    built: dict[tuple[Path, Optional[str]], BlindSet] = {}
    repos: dict[Path, Path] = {}

    def get(data: Path, model: Optional[str] = None) -> BlindSet:
        key = (data, model)
        if key in built:
            return built[key]
        entries, questions = eval_blind.load(data)
        if data not in repos:
            repo = tmp_path_factory.mktemp(f"blind-{data.name}") / "repo"
            lexical = eval_blind.fresh_ledger(repo)
            built[(data, None)] = BlindSet(lexical, entries, questions, eval_blind.build(lexical, entries))
            repos[data] = repo
        if model is not None:
            repo = tmp_path_factory.mktemp(f"blind-{data.name}-semantic") / "repo"
            shutil.copytree(repos[data], repo, symlinks=True)
            git(repo, "config", "lifeline.semantic.model", model)
            built[key] = BlindSet(open_ledger(repo), entries, questions, built[(data, None)].ids)
        return built[key]

    return get
