"""Test servers on 127.0.0.1: a real `git lifeline mcp --http` process and the SDK's
Streamable HTTP client to talk to it, and a real `git daemon`. Every wait is bounded; each
process is stopped (by its pid) at the end."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Callable, Optional, Union

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from kit.run import subprocess_env

START_SECONDS = 60  # the SDK's import takes seconds on a loaded 2-core machine
ACCEPT = "application/json, text/event-stream"
# a JSON-RPC body as a test writes it
JSONValue = Union[str, int, float, bool, None, list["JSONValue"], dict[str, "JSONValue"]]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path):
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}/mcp"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def http_server(
    cwd: Path, *args: str, env: Optional[Mapping[str, str]] = None, port: Optional[int] = None
) -> Iterator[Running]:
    """`git lifeline mcp --http 127.0.0.1:PORT ARGS` in `cwd` (a free port unless given), up and answering."""
    port = port or free_port()
    log = cwd.parent / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "git_lifeline", "mcp", "--http", f"127.0.0.1:{port}", *args],
            cwd=str(cwd),
            env=subprocess_env(env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Running(proc, port, log)
    with listening(proc, port, running.output):
        yield running


@contextlib.contextmanager
def listening(proc: subprocess.Popen[bytes], port: int, output: Callable[[], str]) -> Iterator[None]:
    """Waits (bounded) until `proc` listens on 127.0.0.1:`port`, then for the block; `proc`
    is stopped after it whatever happened. `output` says what the process printed."""
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited ({proc.returncode}): {output()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not listen within {START_SECONDS}s: {output()}")
            time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def client(
    url: str, token: Optional[str] = None, mode: str = "auto", headers: Optional[Mapping[str, str]] = None
) -> Client:
    """The SDK's Client over Streamable HTTP, with `Authorization: Bearer TOKEN`."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    http = httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=60)


def post(
    url: str, body: Mapping[str, JSONValue], token: Optional[str] = None, headers: Optional[Mapping[str, str]] = None
) -> httpx2.Response:
    """One raw JSON-RPC POST (what a client that is not the SDK sends)."""
    sent = {"content-type": "application/json", "accept": ACCEPT, **(headers or {})}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return httpx2.post(url, json=body, headers=sent, timeout=60)


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """A real `git daemon` serving `base` (push enabled) on 127.0.0.1, up and listening:
    its git:// URL; stopped at exit."""
    port = free_port()
    log = base.parent / f"daemon-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--listen=127.0.0.1",
                f"--port={port}",
                f"--base-path={base}",
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
                str(base),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    with listening(proc, port, lambda: log.read_text(errors="replace")):
        yield f"git://127.0.0.1:{port}"
