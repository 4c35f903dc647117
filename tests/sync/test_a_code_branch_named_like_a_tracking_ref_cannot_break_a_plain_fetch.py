"""A code branch named lifeline/<line> cannot break every clone's plain `git fetch`."""

from __future__ import annotations

import pytest
from kit.repos import bare, configured_client, log_decision
from kit.run import cli, git


@pytest.mark.parametrize("setup", ["remote-setup", "init"])
def test_a_code_branch_named_like_the_ledgers_tracking_refs_cannot_break_a_plain_fetch(tmp_path, setup):
    server = bare(tmp_path)
    a = configured_client(tmp_path, "a", server)
    git(a, "commit", "-q", "--allow-empty", "-m", "init")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/main")
    log_decision(a)
    assert cli(a, "push").code == 0
    if setup == "init":
        r = cli(a, "init", "--no-mcp", "--no-hooks", "--no-agents")
    else:
        r = cli(a, "remote-setup")
        assert r.code == 0, r
        # a clone set up before (the ledger's fetch refspec already there) is repaired too
        r = cli(a, "remote-setup")
    assert r.code == 0, r
    # anyone who may push a code branch names one after the ledger's tracking refs
    m = configured_client(tmp_path, "m", server)
    git(m, "commit", "-q", "--allow-empty", "-m", "not a ledger")
    git(m, "push", "-q", "origin", "HEAD:refs/heads/lifeline/main", "HEAD:refs/heads/lifeline-review/main")
    git(a, "fetch", "--prune", "origin")  # fatal: Cannot fetch both refs/heads/lifeline/main and ...
    assert git(a, "rev-parse", "refs/remotes/origin/lifeline/main") == git(a, "rev-parse", "refs/lifeline/main")
