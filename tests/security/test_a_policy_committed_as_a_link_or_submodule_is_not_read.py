"""The policy on the trusted ref is read only from a regular file: one committed as a symbolic
link is not a policy file, one committed as a submodule is reported, not a crash.
"""

from __future__ import annotations

import os

from kit.home import hermetic  # noqa: F401
from kit.repos import make_repo, ref, repo_with_a_commit  # noqa: F401
from kit.run import Via, cli, git

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace

LINE = "refs/lifeline/main"


def commit_tree_entry(repo, mode: str, target: str) -> None:
    """Commit `.lifeline/policy.json` as something other than a regular file (a symbolic
    link, or a submodule's commit), the way a pushed branch can."""
    if mode == "120000":
        (repo / ".lifeline").mkdir(exist_ok=True)
        os.symlink(target, repo / ".lifeline" / "policy.json")
        git(repo, "add", ".lifeline/policy.json")
    else:
        git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{target},.lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "policy")


def test_a_policy_committed_as_a_symbolic_link_is_not_a_policy_file(repo):
    """A link's blob is its target's name: a link named '{"default": "direct"}' gave every
    agent direct writes while the checkout shows a dangling link no one can read."""
    commit_tree_entry(repo, "120000", '{"default": "direct"}')
    out = Agents(Workspace.open(str(repo)).ledger())
    try:
        result = out.write(Draft("decision", "Drop the audit log", "Faster.", agent="claude-code"))
    except Exception as exc:  # refused: the policy is not a file
        assert "is not a file" in str(exc), exc
    else:
        raise AssertionError(f"an agent's write went through a linked policy: {result}")
    assert ref(repo, LINE) is None
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code != 0 and "is not a file" in r.err, r


def test_a_policy_committed_as_a_submodule_is_reported_not_a_crash(repo):
    """A gitlink's id names a commit of another repository: reading it as a blob failed with
    'object missing (run git fsck)' and doctor stopped there instead of listing its checks."""
    commit_tree_entry(repo, "160000", "1234567890123456789012345678901234567890")
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code != 0 and "is not a file" in r.err and "fsck" not in r.err, r
    d = cli(repo, "doctor", via=Via.THIS_PROCESS)
    assert "policy" in d.out and "is not a file" in d.out and "fsck" not in d.out + d.err, d
