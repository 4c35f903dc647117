"""The lifeline-context side of the interop and lines tests: the seed fixtures of
tests/data/seed, and the real lifeline-context when LIFELINE_SEED_PYTHON points at a python
that has it (CI installs it in .venv-seed; see .ci/run), run with kit.run's timeout."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

import pytest

from git_lifeline.app import interop
from git_lifeline.app.interop import ImportReport
from kit.repos import init_repo, object_count, open_ledger
from kit.run import DATA, TIMEOUT, git

SEED = DATA / "seed"
# what the seed's JSON holds
JSONValue = Union[str, int, float, bool, None, list["JSONValue"], dict[str, "JSONValue"]]


def seed_ids() -> dict[str, JSONValue]:
    return json.loads((SEED / "ids.json").read_text(encoding="utf-8"))


@pytest.fixture
def repo(git_env: Path, tmp_path: Path) -> Path:
    """(where imported, with git_env) A fresh repository in the test's own home."""
    return init_repo(tmp_path / "repo")


def assert_nothing_written(repo: Path, before_objects: int) -> None:
    assert git(repo, "for-each-ref", "refs/lifeline/") == ""
    assert object_count(repo) == before_objects
    assert not (repo / "LIFELINE.md").exists()
    lifeline_dir = repo / ".git" / "lifeline"
    assert not list(lifeline_dir.glob("import-*")) if lifeline_dir.exists() else True


def seed_python() -> Optional[str]:
    return os.environ.get("LIFELINE_SEED_PYTHON") or None


needs_seed = pytest.mark.skipif(not seed_python(), reason="LIFELINE_SEED_PYTHON is not set (CI sets it)")


def _seed_run(cwd: Path, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """The real lifeline-context's python running ARGV in `cwd`, in an environment without
    this checkout or a LIFELINE_DB; fails the test unless it exits 0."""
    python = seed_python()
    assert python, "LIFELINE_SEED_PYTHON is not set (mark the test needs_seed)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LIFELINE_DB")}
    env["LIFELINE_AUTHOR"] = "Seed User <seed@example.com>"
    out = subprocess.run([python, *argv], cwd=str(cwd), env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def seed_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real lifeline-context CLI, from its own venv."""
    return _seed_run(cwd, ["-m", "lifeline.cli", *args])


def seed_session(cwd: Path, *commands: Sequence[str]) -> None:
    """Several seed CLI commands in one process of the real lifeline-context (its own
    `main(argv)`, as its console script calls it): one interpreter start, not one each."""
    script = (
        "import json, sys\nfrom lifeline.cli import main\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    code = main(argv)\n"
        "    if code:\n        sys.exit(f'seed {argv} failed with {code}')\n"
    )
    _seed_run(cwd, ["-c", script, json.dumps([list(c) for c in commands])])


def imp(repo: Path, source: Path, line: str = "main") -> ImportReport:
    """Import in-process (test set-up; the CLI face is tested separately): the ImportReport."""
    return interop.import_from(open_ledger(repo, line), Path(source))


def seed_rows(db: Path) -> list[dict[str, JSONValue]]:
    """The payloads of a lifeline-context database's entries, in its order."""
    con = sqlite3.connect(db)
    try:
        return [json.loads(p) for (p,) in con.execute("SELECT payload FROM entries ORDER BY seq")]
    finally:
        con.close()
