"""The write policy comes from a ref a checkout cannot move (git/policy_ref.py), and every
agent write goes through it, over MCP or from the command line with --agent."""

from __future__ import annotations

import json

from kit.home import hermetic  # noqa: F401
from kit.repos import bare, commit_policy, log_entry, make_repo, ref, repo_with_a_commit  # noqa: F401
from kit.run import Via, cli, git

from git_lifeline.app.agents import Agents, policy_report
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace

LINE, TRAIL = "refs/lifeline/main", "refs/lifeline-review/main"
DIRECT = {"default": "direct"}


def agents(repo) -> Agents:
    return Agents(Workspace.open(str(repo)).ledger())


def contributor_branch(repo, doc=DIRECT, name="contrib") -> None:
    """A branch whose committed policy lets every agent write directly, checked out."""
    git(repo, "checkout", "-q", "-b", name)
    commit_policy(repo, doc)


def test_checking_out_a_contributors_branch_does_not_give_the_agent_direct_writes(repo):
    commit_policy(repo, {"default": "propose", "kinds": {"checkpoint": "direct"}})
    contributor_branch(repo)
    out = agents(repo).write(Draft("decision", "Drop the audit log", "Faster writes.", agent="claude-code"))
    assert out.mode == "propose" and not out.written
    assert ref(repo, LINE) is None, "the branch's policy wrote straight into refs/lifeline/main"
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code == 0 and "policy in effect: main:.lifeline/policy.json" in r.out, r
    assert "refs/heads/main" in r.out and "does not apply" in r.err, r
    data = json.loads(cli(repo, "policy", "--json", via=Via.THIS_PROCESS).out)
    assert data["ref"] == "refs/heads/main" and data["default"] == "propose"


def test_a_branch_cannot_bring_a_policy_where_the_default_branch_has_none(repo):
    contributor_branch(repo)
    out = agents(repo).write(Draft("decision", "Use Go", "Static binaries.", agent="claude-code"))
    assert out.mode == "propose"
    assert "no .lifeline/policy.json on main" in policy_report(Workspace.open(str(repo))).policy.source


def test_the_policy_applies_once_it_is_on_the_default_branch(repo):
    contributor_branch(repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "contrib")  # a human merged it
    assert agents(repo).write(Draft("note", "n", "why", agent="claude-code")).mode == "direct"


def test_a_clone_reads_the_policy_from_origins_default_branch(tmp_path):
    remote = bare(tmp_path, "remote.git")
    a = make_repo(tmp_path / "a")
    commit_policy(a, {"default": "propose", "agents": {"ci-bot": {"*": "deny"}}})
    git(a, "remote", "add", "origin", remote.as_uri())
    git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    # the clone's own main moves on with a laxer policy that nobody pushed
    commit_policy(b, DIRECT)
    r = cli(b, "policy", via=Via.THIS_PROCESS)
    assert "origin/main:.lifeline/policy.json" in r.out and "origin's default branch" in r.out, r
    out = agents(b).write(Draft("decision", "Cache: Redis", "Sessions.", agent="claude-code"))
    assert out.mode == "propose"
    r = cli(
        b, "log", "--kind", "note", "--summary", "nightly", "--body", "ran", "--agent", "ci-bot", via=Via.THIS_PROCESS
    )
    assert r.code == 2 and "denied by policy" in r.err and "agents.ci-bot.*" in r.err, r
    assert ref(b, LINE) is None


def test_lifeline_policy_ref_names_the_trusted_branch_and_never_head(repo):
    commit_policy(repo, {"default": "propose"})
    git(repo, "branch", "reviewed")
    contributor_branch(repo)
    git(repo, "config", "lifeline.policyRef", "contrib")
    assert agents(repo).write(Draft("note", "n", "why", agent="bot")).mode == "direct"
    git(repo, "config", "lifeline.policyRef", "reviewed")
    assert agents(repo).write(Draft("note", "m", "why", agent="bot")).mode == "propose"
    for bad in ("HEAD", "no-such-branch", "main~1"):
        git(repo, "config", "lifeline.policyRef", bad)
        before = ref(repo, LINE), ref(repo, TRAIL)
        r = cli(
            repo, "log", "--kind", "note", "--summary", "x", "--body", "why", "--agent", "bot", via=Via.THIS_PROCESS
        )
        assert r.code == 2 and "lifeline.policyRef" in r.err, (bad, r)
        assert (ref(repo, LINE), ref(repo, TRAIL)) == before, "nothing may be written"


def test_a_cli_write_that_names_an_agent_goes_through_the_policy(repo):
    commit_policy(repo, {"default": "propose", "agents": {"trusted": {"*": "direct"}, "blocked": {"*": "deny"}}})
    r = log_entry(repo, "decision", "Queue: SQS", "Managed.", "--agent", "codex", via=Via.THIS_PROCESS, expect=None)
    assert r.code == 0 and "proposal" in r.out and "git lifeline approve" in r.out, r
    assert ref(repo, LINE) is None
    r = log_entry(repo, "decision", "Queue: SQS", "Managed.", "--agent", "codex", via=Via.THIS_PROCESS, expect=None)
    assert r.code == 0 and "already proposed" in r.out, r
    r = cli(
        repo, "log", "--kind", "note", "--summary", "n", "--body", "why", "--agent", "blocked", via=Via.THIS_PROCESS
    )
    assert r.code == 2 and "denied by policy" in r.err, r
    r = log_entry(repo, "note", "t", "why", "--agent", "trusted", "--json", via=Via.THIS_PROCESS, expect=None)
    data = json.loads(r.out)
    assert data["mode"] == "direct" and data["written"] and data["rule"] == "agents.trusted.*"
    assert [row.record.doc["via"] for row in agents(repo).audit()] == ["cli"]
    assert [p.content.summary for p in agents(repo).proposals()] == ["Queue: SQS"]
    r = cli(repo, "checkpoint", "--agent", "blocked", "--next", "x", via=Via.THIS_PROCESS)
    assert r.code == 2 and "denied by policy" in r.err, r
    # a human's write (no --agent) is direct whatever the policy says
    assert cli(repo, "log", "--kind", "note", "--summary", "h", "--body", "why", via=Via.THIS_PROCESS).code == 0


def test_without_a_default_branch_the_built_in_policy_applies_until_one_is_named(tmp_path):
    repo = make_repo(tmp_path / "trunk")
    git(repo, "branch", "-m", "main", "trunk")
    commit_policy(repo, DIRECT)
    assert agents(repo).write(Draft("note", "n", "why", agent="bot")).mode == "propose"
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert "built-in default" in r.out and "lifeline.policyRef" in r.err, r
    git(repo, "config", "lifeline.policyRef", "trunk")
    assert agents(repo).write(Draft("note", "n", "why", agent="bot")).mode == "direct"
