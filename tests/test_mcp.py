"""`git lifeline mcp` driven by the real MCP Python client over stdio.

Each test spawns `python -m git_lifeline mcp` in a temporary repository and talks to
it with the SDK's own client, with bounded timeouts.
"""

from __future__ import annotations

import contextlib
import os
import sys

import anyio
from mcp import Client  # the [mcp] extra; the test extra installs it
from mcp.client.stdio import StdioServerParameters
from review_support import cli, cli_process, commit_policy, git, hermetic, make_repo, ref_value, repo, snapshot  # noqa: F401

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

SEED_TOOLS = {
    "lifeline_context": {"query", "thread", "budget", "line"},
    "lifeline_resume": {"thread", "line"},
    "lifeline_brief": {"task_or_thread", "budget", "line"},
    "lifeline_recall": {"query", "k", "line"},
    "lifeline_append": {"kind", "summary", "body", "agent", "provider", "model", "thread", "line"},
    "lifeline_recontextualize": {"parent_id", "summary", "body", "agent", "provider", "model", "line"},
    "lifeline_checkpoint": {"thread", "next", "done", "blocked", "tried", "goal", "summary", "agent", "provider",
                            "model", "line"},
}
TRUSTING = {"default": "propose", "agents": {"trusted": {"*": "direct"}, "blocked": {"*": "deny"}}}


@contextlib.asynccontextmanager
async def server(cwd, *args):
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_lifeline", "mcp", *args],
                                   cwd=str(cwd), env=dict(os.environ))
    async with Client(params, read_timeout_seconds=30) as client:
        yield client


def drive(fn):
    """Run one async scenario with a hard time limit."""
    async def bounded():
        with anyio.fail_after(90):
            await fn()
    anyio.run(bounded)


async def call(client, tool, **args):
    result = await client.call_tool(tool, args)
    return result.is_error, result.content[0].text


async def ok(client, tool, **args) -> str:
    error, text = await call(client, tool, **args)
    assert not error, f"{tool}{args} failed: {text}"
    return text


def test_lists_the_seed_tools_serves_the_context_resource_and_every_line(repo):
    commit_policy(repo, TRUSTING)
    cli(repo, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "Auditors need ACID.")
    decision = Workspace.open(str(repo)).ledger().entries()[0]

    async def scenario():
        async with server(repo) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == set(SEED_TOOLS) | {"lifeline_show", "lifeline_pending"}
            for name, params in SEED_TOOLS.items():
                assert params <= set(tools[name].input_schema["properties"]), name
            assert tools["lifeline_recall"].input_schema["required"] == ["query"]
            assert "lifeline_context" in c.instructions and "lifeline_checkpoint" in c.instructions
            uris = [str(r.uri) for r in (await c.list_resources()).resources]
            assert uris == ["lifeline://project/context"]
            text = (await c.read_resource("lifeline://project/context")).contents[0].text
            assert "Database: PostgreSQL" in text and decision.short in text
            text = await ok(c, "lifeline_context", query="which database", budget=2000)
            assert "Relevant to" in text and len(text) <= 2000
            # one server, every line of the repository
            await ok(c, "lifeline_append", kind="incident", summary="Disk full on db-1", body="Logs not rotated.",
                     agent="trusted", line="ops")
            ops = await ok(c, "lifeline_context", line="ops")
            assert "Disk full" in ops and "PostgreSQL" not in ops
            assert "Disk full" not in await ok(c, "lifeline_context")
            # a human's write from the CLI while the server runs is seen on the next call
            cli(repo, "log", "--kind", "decision", "--summary", "Queue: RabbitMQ", "--body", "Ops know it.")
            assert "Queue: RabbitMQ" in await ok(c, "lifeline_context")
    drive(scenario)
    assert ref_value(repo, "refs/lifeline/ops") and ref_value(repo, "refs/lifeline-review/ops")


def test_append_is_routed_by_each_policy_mode_and_the_policy_is_read_per_call(repo):
    commit_policy(repo, TRUSTING)

    async def scenario():
        async with server(repo) as c:
            text = await ok(c, "lifeline_append", kind="decision", summary="Queue: SQS", body="Managed, cheap.",
                            agent="trusted", provider="anthropic", model="opus")
            assert "recorded directly" in text and "agents.trusted.*" in text
            text = await ok(c, "lifeline_append", kind="decision", summary="Cache: Redis", body="Sessions.",
                            agent="codex")
            assert "proposal" in text and "approve" in text
            line_before, trail_before = ref_value(repo, "refs/lifeline/main"), ref_value(repo, "refs/lifeline-review/main")
            error, text = await call(c, "lifeline_append", kind="note", summary="n", body="why", agent="blocked")
            assert error and "denied by policy" in text and "agents.blocked.*" in text
            assert (ref_value(repo, "refs/lifeline/main"), ref_value(repo, "refs/lifeline-review/main")) == \
                   (line_before, trail_before)
            text = await ok(c, "lifeline_checkpoint", next=["wire the queue"], agent="codex")
            assert "recorded directly" in text and "kinds.checkpoint" in text
            commit_policy(repo, {"agents": {"blocked": {"*": "direct"}}})   # a human changes the policy
            text = await ok(c, "lifeline_append", kind="note", summary="n", body="why", agent="blocked")
            assert "recorded directly" in text
    drive(scenario)
    led = Workspace.open(str(repo)).ledger()
    assert {e.summary for e in led.entries()} >= {"Queue: SQS", "n"}
    assert "Cache: Redis" not in {e.summary for e in led.entries()}
    assert [p.content["summary"] for p in Agents(led).proposals()] == ["Cache: Redis"]
    assert [row.record.doc["agent"] for row in Agents(led).audit()] == ["trusted", "codex", "blocked"]


def test_tool_errors_are_mcp_errors_and_the_server_keeps_serving(repo):
    async def scenario():
        async with server(repo) as c:
            cases = [
                ("lifeline_append", dict(kind="bogus", summary="s", body="b"), "kind must be one of 'bootstrap'"),
                ("lifeline_append", dict(kind="decision", summary="s", body="  "), "needs its why"),
                ("lifeline_append", dict(kind="decision", summary="two\nlines", body="b"), "line break"),
                ("lifeline_recontextualize", dict(parent_id="deadbeef", summary="s", body="b"), "no entry 'deadbeef'"),
                ("lifeline_context", dict(line="../etc"), "invalid line name"),
                ("lifeline_context", dict(budget=5), "nothing fits"),
                ("lifeline_context", dict(thread="nowhere"), "unknown thread"),
                ("lifeline_recall", dict(query="x", k=0), "at least 1"),
                ("lifeline_checkpoint", dict(), "needs at least one"),
                ("lifeline_brief", dict(task_or_thread="  "), "empty"),
                ("lifeline_append", dict(kind="note", summary="s", body="b", agent="human"), "agent 'human'"),
            ]
            for tool, args, message in cases:
                error, text = await call(c, tool, **args)
                assert error and message in text, (tool, args, text)
                assert "Traceback" not in text
            commit_policy(repo, {"default": "direct", "kinds": {"decison": "direct"}})
            error, text = await call(c, "lifeline_append", kind="decision", summary="s", body="b")
            assert error and "kinds.decison" in text, text
            assert ref_value(repo, "refs/lifeline/main") is None, "an invalid policy must never fall back to direct"
            assert "lifeline://project/context" in [str(r.uri) for r in (await c.list_resources()).resources]
            await ok(c, "lifeline_resume")
    drive(scenario)


def test_recall_checkpoint_recontextualize_and_brief_over_mcp(repo):
    commit_policy(repo, TRUSTING)

    async def scenario():
        async with server(repo) as c:
            who = dict(agent="trusted", provider="anthropic", model="opus")
            text = await ok(c, "lifeline_append", kind="decision", summary="Database: MongoDB",
                            body="Flexible schema while the model settles.", **who)
            mongo = text.split("id=")[1][:12]
            text = await ok(c, "lifeline_recontextualize", parent_id=mongo, summary="Database: PostgreSQL",
                            body="Auditors need ACID transactions.", **who)
            assert f"supersedes {mongo}" in text
            context = await ok(c, "lifeline_context")
            decisions = context.split("## Decisions in force")[1].split("\n## ")[0]
            assert "Database: PostgreSQL" in decisions and "MongoDB" not in decisions
            recall = await ok(c, "lifeline_recall", query="database mongodb")
            assert "[SUPERSEDED] Database: MongoDB" in recall
            assert "abstained" in await ok(c, "lifeline_recall", query="kubernetes helm charts")
            first = await ok(c, "lifeline_checkpoint", thread="storage", next=["migrate the data"],
                             done=["chose PostgreSQL"], **who)
            assert "recorded directly" in first
            again = await ok(c, "lifeline_checkpoint", thread="storage", next=["migrate the data"],
                             done=["chose PostgreSQL"], **who)
            assert again.startswith("unchanged")
            later = await ok(c, "lifeline_checkpoint", thread="storage", next=["verify row counts"], **who)
            assert "replaces checkpoint" in later
            resume = await ok(c, "lifeline_resume", thread="storage")
            assert "next: verify row counts" in resume and "migrate the data" not in resume
            brief = await ok(c, "lifeline_brief", task_or_thread="storage", budget=3000)
            assert "thread storage" in brief and "verify row counts" in brief and len(brief) <= 3000
            task = await ok(c, "lifeline_brief", task_or_thread="which database")
            assert "Relevant to" in task
    drive(scenario)


def test_server_in_a_linked_worktree_never_writes_outside_the_git_dir(tmp_path):
    main = make_repo(tmp_path / "main")
    commit_policy(main, TRUSTING)
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt), "-b", "feature")
    before = {"main": snapshot(main), "wt": snapshot(wt)}

    async def scenario():
        async with server(wt, "--line", "feature") as c:   # --line: the line served by default
            await ok(c, "lifeline_append", kind="decision", summary="Direct", body="Trusted agent.", agent="trusted")
            await ok(c, "lifeline_append", kind="decision", summary="Proposed", body="Default agent.")
            await ok(c, "lifeline_checkpoint", next=["keep going"])
            await ok(c, "lifeline_context", query="direct")
    drive(scenario)
    assert {"main": snapshot(main), "wt": snapshot(wt)} == before, "the server wrote into a work tree"
    assert not (wt / "LIFELINE.md").exists() and not (wt / "LIFELINE.feature.md").exists()
    # The refs are shared by every worktree: the main checkout sees what the agent wrote.
    assert {e.summary for e in Workspace.open(str(main)).ledger("feature").entries()} >= {"Direct"}
    assert ref_value(main, "refs/lifeline-review/feature")


def test_missing_sdk_is_a_clear_message_not_a_traceback(repo, tmp_path):
    fake = tmp_path / "fake"
    (fake / "mcp").mkdir(parents=True)
    (fake / "mcp" / "__init__.py").write_text("")  # an SDK without mcp.server.mcpserver (like 1.x)
    r = cli_process(repo, "mcp", env={"PYTHONPATH": str(fake) + os.pathsep + os.environ["PYTHONPATH"]})
    assert r.code == 2, r
    assert "git-lifeline[mcp]" in r.err and "Traceback" not in r.err


def test_mcp_outside_a_repository_exits_2_before_serving(tmp_path):
    r = cli_process(tmp_path, "mcp")
    assert r.code == 2 and "not a git repository" in r.err, r


def test_a_line_rewound_by_hand_is_reported_after_the_tool_result(repo):
    for summary in ("Database: PostgreSQL", "Queue: RabbitMQ"):
        cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", "Why.")

    async def scenario():
        async with server(repo) as c:
            assert "Queue: RabbitMQ" in await ok(c, "lifeline_context")   # the cache holds both
            git(repo, "update-ref", "refs/lifeline/main", "refs/lifeline/main~1")
            result = await c.call_tool("lifeline_context", {})
            texts = [block.text for block in result.content]
            assert not result.is_error and len(texts) == 2, texts
            assert "PostgreSQL" in texts[0] and "RabbitMQ" not in texts[0]
            assert texts[1].startswith("warning: the line lost entries since the cache was built"), texts
            again = await c.call_tool("lifeline_context", {})
            assert len(again.content) == 1, "a warning is reported once"
    drive(scenario)
