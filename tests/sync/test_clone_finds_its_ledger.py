"""A teammate's plain `git clone` does not fetch refs/lifeline/*: `init` brings the ledger in,
and until then every read says where the ledger is instead of "empty"."""

from __future__ import annotations

import json

from kit.home import hermetic  # noqa: F401
from kit.repos import (
    log_entry,
    make_repo,  # noqa: F401
    project_on_remote,
    ref,
)
from kit.run import Via, cli, git

from git_lifeline.app.empty_ledger import text_for_agents
from git_lifeline.app.workspace import Workspace


def published(tmp_path):
    """A remote whose ledger holds a decision and a pending proposal, pushed with git lifeline push."""
    remote, a = project_on_remote(tmp_path, "a")
    assert (
        cli(
            a, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID.", via=Via.THIS_PROCESS
        ).code
        == 0
    )
    log_entry(a, "note", "Cache later", "b", "--agent", "codex", via=Via.THIS_PROCESS)
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    return remote, a


def test_a_plain_clone_then_init_shows_the_remotes_ledger(tmp_path):
    remote, a = published(tmp_path)
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    assert ref(b, "refs/lifeline/main") is None
    r = cli(b, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS)
    assert r.code == 0 and "created from origin" in r.out and "line 'main' has 1 entry" in r.out, r
    assert "Database: PostgreSQL" in cli(b, "context", via=Via.THIS_PROCESS).out
    assert "Cache later" in cli(b, "review", via=Via.THIS_PROCESS).out, "the review trail came with the ledger"
    fetch = git(b, "config", "--get-all", "remote.origin.fetch")
    assert "+refs/lifeline/*:refs/remotes/origin/lifeline/*" in fetch
    assert "+refs/lifeline-review/*:refs/remotes/origin/lifeline-review/*" in fetch
    # from now on a plain git fetch brings a new line along
    assert (
        cli(
            a,
            "--line",
            "ops",
            "log",
            "--kind",
            "incident",
            "--summary",
            "Disk full",
            "--body",
            "b",
            via=Via.THIS_PROCESS,
        ).code
        == 0
    )
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    git(b, "fetch", "-q", "origin")
    assert ref(b, "refs/remotes/origin/lifeline/ops")


def test_reads_in_a_clone_without_its_ledger_point_at_pull_not_at_empty(tmp_path):
    remote, _a = published(tmp_path)
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    for argv in (["context"], ["list"], ["resume"]):
        r = cli(b, *argv, via=Via.THIS_PROCESS)
        assert r.code == 0 and "git lifeline pull origin" in r.err and "plain git clone" in r.err, (argv, r)
    assert "it may hold the ledger (git lifeline pull origin)" in cli(b, "status", via=Via.THIS_PROCESS).out
    agent_text = text_for_agents(Workspace.open(str(b)).gr, "main")
    assert "Do not propose a bootstrap" in agent_text and "git lifeline pull origin" in agent_text
    assert "git lifeline log" not in agent_text


def test_an_empty_ledger_without_a_remote_asks_for_a_proposed_bootstrap(tmp_path):
    repo = make_repo(tmp_path / "solo")
    text = text_for_agents(Workspace.open(str(repo)).gr, "main")
    assert "The ledger is empty" in text and "lifeline_append" in text and "a human approves it" in text
    assert "git lifeline log" not in text, "an agent is never sent around the write policy"
    assert "git lifeline pull" not in cli(repo, "context", via=Via.THIS_PROCESS).err


def test_after_init_found_no_ledger_on_the_remote_the_agent_may_propose_one(tmp_path):
    remote, repo = project_on_remote(tmp_path, "new")
    before = text_for_agents(Workspace.open(str(repo)).gr, "main")
    assert "may hold it" in before and "Do not propose a bootstrap" in before
    r = cli(repo, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS)
    assert r.code == 0 and "git lifeline log --kind bootstrap" in r.out, r
    after = text_for_agents(Workspace.open(str(repo)).gr, "main")
    assert "The ledger is empty" in after and "nor on origin" in after
    data = json.loads(cli(repo, "status", "--json", via=Via.THIS_PROCESS).out)
    assert data["refspecs"] == {"ledger": True, "review": True}


def test_init_offline_still_sets_up_and_says_the_ledger_may_be_on_the_remote(tmp_path):
    repo = make_repo(tmp_path / "offline")
    git(repo, "remote", "add", "origin", str(tmp_path / "gone.git"))
    r = cli(repo, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS)
    assert r.code == 0 and "could not pull from origin" in r.err, r
    assert "git lifeline pull origin" in r.out and "--kind bootstrap" not in r.out, r


def test_git_lifeline_clone_leaves_the_clone_as_git_clone_then_init_does(tmp_path):
    remote, _a = published(tmp_path)
    by_hand = tmp_path / "by-hand"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(by_hand))
    assert cli(by_hand, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS).code == 0
    assert cli(tmp_path, "clone", remote.as_uri(), str(tmp_path / "cloned"), via=Via.THIS_PROCESS).code == 0
    cloned = tmp_path / "cloned"

    def config(repo) -> list:
        return sorted(ln for ln in git(repo, "config", "--local", "--list").splitlines())

    def refs(repo) -> list:
        return sorted(git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines())

    assert config(cloned) == config(by_hand)
    assert refs(cloned) == refs(by_hand)


def test_a_bootstrap_is_refused_while_the_remotes_ledger_is_not_brought_in(tmp_path):
    remote, a = published(tmp_path)
    r = cli(a, "log", "--kind", "bootstrap", "--summary", "A shop", "--body", "Sells shoes.", via=Via.THIS_PROCESS)
    assert r.code == 0 and cli(a, "push", via=Via.THIS_PROCESS).code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    out = cli(b, "context", via=Via.THIS_PROCESS).out
    assert "git lifeline pull origin" in out and "git lifeline init" in out, out
    r = cli(b, "log", "--kind", "bootstrap", "--summary", "Another project", "--body", "b", via=Via.THIS_PROCESS)
    assert r.code == 2 and "git lifeline pull origin" in r.err, r
    assert ref(b, "refs/lifeline/main") is None, "nothing was written"
    # once it was fetched (init's refspec, a plain fetch) but not brought in: still refused
    git(b, "config", "--add", "remote.origin.fetch", "+refs/lifeline/*:refs/remotes/origin/lifeline/*")
    git(b, "fetch", "-q")
    assert ref(b, "refs/lifeline/main") is None
    r = cli(b, "log", "--kind", "bootstrap", "--summary", "Another project", "--body", "b", via=Via.THIS_PROCESS)
    assert r.code == 2 and "git lifeline pull origin" in r.err and ref(b, "refs/lifeline/main") is None, r
    assert cli(b, "pull", via=Via.THIS_PROCESS).code == 0
    r = cli(b, "log", "--kind", "bootstrap", "--summary", "Another project", "--body", "b", via=Via.THIS_PROCESS)
    assert r.code == 0, "with the project's history here, a second bootstrap is the writer's choice"
    r = cli(b, "verify", "--lint", via=Via.THIS_PROCESS)
    assert "two bootstraps" in r.out + r.err, r
    assert "**Conflict:** 2 bootstraps are in force" in cli(b, "context", via=Via.THIS_PROCESS).out
    # the clone that bootstrapped first hears it from its pull
    assert cli(b, "push", via=Via.THIS_PROCESS).code == 0
    r = cli(a, "pull", via=Via.THIS_PROCESS)
    assert "brought in a second bootstrap" in r.err, r
