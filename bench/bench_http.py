"""A bounded load run of `git lifeline mcp --http`: C clients x N calls, latency and errors.

    python bench/bench_http.py [--clients 50] [--calls 20] [--entries 200] [--tool lifeline_context]

Run by hand, never in CI. Makes a repository in a temporary directory with --entries
decisions, one team token per client (the default per-token rate limit applies), starts
the server on a free port of 127.0.0.1, then runs every client at once: each is the MCP
SDK's Streamable HTTP client in the stateless 2026-07-28 mode, making its calls one after
another. Prints each call's latency as p50/p95/p99/max, the calls per second of the whole
run and the errors (a tool error, an HTTP error or a timeout all count).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from kit.servers import client, http_server  # noqa: E402

from git_lifeline.app.draft import Draft  # noqa: E402
from git_lifeline.app.tokens import add_token, default_path  # noqa: E402
from git_lifeline.app.workspace import Workspace  # noqa: E402


def make_repo(path: Path, entries: int) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="b@example.com")
    env.update(GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="b@example.com")
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", "start"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "Bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "b@example.com"], check=True)
    led = Workspace.open(str(path)).ledger()
    for i in range(entries):
        led.log(Draft(kind="decision", summary=f"Decision {i} about module {i % 17}", body=f"Because of reason {i}."))


async def run(url: str, tokens: list[str], calls: int, tool: str) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    errors = 0

    async def one(token: str) -> None:
        nonlocal errors
        try:
            async with client(url, token, mode="2026-07-28") as c:
                for _ in range(calls):
                    start = time.perf_counter()
                    try:
                        out = await c.call_tool(tool, {})
                        errors += bool(out.is_error)
                    except Exception:
                        errors += 1
                    latencies.append(time.perf_counter() - start)
        except Exception:
            errors += calls

    begun = time.perf_counter()
    with anyio.fail_after(900):
        async with anyio.create_task_group() as tg:
            for token in tokens:
                tg.start_soon(one, token)
    return latencies, errors, time.perf_counter() - begun


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--tool", default="lifeline_context")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        make_repo(repo, args.entries)
        path = default_path(Workspace.open(str(repo)).location)
        tokens = [add_token(path, f"client-{i}").token for i in range(args.clients)]
        with http_server(repo) as server:
            latencies, errors, wall = anyio.run(run, server.url, tokens, args.calls, args.tool)
    ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(ms, n=100)
    print(f"{args.clients} clients x {args.calls} calls of {args.tool} on a ledger of {args.entries} decisions")
    print(f"calls: {len(ms)}, errors: {errors}, wall: {wall:.1f} s, throughput: {len(ms) / wall:.0f} calls/s")
    print(f"latency ms: p50 {q[49]:.0f}, p95 {q[94]:.0f}, p99 {q[98]:.0f}, max {ms[-1]:.0f}")
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
