"""The cache's side files (its stamp, the warm path's tip, the trust tiers' file) are read only when they are
regular files. A FIFO planted at the stamp's path held `context` forever: the stamp was
opened with a plain open(), which waits for a writer that never comes."""

from __future__ import annotations

import os

import pytest
from kit.entries import make_entry
from kit.repos import init_repo, open_ledger
from kit.run import cli


@pytest.mark.parametrize("side", ["main.sqlite3.stamp", "main.sqlite3.tip", "main.trust"])
def test_a_fifo_at_a_cache_side_file_never_holds_context(tmp_path, side):
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1)])
    first = cli(repo, "context", expect=0)
    target = repo / ".git" / "lifeline" / side
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    for _ in range(2):  # piped (the warm path may answer) and as the normal path reads it
        again = cli(repo, "context")
        assert again.code == 0 and again.raw == first.raw, again
