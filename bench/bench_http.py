"""A bounded load run of `git lifeline mcp --http`: C clients x N calls, latency and errors.

    python bench/bench_http.py [--clients 50] [--calls 20] [--entries 200] [--tool lifeline_context]
    python bench/bench_http.py --repo DIR --line NAME [--clients 4] [--calls 10] [--warm 20] [--appends 5]

Run by hand, never in CI. Makes a repository in a temporary directory with --entries
decisions, one team token per client (the default per-token rate limit applies), starts
the server on a free port of 127.0.0.1, then runs every client at once: each is the MCP
SDK's Streamable HTTP client in the stateless 2026-07-28 mode, making its calls one after
another. Prints each call's latency as p50/p95/p99/max, the calls per second of the whole
run and the errors (a tool error, an HTTP error or a timeout all count).

With --repo, an existing ledger instead: DIR is copied into the temporary directory first
(the server writes its cache under the git dir; DIR is never written) and NAME is served.
Before the load run it measures, one client at a time: the first call of a server on the
copy (the cold cache build), the first call of a second server process (the cache on disk),
--warm sequential calls, and after the load run --appends rounds of `lifeline_append` (a
note, by a token the copy's policy lets write directly) then the timed call. Each figure is
printed with the load average beside it. Wall times: on a shared machine, read them with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from kit.servers import client, http_server  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.types import TextContent  # noqa: E402

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


POLICY_REF = "refs/heads/lifeline-bench-policy"
WRITER = "bench-writer"  # the token whose appends the copy's policy lets through directly


def git(repo: Path, *args: str, stdin: str = "") -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="b@example.com")
    env.update(GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="b@example.com")
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def copy_ledger(source: Path, dest: Path) -> None:
    """`source` copied to `dest`, with a policy that lets WRITER write directly, committed on a
    branch of the copy's own (POLICY_REF) that `lifeline.policyRef` names; `source` is only
    read. A copy whose HEAD has no commit (a ledger made alone, as bench/gen.py makes them) is
    given one empty code commit, as a project's repository has: without one, a line whose
    decisions name `paths:` is never answered from a kept answer (docs/PERFORMANCE.md)."""
    shutil.copytree(source, dest, symlinks=True)
    if subprocess.run(["git", "-C", str(dest), "rev-parse", "-q", "--verify", "HEAD"], capture_output=True).returncode:
        print("the copy's HEAD has no commit: giving it one empty code commit", flush=True)
        git(dest, "update-ref", "HEAD", git(dest, "commit-tree", git(dest, "mktree"), "-m", "code"))
    blob = git(dest, "hash-object", "-w", "--stdin", stdin='{"agents": {"%s": {"*": "direct"}}}\n' % WRITER)
    inner = git(dest, "mktree", stdin=f"100644 blob {blob}\tpolicy.json\n")
    tree = git(dest, "mktree", stdin=f"040000 tree {inner}\t.lifeline\n")
    git(dest, "update-ref", POLICY_REF, git(dest, "commit-tree", tree, "-m", "bench policy"))
    git(dest, "config", "lifeline.policyRef", POLICY_REF)


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


async def timed(c: Client, tool: str, arguments: dict[str, str], said: Optional[list[str]] = None) -> float:
    """One call's wall time in ms (its answer's text appended to `said`); a tool error stops the run."""
    start = time.perf_counter()
    out = await c.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - start) * 1000
    text = " ".join(block.text for block in out.content if isinstance(block, TextContent))
    if out.is_error:
        raise SystemExit(f"{tool}: {text}")
    if said is not None:
        said.append(text)
    return elapsed


def spread(ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return f"median {statistics.median(ms):.1f}, p95 {q[94]:.1f}, min {min(ms):.1f}, max {max(ms):.1f} ms"


async def first_call(url: str, token: str, tool: str) -> None:
    async with client(url, token, mode="2026-07-28") as c:
        print(f"  first call: {await timed(c, tool, {}):.0f} ms ({load()})", flush=True)


async def sequential(url: str, token: str, tool: str, warm: int) -> None:
    async with client(url, token, mode="2026-07-28") as c:
        print(f"  first call of this process: {await timed(c, tool, {}):.0f} ms ({load()})", flush=True)
        ms = [await timed(c, tool, {}) for _ in range(warm)]
        print(f"  warm, {warm} sequential calls: {spread(ms)} ({load()})", flush=True)


async def appends(url: str, token: str, tool: str, rounds: int) -> None:
    async with client(url, token, mode="2026-07-28") as c:
        ms, written, said = [], [], []
        for i in range(rounds):
            note = {"kind": "note", "summary": f"Bench note {i}", "body": "Measuring."}
            written.append(await timed(c, "lifeline_append", note, said))
            ms.append(await timed(c, tool, {}))
        print(f"  lifeline_append, {rounds}: {spread(written)} ({load()}); it said: {said[0].splitlines()[0]}")
        print(f"  {tool} after each append: {spread(ms)} ({load()})", flush=True)


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
    parser.add_argument(
        "--repo", type=Path, default=None, help="An existing ledger's repository (copied, not written)."
    )
    parser.add_argument("--line", default=None, help="With --repo: the line to serve.")
    parser.add_argument("--warm", type=int, default=20, help="With --repo: sequential warm calls from one client.")
    parser.add_argument("--appends", type=int, default=5, help="With --repo: append-then-call rounds.")
    args = parser.parse_args()
    if (args.repo is None) != (args.line is None):
        parser.error("--repo and --line go together")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        if args.repo is None:
            make_repo(repo, args.entries)
        else:
            copy_ledger(args.repo, repo)
        served = () if args.line is None else ("--line", args.line)
        path = default_path(Workspace.open(str(repo)).location)
        tokens = [add_token(path, f"client-{i}").token for i in range(args.clients)]
        if args.repo is not None:
            writer = add_token(path, WRITER).token
            print(f"{args.tool} over HTTP on a copy of {args.repo.name}, line {args.line}:", flush=True)
            with http_server(repo, *served) as server:  # the cold cache build
                anyio.run(first_call, server.url, tokens[0], args.tool)
        with http_server(repo, *served) as server:
            if args.repo is not None:
                anyio.run(sequential, server.url, tokens[0], args.tool, args.warm)
            latencies, errors, wall = anyio.run(run, server.url, tokens, args.calls, args.tool)
            if args.repo is not None and args.appends:
                anyio.run(appends, server.url, writer, args.tool, args.appends)
    ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(ms, n=100, method="inclusive")
    source = f"{args.repo.name}" if args.repo is not None else f"a ledger of {args.entries} decisions"
    print(f"{args.clients} clients x {args.calls} calls of {args.tool} on {source}")
    print(f"calls: {len(ms)}, errors: {errors}, wall: {wall:.1f} s, throughput: {len(ms) / wall:.0f} calls/s")
    print(f"latency ms: p50 {q[49]:.0f}, p95 {q[94]:.0f}, p99 {q[98]:.0f}, max {ms[-1]:.0f}")
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
