"""The MCP SDK's own client on a real `git lifeline mcp` over stdio, and the one bounded way
to run an async scenario: every scenario ends within kit.run.TIMEOUT seconds or fails."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Callable, Union

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, TextContent

from kit.run import TIMEOUT

# a tool argument as a test passes it
ToolArg = Union[str, int, bool, list[str], None]


@contextlib.asynccontextmanager
async def server(cwd: Path, *args: str, under: tuple[str, ...] = ()) -> AsyncIterator[Client]:
    """`python -m git_lifeline mcp ARGS` in `cwd` (run under `under`, e.g. a read-only mount
    namespace), with the SDK's client connected to it."""
    argv = [*under, sys.executable, "-m", "git_lifeline", "mcp", *args]
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd), env=dict(os.environ))
    async with Client(params, read_timeout_seconds=30) as client:
        yield client


def drive(fn: Callable[[], Awaitable[None]], seconds: float = TIMEOUT) -> None:
    """Run one async scenario with a hard time limit."""

    async def bounded() -> None:
        with anyio.fail_after(seconds):
            await fn()

    anyio.run(bounded)


def text_of(result: CallToolResult) -> str:
    """The text a tool answered (its first content block, which must be text)."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def call(client: Client, tool: str, **args: ToolArg) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await client.call_tool(tool, args)
    return result.is_error, text_of(result)


async def ok(client: Client, tool: str, **args: ToolArg) -> str:
    """The text of one tool call that must succeed."""
    error, text = await call(client, tool, **args)
    assert not error, f"{tool}{args} failed: {text}"
    return text


def call_once(cwd: Path, tool: str, under: tuple[str, ...] = (), **args: ToolArg) -> CallToolResult:
    """One tool call on a fresh server in `cwd`, within the time limit."""
    got: list[CallToolResult] = []

    async def scenario() -> None:
        async with server(cwd, under=under) as c:
            got.append(await c.call_tool(tool, args))

    drive(scenario)
    return got[0]
