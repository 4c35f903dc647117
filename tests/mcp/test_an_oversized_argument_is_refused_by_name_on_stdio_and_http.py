"""Every tool argument is bounded, by one table (mcp/schema.py ARGUMENT_BOUNDS) that the stdio
and the HTTP server share: a megabyte `summary` or `query` is refused before any work with an
MCP error naming the argument and its limit, and nothing is written."""

from __future__ import annotations

import contextlib
import os
import sys

import anyio
import pytest
from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.servers import client, http_server
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace
from git_lifeline.core.content_rules import MAX_SUMMARY_CHARS
from git_lifeline.mcp.schema import QUERY_CHARS, SECTION

MEGABYTE = 1 << 20
HTTP_SIZE = 256 * 1024  # under the HTTP body bound (512 KiB), so the argument's own bound answers


@contextlib.asynccontextmanager
async def stdio(repo):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "git_lifeline", "mcp"], cwd=str(repo), env=dict(os.environ)
    )
    async with Client(params, read_timeout_seconds=60) as c:
        yield c


def cases(size: int) -> list[tuple[str, dict, str]]:
    """(tool, arguments, the refusal's words) with one argument of `size` characters."""
    return [
        (
            "lifeline_append",
            {"kind": "decision", "summary": "s" * size, "body": "Because."},
            f"summary is {size} characters long, over its limit of {MAX_SUMMARY_CHARS}",
        ),
        ("lifeline_recall", {"query": "q" * size}, f"query is {size} characters long, over its limit of {QUERY_CHARS}"),
        (
            "lifeline_checkpoint",
            {"thread": "main", "next": ["n"] * (SECTION.items + 1)},
            f"next has {SECTION.items + 1} items, over its limit of {SECTION.items}",
        ),
    ]


async def refused_each(c: Client, size: int) -> None:
    for tool, arguments, words in cases(size):
        result = await c.call_tool(tool, arguments)
        text = result.content[0].text
        assert result.is_error, f"{tool} took an oversized argument: {text[:200]}"
        assert words in text and "nothing was done" in text, text[:300]
        assert len(text) < 400, "the refusal must not echo the argument"


def assert_nothing_written(repo) -> None:
    ledger = Workspace.open(str(repo)).ledger()
    assert ledger.head() is None
    assert Agents(ledger).proposals() == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_megabyte_argument_gets_an_error_naming_it_and_its_limit_and_writes_nothing(repo, transport):
    async def scenario(c: Client, size: int) -> None:
        with anyio.fail_after(120):
            await refused_each(c, size)
            ok = await c.call_tool("lifeline_recall", {"query": "q" * QUERY_CHARS})
            assert not ok.is_error, ok.content[0].text

    if transport == "stdio":

        async def over_stdio() -> None:
            async with stdio(repo) as c:
                await scenario(c, MEGABYTE)

        anyio.run(over_stdio)
    else:
        with http_server(repo) as server:

            async def over_http() -> None:
                async with client(server.url) as c:
                    await scenario(c, HTTP_SIZE)

            anyio.run(over_http)
    assert_nothing_written(repo)
