"""Latency of `lifeline_context` over MCP on a 10,000-entry ledger.

Builds a ledger in a temporary repository (one batch commit through LineStore.append),
starts `python -m git_lifeline mcp` there, and drives it with the MCP Python client
over stdio, as an agent would:

* cold: the first call on a fresh repository (builds the cache under the git dir);
* new session: the first call of a second server process (the cache already exists);
* warm: median of 10 calls with nothing changed in between;
* after a write: median of 10 (lifeline_append by a direct agent, then lifeline_context),
  i.e. the state is derived again from the warm cache for a new head.

Usage: python bench/bench_mcp.py [N] [--keep]   (needs the [mcp] extra; N defaults to 10000;
--keep leaves the temporary repository in place)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MIX = [
    ("decision", 20),
    ("note", 22),
    ("feature", 18),
    ("open", 10),
    ("fix", 10),
    ("correction", 5),
    ("checkpoint", 5),
    ("incident", 3),
    ("milestone", 2),
    ("debt", 2),
    ("requirement", 2),
    ("release", 1),
]
WORDS = (
    "cache queue database schema api latency retry token budget index shard deploy rollback tenant "
    "invoice audit webhook cron backup migration replica failover quota search ranking"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build_entries(n: int, seed: int = 7) -> list:
    from git_lifeline.core.entry import new_entry

    rng = random.Random(seed)
    kinds = [k for k, w in MIX for _ in range(w)]
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    out, decisions, opens = [], [], []
    for i in range(n):
        kind = rng.choice(kinds)
        parents = [out[-1].id] if out else []
        body = " ".join(sentence(rng, rng.randint(6, 14)) for _ in range(rng.randint(1, 3)))
        if kind == "correction" and decisions:
            parents = [decisions.pop(rng.randrange(len(decisions)))]
        elif kind == "correction":
            kind = "note"
        if kind == "checkpoint":
            body = f"thread: t{rng.randint(1, 4)}\nnext:\n  - {sentence(rng, 5)}\ndone:\n  - {sentence(rng, 5)}\n"
        e = new_entry(
            kind=kind,
            summary=f"{sentence(rng, rng.randint(3, 7))[:-1]} #{i}",
            body=body,
            author="Bench <bench@example.com>",
            parents=parents,
            ts=t0 + timedelta(minutes=i),
        )
        out.append(e)
        if kind in ("decision", "correction"):
            decisions.append(e.id)
        if kind == "open":
            opens.append(e.id)
    return out


def make_repo(n: int) -> Path:
    from git_lifeline.app.ledger import commit_message
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.store import LineStore

    path = Path(tempfile.mkdtemp(prefix="lifeline-bench-"))
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "Bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@example.com"], check=True)
    (path / ".lifeline").mkdir()
    (path / ".lifeline" / "policy.json").write_text(json.dumps({"agents": {"bench": {"*": "direct"}}}))
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "policy"], check=True)
    entries = build_entries(n)
    t = time.perf_counter()
    LineStore(open_repo(str(path)), "main").append(entries, commit_message)
    print(f"built {n} entries in one commit: {time.perf_counter() - t:.2f} s  ({path})")
    return path


async def measure(path: Path) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_lifeline", "mcp"], cwd=str(path), env=env)
    async with Client(params, read_timeout_seconds=120) as c:

        async def ctx() -> float:
            t = time.perf_counter()
            r = await c.call_tool("lifeline_context", {})
            assert not r.is_error, r.content[0].text
            return (time.perf_counter() - t) * 1000

        cold = await ctx()
        warm = [await ctx() for _ in range(10)]
        after = []
        for i in range(10):
            r = await c.call_tool(
                "lifeline_append",
                {"kind": "note", "summary": f"bench note {i}", "body": "Measuring.", "agent": "bench"},
            )
            assert not r.is_error, r.content[0].text
            after.append(await ctx())
        size = len((await c.call_tool("lifeline_context", {})).content[0].text)
    async with Client(params, read_timeout_seconds=120) as c:  # a new agent session, cache on disk
        t = time.perf_counter()
        r = await c.call_tool("lifeline_context", {})
        assert not r.is_error
        session = (time.perf_counter() - t) * 1000
    return {
        "session_ms": session,
        "cold_ms": cold,
        "warm_median_ms": statistics.median(warm),
        "warm_all_ms": warm,
        "after_write_median_ms": statistics.median(after),
        "after_write_all_ms": after,
        "chars": size,
    }


def main() -> None:
    import anyio

    args = [a for a in sys.argv[1:] if a != "--keep"]
    n = int(args[0]) if args else 10000
    path = make_repo(n)
    try:
        result = anyio.run(measure, path)
    finally:
        if "--keep" not in sys.argv:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
    print(f"lifeline_context over MCP, {n} entries, default budget ({result['chars']} chars returned):")
    print(f"  cold (first call, builds the cache): {result['cold_ms']:.1f} ms")
    print(f"  new session (first call, cache on disk): {result['session_ms']:.1f} ms")
    print(
        f"  warm, median of 10:                  {result['warm_median_ms']:.1f} ms  "
        f"(min {min(result['warm_all_ms']):.1f}, max {max(result['warm_all_ms']):.1f})"
    )
    print(
        f"  after a direct append, median of 10: {result['after_write_median_ms']:.1f} ms  "
        f"(min {min(result['after_write_all_ms']):.1f}, max {max(result['after_write_all_ms']):.1f})"
    )


if __name__ == "__main__":
    main()
