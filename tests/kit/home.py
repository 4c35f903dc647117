"""Hermetic homes for git: no user config, no system config, no inherited GIT_* state.

`hermetic_git` holds for the whole session (tests/conftest.py uses it); a test or a folder
that needs a home of its own (its own identity, a `git-lifeline` on PATH) takes one of the
fixtures below, imported by name into its module. All of them write their config with
`use_home`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from kit.run import ROOT, write_dispatch_wrapper

AUTHOR_NAME = "Test Author"
AUTHOR_EMAIL = "test@example.com"
AUTHOR = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>"
# the reviewer of the review, MCP, status and onboarding tests (the `hermetic` fixture)
NAME, EMAIL = "Rita Reviewer", "rita@example.com"

# Variables that would let the developer's environment leak into a test's git.
GIT_ENV = (
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
    "LIFELINE_DB",
    "PRE_COMMIT_REMOTE_NAME",
)


def use_home(mp: pytest.MonkeyPatch, home: Path, name: str = AUTHOR_NAME, email: str = AUTHOR_EMAIL) -> Path:
    """Make `home` this process's HOME with a global git config naming `name <email>` (and
    nothing of the system's or the environment's); returns the config file."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "gitconfig"
    config.write_text(
        f"[user]\n\tname = {name}\n\temail = {email}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[gc]\n\tautoDetach = false\n"
        "[advice]\n\tdetachedHead = false\n"
        '[protocol "file"]\n\tallow = always\n',
        encoding="utf-8",
    )
    for var in GIT_ENV:
        mp.delenv(var, raising=False)
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("GIT_CONFIG_GLOBAL", str(config))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.setenv("GIT_TERMINAL_PROMPT", "0")
    return config


@pytest.fixture(scope="session", autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's home. pygit2's own config search path is pointed at an empty directory
    so the in-process library sees the same (empty) global config as the git executable."""
    home = tmp_path_factory.mktemp("home")
    empty = tmp_path_factory.mktemp("empty-config-dir")
    mp = pytest.MonkeyPatch()
    use_home(mp, home)
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


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """(autouse where imported) A home of this test's own in which Rita Reviewer writes,
    and this checkout on PYTHONPATH for the processes the test starts itself."""
    home = tmp_path / "home"
    use_home(monkeypatch, home, NAME, EMAIL)
    monkeypatch.setenv(
        "PYTHONPATH", str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    )
    return home


def _test_user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    use_home(monkeypatch, home, "Test User")
    monkeypatch.setenv("GIT_LIFELINE_NO_GC", "1")
    return home


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of this test's own, a known identity, and no automatic gc."""
    return _test_user_home(tmp_path, monkeypatch)


@pytest.fixture
def gitenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`git_env`, with a git-lifeline executable that runs this checkout first on PATH (so
    hooks and `git lifeline` reach it), run from tmp_path, which it returns."""
    bindir = _test_user_home(tmp_path, monkeypatch) / "bin"
    write_dispatch_wrapper(bindir)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def installed_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """git-lifeline on PATH as an installed package puts it (this interpreter's bin folder, as
    after `pipx install .`): the hooks, `git lifeline` and init's portable command need it."""
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])


@contextlib.contextmanager
def dispatching(dispatch_bin: Path) -> Iterator[None]:
    """For the length of the block (a module-scoped fixture, where monkeypatch does not
    reach): `git lifeline` on PATH through `dispatch_bin`, so hooks reach this checkout, and
    no automatic gc."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", str(dispatch_bin) + os.pathsep + os.environ.get("PATH", ""))
    mp.setenv("GIT_LIFELINE_NO_GC", "1")
    try:
        yield
    finally:
        mp.undo()
