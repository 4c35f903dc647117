"""`git lifeline mcp --http` run in a bare repository (the team's remote itself, as the issue
allows: "a clone or a bare repository"): it serves the context, files a proposal there, and a
clone that pulls sees it."""

from __future__ import annotations

from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import bare, configured_client, log_decision
from kit.run import cli, git
from kit.servers import client, http_server

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace


def test_a_server_in_a_bare_repository_reads_its_ledger_and_files_a_proposal_a_clone_pulls(tmp_path):
    remote = bare(tmp_path)
    alice = configured_client(tmp_path, "alice", remote)
    git(alice, "commit", "-q", "--allow-empty", "-m", "start")
    log_decision(alice, "Keep the ledger in git", "One history for code and reasons.")
    cli(alice, "push", expect=0)
    token = cli(remote, "mcp", "token", "add", "hosted-bot", expect=0).out.strip().splitlines()[-1]
    assert (remote / "lifeline-mcp-tokens").exists(), "the token file lives in the bare repository itself"

    with http_server(remote) as server:

        async def scenario() -> None:
            async with client(server.url, token) as c:
                context = await c.call_tool("lifeline_context", {})
                assert not context.is_error, context.content[0].text
                assert "Keep the ledger in git" in context.content[0].text
                wrote = await c.call_tool(
                    "lifeline_append",
                    {"kind": "decision", "summary": "Serve the remote", "body": "One server, no clone to keep."},
                )
                assert not wrote.is_error, wrote.content[0].text
                pending = await c.call_tool("lifeline_pending", {})
                assert "Serve the remote" in pending.content[0].text

        drive(scenario)
        assert "<repository>" not in server.output() and "Traceback" not in server.output(), server.output()

    cli(alice, "pull", expect=0)
    [proposal] = Agents(Workspace.open(str(alice)).ledger()).proposals()
    assert proposal.content.summary == "Serve the remote"
    assert proposal.content.agent == "hosted-bot" and proposal.record.via == "http"


def test_a_server_in_a_bare_repository_without_a_ledger_says_so_and_a_proposal_starts_it(tmp_path):
    remote = bare(tmp_path)
    with http_server(remote) as server:

        async def scenario() -> None:
            async with client(server.url) as c:
                context = await c.call_tool("lifeline_context", {})
                assert not context.is_error, context.content[0].text
                assert "The ledger is empty" in context.content[0].text
                wrote = await c.call_tool(
                    "lifeline_append",
                    {"kind": "decision", "summary": "Start the ledger", "body": "Someone has to."},
                )
                assert not wrote.is_error, wrote.content[0].text

        drive(scenario)
    alice = configured_client(tmp_path, "alice", remote)
    cli(alice, "pull", expect=0)
    [proposal] = Agents(Workspace.open(str(alice)).ledger()).proposals()
    assert proposal.content.summary == "Start the ledger"
