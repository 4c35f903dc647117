"""Fixtures of the interop and lines tests: a hermetic git configuration, the seed
fixtures of tests/data/seed, and the real lifeline-context when LIFELINE_SEED_PYTHON
points at a python that has it (CI installs it in .venv-seed; see .ci/run). Git and
this project's CLI run through helpers.git and helpers.cli.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from kit.run import DATA, git, init_repo, open_ledger

SEED = DATA / "seed"


def seed_ids() -> dict:
    return json.loads((SEED / "ids.json").read_text(encoding="utf-8"))


@pytest.fixture
def git_env(tmp_path, monkeypatch):
    """HOME and the global git config in tmp_path; no system config; a known identity."""
    home = tmp_path / "home"
    home.mkdir()
    cfg = home / "gitconfig"
    cfg.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_LIFELINE_NO_GC", "1")
    for var in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "LIFELINE_DB",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def repo(git_env, tmp_path) -> Path:
    return init_repo(tmp_path / "repo")


def line_ids(repo: Path, line: str = "main") -> list:
    return [e.id for e in open_ledger(repo, line).entries()]


def object_count(repo: Path) -> int:
    vals = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(vals["count"]) + int(vals["in-pack"])


def assert_nothing_written(repo: Path, before_objects: int) -> None:
    assert git(repo, "for-each-ref", "refs/lifeline/") == ""
    assert object_count(repo) == before_objects
    assert not (repo / "LIFELINE.md").exists()
    lifeline_dir = repo / ".git" / "lifeline"
    assert not list(lifeline_dir.glob("import-*")) if lifeline_dir.exists() else True


def seed_python():
    return os.environ.get("LIFELINE_SEED_PYTHON") or None


needs_seed = pytest.mark.skipif(not seed_python(), reason="LIFELINE_SEED_PYTHON is not set (CI sets it)")


def seed_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real lifeline-context CLI, from its own venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LIFELINE_DB")}
    env["LIFELINE_AUTHOR"] = "Seed User <seed@example.com>"
    out = subprocess.run(
        [seed_python(), "-m", "lifeline.cli", *args], cwd=str(cwd), env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def seed_session(cwd: Path, *commands: list) -> None:
    """Several seed CLI commands in one process of the real lifeline-context (its own
    `main(argv)`, as its console script calls it): one interpreter start, not one each."""
    script = (
        "import json, sys\nfrom lifeline.cli import main\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    code = main(argv)\n"
        "    if code:\n        sys.exit(f'seed {argv} failed with {code}')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LIFELINE_DB")}
    env["LIFELINE_AUTHOR"] = "Seed User <seed@example.com>"
    out = subprocess.run(
        [seed_python(), "-c", script, json.dumps([list(c) for c in commands])],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def imp(repo: Path, source: Path, line: str = "main"):
    """Import in-process (test set-up; the CLI face is tested separately): the ImportReport."""
    from git_lifeline.app import interop

    return interop.import_from(open_ledger(repo, line), Path(source))


def seed_rows(db: Path) -> list:
    con = sqlite3.connect(db)
    try:
        return [json.loads(p) for (p,) in con.execute("SELECT payload FROM entries ORDER BY seq")]
    finally:
        con.close()
