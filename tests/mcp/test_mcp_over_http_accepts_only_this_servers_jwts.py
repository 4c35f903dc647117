"""OAuth 2.1 resource-server mode: JWT access tokens verified offline against a JWKS served
by a real local HTTP server, or read from a file; keys made in the test."""

from __future__ import annotations

import contextlib
import json

import httpx2
import pytest
from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import commit_policy, repo_with_a_commit  # noqa: F401
from kit.servers import client, free_port, http_server, post
from kit.tokens import ISSUER, jwks_of, jwks_server, mint, new_key, oauth_server
from mcp.shared.exceptions import MCPError

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.mark.parametrize("source", ["url", "file"])
def test_only_a_jwt_for_this_audience_from_the_issuers_key_and_unexpired_is_accepted(repo, tmp_path, source):
    key, other = new_key(), new_key()
    doc = jwks_of(key, "k1")
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(doc))
    with contextlib.ExitStack() as stack:
        jwks = stack.enter_context(jwks_server(doc)) if source == "url" else str(path)
        port = free_port()
        audience = f"http://127.0.0.1:{port}/mcp"  # the server's own URL is its resource identifier
        server = stack.enter_context(
            http_server(repo, "--issuer", ISSUER, "--audience", audience, "--jwks", jwks, port=port)
        )
        good = mint(key, "k1", audience, "lifeline:read lifeline:propose")
        assert post(server.url, LIST, good).status_code == 200
        refused = {
            "another audience": mint(key, "k1", "https://other.example/mcp", "lifeline:read"),
            "expired": mint(key, "k1", audience, "lifeline:read", expires_in=-3600),
            "another key": mint(other, "k1", audience, "lifeline:read"),
            "another issuer": mint(key, "k1", audience, "lifeline:read", issuer="https://evil.example"),
            "not a jwt": "garbage",
        }
        for why, token in refused.items():
            answer = post(server.url, LIST, token)
            assert answer.status_code == 401, why
            header = answer.headers["www-authenticate"]
            assert (
                'resource_metadata="http://127.0.0.1:' in header
                and "/.well-known/oauth-protected-resource/mcp" in header
            )
        metadata = httpx2.get(
            f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp", timeout=30
        ).json()
        assert metadata["resource"] == audience and metadata["authorization_servers"] in ([ISSUER], [ISSUER + "/"])
        assert set(metadata["scopes_supported"]) == {"lifeline:read", "lifeline:propose", "lifeline:write"}

        async def scenario() -> None:
            async with client(server.url, good) as c:
                wrote = await c.call_tool(
                    "lifeline_append", {"kind": "decision", "summary": "Use OAuth", "body": "Hosted agents."}
                )
                assert not wrote.is_error, wrote.content[0].text

        drive(scenario)
    [proposal] = Agents(Workspace.open(str(repo)).ledger()).proposals()
    assert proposal.content.agent == "claude-ai" and proposal.record.via == "http"


def test_a_token_without_a_write_scope_neither_sees_nor_calls_the_write_tools(repo, tmp_path):
    with oauth_server(repo, tmp_path) as (server, token):
        reader = token("lifeline:read")

        async def scenario() -> None:
            async with client(server.url, reader) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "lifeline_context" in names and "lifeline_append" not in names
                with pytest.raises(MCPError, match="lifeline:propose"):  # the 403 scope challenge's body
                    await c.call_tool("lifeline_append", {"kind": "note", "summary": "x", "body": "y"})
                assert not (await c.call_tool("lifeline_context", {})).is_error

        drive(scenario)
    assert Agents(Workspace.open(str(repo)).ledger()).proposals() == []


def test_a_propose_scope_files_a_proposal_where_the_policy_would_let_the_write_in(repo, tmp_path):
    commit_policy(repo, {"default": "propose", "agents": {"claude-ai": {"*": "direct"}}})
    with oauth_server(repo, tmp_path) as (server, token):

        async def scenario() -> None:
            for scope, summary in (("lifeline:propose", "Proposed only"), ("lifeline:write", "Written directly")):
                async with client(server.url, token(scope)) as c:
                    out = await c.call_tool("lifeline_append", {"kind": "note", "summary": summary, "body": "Why."})
                    assert not out.is_error, out.content[0].text

        drive(scenario)
    agents = Agents(Workspace.open(str(repo)).ledger())
    assert [p.content.summary for p in agents.proposals()] == ["Proposed only"]
    assert [row.record.doc["via"] for row in agents.audit()] == ["http"]
