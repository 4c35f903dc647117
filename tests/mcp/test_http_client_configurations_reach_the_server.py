"""The client configurations docs/INTEGRATION.md gives for `mcp --http` (Claude Code, Codex,
Cursor, the SDK) describe a request the real server accepts: each snippet is read from the
file, its URL pointed at a server on 127.0.0.1, its header filled with a real token."""

from __future__ import annotations

import json
import re

import tomllib
from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import ROOT, cli
from kit.servers import http_server, post

DOC = (ROOT / "docs" / "INTEGRATION.md").read_text()
PUBLIC = "https://ledger.example.com"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def snippet(after: str, language: str) -> str:
    start = DOC.index(after)
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(DOC, start)
    assert match is not None, f"no {language} block after {after!r}"
    return match.group(1)


def configurations(token: str) -> dict[str, tuple[str, dict[str, str]]]:
    """client -> (url, headers) as each snippet says, with the token where it names the variable."""
    claude = snippet("**Claude Code**:", "sh")
    claude_url = re.search(r"--transport http lifeline (\S+)", claude).group(1)
    name, _, value = re.search(r'--header "([^"]+)"', claude).group(1).partition(": ")
    codex = tomllib.loads(snippet("**Codex** (`~/.codex/config.toml`):", "toml"))["mcp_servers"]["lifeline"]
    assert codex["bearer_token_env_var"] == "LIFELINE_TOKEN"
    cursor = json.loads(snippet("**Cursor** (`.cursor/mcp.json`", "json"))["mcpServers"]["lifeline"]
    sdk = snippet("**The MCP Python SDK**", "python")
    sdk_url = re.search(r'streamable_http_client\("([^"]+)"', sdk).group(1)
    assert 'headers={"Authorization": f"Bearer {token}"}' in sdk
    bearer = {"Authorization": f"Bearer {token}"}
    return {
        "claude": (claude_url, {name: value.replace("$LIFELINE_TOKEN", token)}),
        "codex": (codex["url"], bearer),  # Codex sends the variable's value as a bearer token
        "cursor": (
            cursor["url"],
            {k: v.replace("${env:LIFELINE_TOKEN}", token) for k, v in cursor["headers"].items()},
        ),
        "sdk": (sdk_url, bearer),
    }


def test_every_documented_client_configuration_reaches_the_server_with_its_token(repo):
    token = cli(repo, "mcp", "token", "add", "agent", expect=0).out.strip().splitlines()[-1]
    with http_server(repo) as server:
        base = server.url.removesuffix("/mcp")
        for client, (url, headers) in configurations(token).items():
            assert url.startswith(PUBLIC + "/mcp"), client
            answer = post(url.replace(PUBLIC, base), LIST, headers=headers)
            assert answer.status_code == 200, (client, answer.status_code, answer.text)
            assert "lifeline_context" in answer.text, client
