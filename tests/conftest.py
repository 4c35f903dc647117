"""Fixtures every test folder may take: hermetic git for the whole session (kit.home's
`hermetic_git`: module-scoped fixtures build repositories too), an empty repository and a
Ledger on it, bare remotes with and without the pre-receive hook, and `git lifeline` on PATH.
Everything else a test needs is in tests/kit/, imported from the module that holds it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import pytest
from kit.home import hermetic_git  # noqa: F401  (the session's hermetic git, autouse)
from kit.repos import bare, init_repo, open_ledger
from kit.run import ROOT, write_dispatch_wrapper

from git_lifeline.app.ledger import Ledger


class RecordCounts(Protocol):
    def __call__(self, corpus: str, **counts: int) -> None: ...


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh, empty, non-bare repository."""
    return init_repo(tmp_path / "repo")


@pytest.fixture
def ledger(repo: Path) -> Ledger:
    """A Ledger on `repo`. It reads git config once: open a new one after `git config`."""
    return open_ledger(repo)


@pytest.fixture(scope="session")
def dispatch_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bindir = tmp_path_factory.mktemp("bin")
    write_dispatch_wrapper(bindir)
    return bindir


@pytest.fixture
def git_dispatch(dispatch_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `git-lifeline` on PATH so `git lifeline ...` reaches this checkout."""
    monkeypatch.setenv("PATH", str(dispatch_bin) + os.pathsep + os.environ.get("PATH", ""))
    return dispatch_bin


def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    if not hasattr(config, "workerinput"):  # once, in the controller, before any worker starts
        compile_the_package()

    examples = int(os.environ.get("LIFELINE_FUZZ_EXAMPLES", "200"))
    settings.register_profile("lifeline", max_examples=examples, deadline=None)
    settings.load_profile("lifeline")


def compile_the_package() -> None:
    """Write the package's bytecode before the suite starts its ~2,700 interpreters.

    An editable install leaves the source uncompiled, and where PYTHONDONTWRITEBYTECODE is set
    (as on CI's machines) no import writes it either: every `python -m git_lifeline` a test
    starts then compiles each module it imports afresh (~0.03-0.08 s CPU a process). An
    installed wheel is compiled when pip installs it, so this is the code users run, too.
    compileall writes whatever that variable says, and skips what is already current."""
    import compileall

    compileall.compile_dir(str(ROOT / "git_lifeline"), quiet=1)


@pytest.fixture(scope="session")
def record_counts() -> RecordCounts:
    """`record_counts(corpus, **counts)`: a corpus test reports what it tried and what held.
    With LIFELINE_COUNTS=FILE set, the counts are written there as JSON lines (the source of
    the numbers in docs/RELIABILITY.md); otherwise they are only checked by the test."""
    import json

    target = os.environ.get("LIFELINE_COUNTS")

    def record(corpus: str, **counts: int) -> None:
        if target:
            with open(target, "a", encoding="utf-8") as f:
                f.write(json.dumps({"corpus": corpus, **counts}, sort_keys=True) + "\n")

    return record


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare remote that runs no hook (a hosted one)."""
    return bare(tmp_path, "remote.git")


@pytest.fixture
def server(tmp_path: Path, git_dispatch: Path) -> Path:
    """A bare server with the pre-receive hook installed (it runs `git lifeline` from PATH)."""
    return bare(tmp_path, "server.git", hook=True)
