"""`git lifeline mcp --http` with team tokens, driven by the SDK's Streamable HTTP client
against a real server process on 127.0.0.1."""

from __future__ import annotations

import time

import pytest
from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import cli
from kit.servers import client, http_server, post

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MODES = ["legacy", "2026-07-28"]  # a 2025-11-25 client (initialize handshake) and a stateless one


def new_token(repo, name: str) -> str:
    out = cli(repo, "mcp", "token", "add", name, expect=0)
    return out.out.strip().splitlines()[-1]


@pytest.mark.parametrize("mode", MODES)
def test_a_token_writes_under_its_own_name_and_never_as_another_agent(repo, mode):
    token = new_token(repo, "ci-bot")
    with http_server(repo) as server:

        async def scenario() -> None:
            async with client(server.url, token, mode=mode) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert {"lifeline_context", "lifeline_append", "lifeline_checkpoint"} <= names
                context = await c.call_tool("lifeline_context", {})
                assert not context.is_error, context.content[0].text
                wrote = await c.call_tool(
                    "lifeline_append",
                    {"kind": "decision", "summary": "Use HTTP", "body": "Hosted agents need it.", "agent": "human"},
                )
                assert not wrote.is_error, wrote.content[0].text
                assert "proposal" in wrote.content[0].text

        drive(scenario)
    agents = Agents(Workspace.open(str(repo)).ledger())
    [proposal] = agents.proposals()
    assert proposal.content.agent == "ci-bot"
    assert proposal.record.via == "http"


def test_no_token_a_wrong_one_and_a_revoked_one_get_401_with_www_authenticate(repo):
    token = new_token(repo, "alice")
    with http_server(repo) as server:
        for sent in (None, "llt_not-a-token"):
            answer = post(server.url, LIST, sent)
            assert answer.status_code == 401
            assert answer.headers["www-authenticate"].startswith("Bearer ")
        assert post(server.url, LIST, token).status_code == 200
        cli(repo, "mcp", "token", "revoke", "alice", expect=0)
        deadline = time.monotonic() + 5  # "within a few seconds, without a restart"
        while post(server.url, LIST, token).status_code == 200:
            assert time.monotonic() < deadline, "a revoked token still works"
            time.sleep(0.2)
        refused = post(server.url, LIST, token)
        assert refused.status_code == 401 and "www-authenticate" in refused.headers


def test_a_request_from_a_foreign_origin_or_host_is_refused_even_with_a_token(repo):
    token = new_token(repo, "alice")
    with http_server(repo) as server:
        assert post(server.url, LIST, token, {"origin": "https://evil.example"}).status_code == 403
        assert post(server.url, LIST, token, {"host": "evil.example"}).status_code == 421
        assert post(server.url, LIST, token, {"origin": f"http://127.0.0.1:{server.port}"}).status_code == 200
    with http_server(repo, "--allow-origin", "https://app.example") as server:
        assert post(server.url, LIST, token, {"origin": "https://app.example"}).status_code == 200


def test_serving_beyond_loopback_without_authentication_is_refused(repo):
    out = cli(repo, "mcp", "--http", "0.0.0.0:18999")
    assert out.code != 0
    assert "not a loopback address" in out.err and "--token-file" in out.err


def test_a_shown_token_is_the_last_line_and_only_its_hash_is_stored(repo):
    token = new_token(repo, "alice")
    stored = (repo / ".git" / "lifeline-mcp-tokens").read_text()
    assert token not in stored
    [line] = stored.splitlines()
    name, digest = line.split()
    assert name == "alice" and digest.startswith("sha256:") and len(digest) == 7 + 64
    assert cli(repo, "mcp", "token", "add", "human").code != 0
    assert cli(repo, "mcp", "token", "add", "alice").code != 0
    assert "alice" in cli(repo, "mcp", "token", "list", expect=0).out


def test_a_token_past_its_rate_limit_gets_429_and_another_token_is_not_slowed(repo):
    first, second = new_token(repo, "alice"), new_token(repo, "bob")
    with http_server(repo, "--rate-limit", "3") as server:
        codes = [post(server.url, LIST, first).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited = post(server.url, LIST, first)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert post(server.url, LIST, second).status_code == 200
