"""The warm `context` against the click command: each runs in a child process that records
which modules it loaded, so a test says whether the warm path answered (app/warm_context.py)
and whether it printed the normal path's bytes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Optional

from git_lifeline.views import cache_check
from kit.entries import make_entry
from kit.repos import commit_file, init_repo, open_ledger
from kit.run import subprocess_env

ENTRY = """
import atexit, os, sys
def _report():
    with open(os.environ["WARM_PROBE"], "w") as f:
        f.write(" ".join(m for m in ("pygit2", "click") if m in sys.modules))
atexit.register(_report)
sys.argv = ["git-lifeline", *sys.argv[1:]]
from git_lifeline.cli{module} import run
run()
"""


class Ran:
    def __init__(self, proc: subprocess.CompletedProcess[bytes], loaded: str) -> None:
        self.out, self.err, self.code, self.loaded = proc.stdout, proc.stderr, proc.returncode, loaded

    @property
    def warm(self) -> bool:
        """Answered without pygit2 and click."""
        return self.loaded == ""

    def same_as(self, other: "Ran") -> bool:
        return (self.out, self.err, self.code) == (other.out, other.err, other.code)


def _run(module: str, cwd: Path, args: tuple[str, ...], env: dict[str, str], probe: Path) -> Ran:
    env = subprocess_env({**env, "WARM_PROBE": str(probe)})
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY.format(module=module), *args],
        cwd=str(cwd),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return Ran(proc, probe.read_text())


def entry_point(cwd: Path, *args: str, env: Optional[dict[str, str]] = None) -> Ran:
    return _run("", cwd, args, env or {}, cwd.parent / f"probe-{os.getpid()}-entry")


def click_only(cwd: Path, *args: str, env: Optional[dict[str, str]] = None) -> Ran:
    return _run(".main", cwd, args, env or {}, cwd.parent / f"probe-{os.getpid()}-click")


def build(repo: Path) -> Path:
    """A ledger of a few entries whose cache is warm (the normal path built it)."""
    init_repo(repo)
    led = open_ledger(repo)
    led.append([make_entry(i) for i in range(6)])
    led.append([make_entry(6, kind="open", summary="Which queue to use", body="We have not decided.")])
    assert click_only(repo, "context").code == 0
    return repo


def cache_file(repo: Path) -> Path:
    return repo / ".git" / "lifeline" / "main.sqlite3"


def edit_cache_keeping_its_stamp(repos: "list[Path] | tuple[Path, ...]", sql: str) -> None:
    """Change each cache file with `sql`, then forge its stamp to match, so that only the
    checks made as the file is read can tell."""
    for repo in repos:
        path = cache_file(repo)
        db = sqlite3.connect(str(path), isolation_level=None)
        db.execute(sql)
        seal = db.execute("SELECT value FROM meta WHERE key='seal'").fetchone()[0]
        db.close()
        cache_check.write_stamp(path, seal)


def code_path_ledger(repo: Path) -> Path:
    """A decision naming src/**, code that changed under it since, and a context that kept
    its staleness (the normal path's run)."""
    init_repo(repo)
    commit_file(repo)
    open_ledger(repo).append([make_entry(1, body="paths: src/**\n\nBecause.")])
    (repo / "src").mkdir()
    commit_file(repo, "src/app.py", "print('changed after the decision')\n")
    assert b"code changed since" in click_only(repo, "context").out
    return repo
