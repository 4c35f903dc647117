"""Shared by test_review.py and test_mcp.py: a hermetic git, repos, the CLI, an MCP client.

Fixtures are imported by the test modules by name (no conftest of our own, so this
file merges beside any other).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pygit2
import pytest

ROOT = Path(__file__).resolve().parents[1]
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


def git(cwd, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode('utf-8', 'replace')}")
    return proc.stdout.decode("utf-8", "replace").strip()


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


class Run:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.err = proc.stderr.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return f"<exit {self.code}\nout: {self.out[-1500:]}\nerr: {self.err[-1500:]}>"


def cli_process(cwd, *args: str, env: Optional[dict] = None) -> Run:
    """`python -m git_lifeline ARGS` as a real process: exit codes and streams as a user sees them."""
    full = dict(os.environ)
    full.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "git_lifeline", *args], cwd=str(cwd), capture_output=True, env=full, timeout=60
    )
    return Run(proc)


def cli(cwd, *args: str) -> Run:
    """The same entry point (`cli.run`) in this process: same exit code and output, without
    paying an interpreter start per call."""
    import signal

    from git_lifeline.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    pipe = signal.getsignal(signal.SIGPIPE) if hasattr(signal, "SIGPIPE") else None
    code = 0
    old_cwd, old_argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = ["git-lifeline", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                run()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(old_cwd)
        sys.argv = old_argv
        if pipe is not None:
            signal.signal(signal.SIGPIPE, pipe)
    return Run(subprocess.CompletedProcess(args, code, out.getvalue().encode(), err.getvalue().encode()))


def commit_policy(repo: Path, doc) -> None:
    (repo / ".lifeline").mkdir(exist_ok=True)
    text = doc if isinstance(doc, str) else json.dumps(doc, indent=2)
    (repo / ".lifeline" / "policy.json").write_text(text)
    git(repo, "add", ".lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "policy")


def ref_value(repo: Path, ref: str) -> Optional[str]:
    out = git(repo, "rev-parse", "--verify", "-q", ref, check=False)
    return out or None


def snapshot(root: Path, skip_git: bool = True) -> dict:
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
