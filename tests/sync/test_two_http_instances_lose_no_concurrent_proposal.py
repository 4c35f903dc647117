"""Scaling out over git: two `mcp --http` instances, each in its own clone of one bare
remote, take proposals at once; the remote (the only shared state) ends up with all of them,
and each instance serves what the other wrote once it refreshed."""

from __future__ import annotations

import anyio
from kit.home import gitenv  # noqa: F401
from kit.mcp_client import drive
from kit.repos import init_repo, make_clone  # noqa: F401
from kit.run import cli, git
from kit.servers import client, http_server

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

PROPOSALS = 200
CLIENTS_PER_INSTANCE = 10


def test_two_instances_writing_at_once_publish_every_proposal_to_the_remote(gitenv, tmp_path):
    remote = init_repo(tmp_path / "team.git", "--bare")
    seed = make_clone(str(remote), tmp_path / "seed", code=True)
    git(seed, "push", "-q", "origin", "HEAD:main")
    cli(seed, "log", "--kind", "decision", "--summary", "Keep the ledger in git", "--body", "One remote.", expect=0)
    cli(seed, "push", expect=0)
    clones = [make_clone(str(remote), tmp_path / name) for name in ("a", "b")]
    tokens = [
        cli(c, "mcp", "token", "add", f"bot-{i}", expect=0).out.strip().splitlines()[-1] for i, c in enumerate(clones)
    ]
    for c in clones:
        cli(c, "pull", expect=0)
    per_client = PROPOSALS // (len(clones) * CLIENTS_PER_INSTANCE)
    with http_server(clones[0], "--refresh", "1") as one, http_server(clones[1], "--refresh", "1") as two:

        async def propose(url: str, token: str, who: int) -> None:
            async with client(url, token, mode="2026-07-28") as c:
                for n in range(per_client):
                    out = await c.call_tool(
                        "lifeline_append",
                        {"kind": "note", "summary": f"note {who}-{n}", "body": f"Written by client {who}, call {n}."},
                    )
                    assert not out.is_error, out.content[0].text
                    assert "warning" not in " ".join(b.text for b in out.content), out.content

        async def scenario() -> None:
            async with anyio.create_task_group() as tg:
                for i in range(CLIENTS_PER_INSTANCE * 2):
                    server, token = ((one, tokens[0]), (two, tokens[1]))[i % 2]
                    tg.start_soon(propose, server.url, token, i)

        drive(scenario, seconds=600)
        waiting = Agents(Workspace.open(str(remote)).ledger()).proposals()
        assert len(waiting) == PROPOSALS
        assert {p.content.agent for p in waiting} == {"bot-0", "bot-1"}

        async def read_back() -> None:
            async with client(one.url, tokens[0]) as c:
                await anyio.sleep(1.5)  # past --refresh: the next call pulls first
                pending = await c.call_tool("lifeline_pending", {})
                assert f"{PROPOSALS} proposal(s) wait" in pending.content[0].text

        drive(read_back, seconds=60)
