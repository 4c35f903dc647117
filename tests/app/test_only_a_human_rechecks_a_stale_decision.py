"""An agent cannot silence "⚠ code changed since" (issue 14, item 6).

A decision whose code changed is stale until someone re-checks it: an entry naming it.
An agent's direct checkpoint naming the decision's id as its thread counted as that
re-check, so an agent working on the code silenced the very warning meant for the
humans. Now only a human's entry re-checks a decision, or an agent's entry a human
approved through review (core/truth.py `Fold.rechecked`).
"""

from __future__ import annotations

import pytest
from kit.repos import open_ledger
from kit.run import git

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import CheckpointDraft, Draft, Writer
from git_lifeline.app.workspace import Workspace

AGENT = dict(agent="claude-code", provider="anthropic", model="claude")
RECHECK = "re-check: who silences a stale mark (agent direct checkpoint, note, pending, rejected; human, approved)"


def code_commit(repo, path: str, when: str) -> None:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text((f.read_text() if f.exists() else "") + f"change at {when}\n")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"edit {path}", env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


@pytest.fixture
def stale(repo):
    """A decision about src/db/ whose code changed after it was made."""
    code_commit(repo, "src/db/schema.sql", "2026-01-01T10:00:00Z")
    led = Workspace.open(str(repo)).ledger()
    d = led.log(
        Draft(
            kind="decision",
            summary="Database: PostgreSQL",
            body="paths: src/db/**\n\nACID for audit.",
            ts="2026-01-02T00:00:00Z",
        )
    ).entry
    code_commit(repo, "src/db/schema.sql", "2026-01-05T00:00:00Z")
    assert [s.decision for s in led.stale()] == [d.id]
    return led, d


def marked(led, d) -> bool:
    fresh = Workspace.open(str(led.gr.workdir)).ledger()
    return d.id in {s.decision for s in fresh.stale()} and "⚠ code changed since" in fresh.context().text


def test_an_agents_direct_checkpoint_on_the_decisions_thread_does_not_silence_the_mark(stale, record_counts):
    led, d = stale
    planned = led.plan_checkpoint(
        CheckpointDraft(d.id, {"next": ["migrate the invoices table"]}, writer=Writer(**AGENT))
    )
    assert d.id in planned.entry.parents  # the checkpoint names the decision, as the issue found
    led.append([planned.entry])  # what a direct write (policy: direct) does
    assert marked(led, d), "an agent's checkpoint re-checked a stale decision"
    record_counts(RECHECK, tried=1, held=1, lost=0)


def test_an_agents_direct_note_naming_the_decision_does_not_silence_the_mark(stale, record_counts):
    led, d = stale
    led.append(
        [
            led.plan_entry(
                Draft(kind="note", summary="Looked at the schema", body="Still fine.", parents=[d.id], **AGENT)
            )
        ]
    )
    assert marked(led, d)
    record_counts(RECHECK, tried=1, held=1, lost=0)


def test_a_humans_note_naming_the_decision_re_checks_it(stale, record_counts):
    led, d = stale
    led.log(Draft(kind="note", summary="Re-checked the database decision", body="Still holds.", parents=[d.id]))
    assert not marked(led, d)
    record_counts(RECHECK, tried=1, held=1, lost=0)


def test_an_agents_entry_approved_through_review_re_checks_it(stale, record_counts):
    led, d = stale
    agents = Agents(led)
    rec = agents.propose(
        Draft(
            kind="note",
            summary="Re-checked the schema against the decision",
            body="Still holds.",
            parents=[d.id],
            **AGENT,
        )
    )
    assert marked(led, d), "a pending proposal is not a re-check"
    [outcome] = agents.approve([rec.short])
    assert outcome.ok, outcome
    assert not marked(led, d)
    record_counts(RECHECK, tried=2, held=2, lost=0)  # pending, then approved


def test_a_rejected_proposal_does_not_re_check_it(stale, record_counts):
    led, d = stale
    agents = Agents(led)
    rec = agents.propose(Draft(kind="note", summary="Re-checked the schema", body="Trust me.", parents=[d.id], **AGENT))
    assert agents.reject([rec.short], why="not looked at")[0].ok
    assert marked(led, d)
    record_counts(RECHECK, tried=1, held=1, lost=0)


def test_a_human_re_check_then_new_code_marks_it_again_even_after_agent_entries(stale):
    led, d = stale
    led.log(Draft(kind="note", summary="Re-checked", body="Still holds.", parents=[d.id], ts="2026-01-06T00:00:00Z"))
    code_commit(led.gr.workdir, "src/db/schema.sql", "2026-01-07T00:00:00Z")
    led.append([led.plan_entry(Draft(kind="note", summary="Agent looked", body="Fine.", parents=[d.id], **AGENT))])
    assert marked(led, d)
    assert open_ledger(led.gr.workdir).state().fold.agent_touched
