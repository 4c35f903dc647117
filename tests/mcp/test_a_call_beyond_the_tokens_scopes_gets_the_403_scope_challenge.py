"""A token without the scope a tool needs is answered as the MCP authorization spec's scope
challenge asks: HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope",
scope="<only the scope needed>", resource_metadata="<RFC 9728 URL>"`, so an OAuth client can
step up; the body is a JSON-RPC error naming the scope, which the SDK's client shows."""

from __future__ import annotations

import pytest
from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.servers import client, post
from kit.tokens import oauth_server
from mcp.shared.exceptions import MCPError

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

APPEND = {"kind": "note", "summary": "Step up", "body": "Why."}


def call(tool: str, arguments: dict, rid: int = 7) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


@pytest.fixture(name="oauth_server")
def a_server_trusting_one_key(repo, tmp_path):
    with oauth_server(repo, tmp_path) as running:
        yield running


def test_a_write_by_a_read_only_token_is_a_403_naming_the_scope_and_the_metadata(repo, oauth_server):
    server, token = oauth_server
    answer = post(server.url, call("lifeline_append", APPEND), token("lifeline:read"))
    assert answer.status_code == 403
    header = answer.headers["www-authenticate"]
    assert header.startswith("Bearer ") and 'error="insufficient_scope"' in header
    assert 'scope="lifeline:propose"' in header  # only what this call needs, not what the token holds
    metadata = f'resource_metadata="http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp"'
    assert metadata in header
    error = answer.json()
    assert error["id"] == 7 and "lifeline:propose" in error["error"]["message"]
    assert error["error"]["data"] == {"scope": "lifeline:propose"}
    assert Agents(Workspace.open(str(repo)).ledger()).proposals() == []


def test_a_token_with_none_of_our_scopes_is_challenged_for_read_on_tools_and_the_context(oauth_server):
    server, token = oauth_server
    bare = token("openid")
    read = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "lifeline://project/context"}}
    for body in (call("lifeline_context", {}), read):
        answer = post(server.url, body, bare)
        assert answer.status_code == 403, body
        assert 'scope="lifeline:read"' in answer.headers["www-authenticate"]
    allowed = post(server.url, call("lifeline_context", {}), token("lifeline:read"))
    assert allowed.status_code == 200 and "error" not in allowed.json()


def test_the_sdk_client_is_told_the_missing_scope_and_still_sees_only_its_tools(repo, oauth_server):
    server, token = oauth_server

    async def scenario() -> None:
        async with client(server.url, token("lifeline:read")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "lifeline_context" in names and "lifeline_append" not in names
            with pytest.raises(MCPError, match="lifeline:propose"):
                await c.call_tool("lifeline_append", APPEND)
            assert not (await c.call_tool("lifeline_context", {})).is_error
        async with client(server.url, token("lifeline:propose")) as c:
            assert not (await c.call_tool("lifeline_append", APPEND)).is_error

    drive(scenario)
    assert [p.content.summary for p in Agents(Workspace.open(str(repo)).ledger()).proposals()] == ["Step up"]
