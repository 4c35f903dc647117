"""What the agent reads says where each item came from (issue 28, trust tiers): written by a
human, an agent's write a human approved, an agent's direct write, imported. One ledger holds
all four; the context (normal and warm, byte-identical), the SessionStart hook, the MCP answers
and every JSON output give each item its tier, and an agent's direct write is never framed as
a human's: its tag says an agent wrote it, and the legend says that is an unreviewed claim, not
the project's instruction."""

from __future__ import annotations

import json
import os

from kit.home import hermetic  # noqa: F401
from kit.repos import commit_policy, repo_with_a_commit  # noqa: F401
from kit.run import Via, cli
from kit.tiers import ADR, AGENT, APPROVED, TIERS, four_tiers

from git_lifeline.app.agent_hooks import session_start
from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.entry_view import view_entry
from git_lifeline.app.warm_context import warm_context
from git_lifeline.app.workspace import Workspace
from git_lifeline.mcp.text import recall_answer, resume_text, show_answer

TAGS = {"human": "", "approved": "`approved`", "agent": "`agent`", "imported": "`imported`"}
LEGEND = "`agent`: an agent's unreviewed claim, not the project's instruction"


def line_of(text: str, summary: str) -> str:
    (line,) = [row for row in text.splitlines() if summary in row]
    return line


def assert_tiers_shown(text: str) -> None:
    for summary, tier in TIERS.items():
        row = line_of(text, summary)
        for other in TAGS.values():
            if other:
                assert (other in row) == (other == TAGS[tier]), (summary, row)
    assert "`agent`" in line_of(text, "**rollout**"), text  # the agent's checkpoint, in Resume
    assert LEGEND in text, text


def test_every_face_gives_each_item_its_trust_tier(repo):
    ids = four_tiers(repo)
    normal = cli(repo, "context", via=Via.THIS_PROCESS, expect=0).out
    assert_tiers_shown(normal)
    warm = warm_context(None, None, None, "generic", str(repo), dict(os.environ))
    assert warm == normal, "the warm path must give the normal path's bytes, tags included"
    assert_tiers_shown(session_start({"cwd": str(repo), "session_id": "s1"}))
    led = Workspace.open(str(repo)).ledger()
    assert_tiers_shown(led.context().text)  # what lifeline_context returns
    assert "`agent`" in line_of(resume_text(led, ""), "**rollout**")
    for summary, tier in TIERS.items():
        text, data = show_answer(view_entry(led, ids[summary]))
        assert data["trust"] == tier and "- trust: " in text, (summary, data["trust"])
        shown = json.loads(cli(repo, "show", ids[summary], "--json", expect=0).out)
        assert shown["trust"] == tier, (summary, shown)
    listed = json.loads(cli(repo, "list", "--json", "--kind", "decision", expect=0).out)
    assert {e["summary"]: e["trust"] for e in listed} == TIERS
    text, data = recall_answer(led, "audit log queue", 5)
    hits = {h["summary"]: h["trust"] for h in data["hits"] + data.get("nearest", [])}
    assert hits.get(AGENT) == "agent", data
    assert "trust=agent" in line_of(text, AGENT), text
    recalled = json.loads(cli(repo, "recall", "audit log queue", "--json", expect=0).out)
    assert all("trust" in h for h in recalled["hits"] + recalled.get("nearest", []))


def test_an_agents_direct_write_is_never_shown_as_a_humans(repo):
    four_tiers(repo)
    led = Workspace.open(str(repo)).ledger()
    for budget in (600, 1200, 4000, 16000):
        text = led.context(budget=budget).text
        for row in text.splitlines():
            if AGENT in row:
                assert "`agent`" in row, (budget, row)
        if AGENT in text:
            assert LEGEND in text, budget
        assert len(text) <= budget


def test_a_lifeline_context_import_reads_imported_whoever_wrote_it_at_its_source(repo):
    from git_lifeline.core.entry import Entry
    from git_lifeline.core.seed import render_seed_markdown

    written = [
        Entry.new(kind="decision", summary="Db: Postgres", author="A <a@example.com>", body="ACID."),
        Entry.new(kind="note", summary="Bot note", author="A <a@example.com>", body="x", agent="bot"),
    ]
    source = repo.parent / "LIFELINE.md"
    source.write_text(render_seed_markdown(written, "main"))
    cli(repo, "import", "--from", str(source), expect=0)
    listed = json.loads(cli(repo, "list", "--json", expect=0).out)
    assert listed and {e["trust"] for e in listed} == {"imported"}, {e["agent"]: e["trust"] for e in listed}
    cli(repo, "log", "--kind", "note", "--summary", "Written here", "--body", "After the import.", expect=0)
    after = {e["summary"]: e["trust"] for e in json.loads(cli(repo, "list", "--json", expect=0).out)}
    assert after["Written here"] == "human" and list(after.values()).count("imported") == len(listed)


def test_what_was_approved_or_imported_after_a_read_is_seen_by_the_next_read(repo):
    """The tiers are kept per (ledger head, trail head): a later approval, direct write or
    import is read from what the heads gained since, never missed."""
    four_tiers(repo)
    led = Workspace.open(str(repo)).ledger()
    assert "`agent`" in line_of(led.context().text, AGENT)
    agents = Agents(led)
    later = agents.write(Draft("decision", "Search: use the database's own index", "One less service.", agent="codex"))
    agents.write(Draft("note", "Bot: measured the index", "It is fast enough.", agent="bot"))
    text = led.context().text
    assert "`agent`" in line_of(text, "Bot: measured the index"), text
    cli(repo, "approve", later.proposal.short, via=Via.THIS_PROCESS, expect=0)
    second = repo.parent / "adr2"
    second.mkdir()
    (second / "0002-use-sqlite-for-tests.md").write_text(
        ADR.replace("1. Deploy with docker-compose", "2. Use SQLite for tests")
    )
    cli(repo, "import", "--from", str(second), expect=0)
    text = Workspace.open(str(repo)).ledger().context().text
    assert "`approved`" in line_of(text, "Search: use the database's own index"), text
    assert "`approved`" in line_of(text, APPROVED) and "`imported`" in line_of(text, "Use SQLite for tests"), text
    assert (
        warm_context(None, None, None, "generic", str(repo), dict(os.environ))
        == cli(repo, "context", via=Via.THIS_PROCESS).out
    )
