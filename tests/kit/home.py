"""A hermetic home for the review, MCP, status and onboarding tests: HOME, the global git
config and pygit2's search path in tmp (autouse where imported), a repository with a first
commit, a committed policy, and a snapshot of the work tree's files.

Fixtures are imported by the test modules by name. Git and the CLI run through
helpers.git and helpers.cli.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest

from kit.run import ROOT, git

NAME, EMAIL = "Rita Reviewer", "rita@example.com"
_LEAKY = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
)


@pytest.fixture(autouse=True)
def hermetic(tmp_path, monkeypatch):
    """HOME and the global git config in tmp, no system config, no inherited GIT_* state."""
    home = tmp_path / "home"
    home.mkdir()
    cfg = home / "gitconfig"
    cfg.write_text(
        f"[user]\n\tname = {NAME}\n\temail = {EMAIL}\n[init]\n\tdefaultBranch = main\n"
        '[gc]\n\tautoDetach = false\n[protocol "file"]\n\tallow = always\n'
    )
    for var in _LEAKY:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv(
        "PYTHONPATH", str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    )
    levels = [pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG, pygit2.enums.ConfigLevel.SYSTEM]
    saved = {lvl: pygit2.settings.search_path[lvl] for lvl in levels}
    for lvl in levels:
        pygit2.settings.search_path[lvl] = str(home / "empty")
    yield home
    for lvl, value in saved.items():
        pygit2.settings.search_path[lvl] = value


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README").write_text("a project\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "start")
    return path


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def commit_policy(repo: Path, doc) -> None:
    (repo / ".lifeline").mkdir(exist_ok=True)
    text = doc if isinstance(doc, str) else json.dumps(doc, indent=2)
    (repo / ".lifeline" / "policy.json").write_text(text)
    git(repo, "add", ".lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "policy")


def work_tree_files(root: Path, skip_git: bool = True) -> dict:
    """path -> (size, mtime_ns) of every file under root (outside .git when skip_git)."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if skip_git and rel.parts and rel.parts[0] == ".git":
            continue
        if p.is_file():
            st = p.stat()
            out[str(rel)] = (st.st_size, st.st_mtime_ns)
    return out
