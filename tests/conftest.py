"""Hermetic git for every test: no user config, no system config, no inherited GIT_* state.

The environment is set once for the session (module-scoped fixtures build repos
too); pygit2's own config search path is pointed at an empty directory so the
in-process library sees the same (empty) global config as the git executable.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from kit.run import AUTHOR_EMAIL, AUTHOR_NAME, init_repo, open_ledger, write_dispatch_wrapper

# Variables that would let the developer's environment leak into a test's git.
_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_SYSTEM",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TRACE",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_LIFELINE_NO_GC",
)


@pytest.fixture(scope="session", autouse=True)
def hermetic_git(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    empty = tmp_path_factory.mktemp("empty-config-dir")
    gitconfig = home / "gitconfig"
    gitconfig.write_text(
        f"[user]\n\tname = {AUTHOR_NAME}\n\temail = {AUTHOR_EMAIL}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[gc]\n\tautoDetach = false\n"
        "[advice]\n\tdetachedHead = false\n"
        '[protocol "file"]\n\tallow = always\n'
    )
    mp = pytest.MonkeyPatch()
    for var in _GIT_ENV:
        mp.delenv(var, raising=False)
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.setenv("GIT_TERMINAL_PROMPT", "0")
    mp.setenv("LC_ALL", "C.UTF-8")
    # Every CLI process the tests start runs from bytecode, as an installed package does
    # (pip compiles it): with PYTHONDONTWRITEBYTECODE inherited, each one compiled its ~80
    # modules from source again, half of a `git lifeline log`'s instructions (1.64 G against
    # 0.83 G). The bytecode goes to this session's temp dir, never into the checkout.
    mp.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    mp.setenv("PYTHONPYCACHEPREFIX", str(tmp_path_factory.mktemp("bytecode")))
    levels = [pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG, pygit2.enums.ConfigLevel.SYSTEM]
    saved = {lvl: pygit2.settings.search_path[lvl] for lvl in levels}
    for lvl in levels:
        pygit2.settings.search_path[lvl] = str(empty)
    yield home
    for lvl, value in saved.items():
        pygit2.settings.search_path[lvl] = value
    mp.undo()


@pytest.fixture
def repo(tmp_path) -> Path:
    """A fresh, empty, non-bare repository."""
    return init_repo(tmp_path / "repo")


@pytest.fixture
def ledger(repo):
    """A Ledger on `repo`. It reads git config once: open a new one after `git config`."""
    return open_ledger(repo)


@pytest.fixture(scope="session")
def dispatch_bin(tmp_path_factory) -> Path:
    bindir = tmp_path_factory.mktemp("bin")
    write_dispatch_wrapper(bindir)
    return bindir


@pytest.fixture
def git_dispatch(dispatch_bin, monkeypatch):
    """Put a `git-lifeline` on PATH so `git lifeline ...` reaches this checkout."""
    monkeypatch.setenv("PATH", str(dispatch_bin) + os.pathsep + os.environ.get("PATH", ""))
    return dispatch_bin


def pytest_configure(config):
    from hypothesis import settings

    examples = int(os.environ.get("LIFELINE_FUZZ_EXAMPLES", "200"))
    settings.register_profile("lifeline", max_examples=examples, deadline=None)
    settings.load_profile("lifeline")


@pytest.fixture(scope="session")
def record_counts():
    """`record_counts(corpus, **counts)`: a corpus test reports what it tried and what held.
    With LIFELINE_COUNTS=FILE set, the counts are written there as JSON lines (the source of
    the numbers in docs/RELIABILITY.md); otherwise they are only checked by the test."""
    import json

    target = os.environ.get("LIFELINE_COUNTS")

    def record(corpus: str, **counts) -> None:
        if target:
            with open(target, "a", encoding="utf-8") as f:
                f.write(json.dumps({"corpus": corpus, **counts}, sort_keys=True) + "\n")

    return record


@pytest.fixture
def remote(tmp_path) -> Path:
    """A bare remote that runs no hook (a hosted one)."""
    path = tmp_path / "remote.git"
    init_repo(path, "--bare")
    return path


@pytest.fixture
def server(tmp_path, git_dispatch) -> Path:
    """A bare server with the pre-receive hook installed (it runs `git lifeline` from PATH)."""
    from git_lifeline.app.hook_files import install
    from git_lifeline.git.repo import open_repo

    path = tmp_path / "server.git"
    init_repo(path, "--bare")
    install(open_repo(str(path)), ["pre-receive"])
    return path
