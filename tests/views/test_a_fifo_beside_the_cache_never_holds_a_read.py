"""The cache's side files (its stamp, the warm path's tip, the trust tiers' file) are read only when they are
regular files. A FIFO planted at the stamp's path held `context` forever: the stamp was
opened with a plain open(), which waits for a writer that never comes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kit.run import init_repo, make_entry, open_ledger, subprocess_env


@pytest.mark.parametrize("side", ["main.sqlite3.stamp", "main.sqlite3.tip", "main.trust"])
def test_a_fifo_at_a_cache_side_file_never_holds_context(tmp_path, side):
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1)])
    run = [sys.executable, "-m", "git_lifeline", "context"]
    first = subprocess.run(run, cwd=str(repo), capture_output=True, env=subprocess_env(), timeout=60)
    assert first.returncode == 0, first.stderr
    target = repo / ".git" / "lifeline" / side
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    for _ in range(2):  # piped (the warm path may answer) and as the normal path reads it
        again = subprocess.run(run, cwd=str(repo), capture_output=True, env=subprocess_env(), timeout=60)
        assert again.returncode == 0 and again.stdout == first.stdout, again.stderr
