"""The protocol revisions docs/INTEGRATION.md says `mcp --http` answers: the stateless
2026-07-28 core (no initialize, no session) and, by the initialize handshake, 2025-11-25 and
the revisions before it; a client offering a revision it does not know is answered with
2025-11-25 (the handshake's rule), never refused or left hanging."""

from __future__ import annotations

import pytest
from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import ROOT
from kit.servers import client, http_server, post

STATELESS = "2026-07-28"
HANDSHAKE = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def initialize(version: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }


def test_the_integration_guide_names_exactly_the_revisions_tested_here():
    guide = (ROOT / "docs" / "INTEGRATION.md").read_text()
    for version in [STATELESS, *HANDSHAKE]:
        assert f"**{version}**" in guide, version


@pytest.mark.parametrize(("mode", "expected"), [(STATELESS, STATELESS), ("auto", STATELESS), ("legacy", "2025-11-25")])
def test_the_sdk_client_gets_the_revision_it_asks_for_and_its_tools(repo, mode, expected):
    with http_server(repo) as server:

        async def scenario() -> None:
            async with client(server.url, mode=mode) as c:
                assert c.protocol_version == expected
                names = {t.name for t in (await c.list_tools()).tools}
                assert "lifeline_context" in names
                context = await c.call_tool("lifeline_context", {})
                assert not context.is_error, context.content[0].text

        drive(scenario)


def test_each_handshake_revision_is_answered_as_asked_and_an_unknown_one_with_the_latest(repo):
    with http_server(repo) as server:
        for version in HANDSHAKE:
            answer = post(server.url, initialize(version))
            assert answer.status_code == 200, answer.text
            assert answer.json()["result"]["protocolVersion"] == version
            assert "mcp-session-id" not in answer.headers, "the server keeps no session"
        unknown = post(server.url, initialize("2099-01-01"))
        assert unknown.status_code == 200 and unknown.json()["result"]["protocolVersion"] == "2025-11-25"
