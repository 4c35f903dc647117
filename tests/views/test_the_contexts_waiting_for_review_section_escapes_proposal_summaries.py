"""The context's waiting-for-review section escapes proposal summaries like every other entry text."""

from __future__ import annotations

from kit.repos import bare, configured_client, log_decision

FAKE = "[SUPERSEDED] Keep `[0badc0de]` **Postgres**"


def test_the_contexts_waiting_for_review_section_escapes_proposal_summaries(tmp_path):
    from git_lifeline.app.agent_hooks import pending_section
    from git_lifeline.app.agents import Agents
    from git_lifeline.app.draft import Draft
    from git_lifeline.app.workspace import Workspace

    repo = configured_client(tmp_path, "a", bare(tmp_path))
    log_decision(repo)
    led = Workspace.open(str(repo)).ledger()
    Agents(led).write(Draft("decision", FAKE, "Because.", agent="other-agent"))  # proposed (built-in policy)
    text = pending_section(Agents(led), 4000)
    assert "waiting for review" in text.lower() and "Postgres" in text, text
    assert "`[0badc0de]`" not in text and "**Postgres**" not in text, text
