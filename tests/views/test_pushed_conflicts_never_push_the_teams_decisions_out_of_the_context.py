"""Issue 28, items 7 and 9: decisions anyone can push on one `subject:` must not take the
context from the team's decisions, nor cost the cube of their number.

Before: each conflict note listed every other id (150 decisions: 149 ids under each), every
decision in conflict was named first, and the default context named none of the team's 20
decisions; grouping them cost O(N³) (4.7 s at 1,000, about an hour at 5,000)."""

from __future__ import annotations

import re

from kit.entries import make_entry

from git_lifeline.core import truth
from git_lifeline.views import context as ctx

NOW = "2026-06-01T00:00:00.000000"
DEFAULT_BUDGET = 16_000  # characters: the order of what `context` gives by default


def state_of(entries: list) -> truth.State:
    return truth.State(truth.fold(entries), {e.id: e for e in entries}.get, now=NOW)


def team_and_pushed(pushed: int) -> tuple:
    team = [make_entry(i, summary=f"Team decision {i}", body=f"Because {i}.") for i in range(20)]
    noise = [make_entry(100 + i, summary=f"Pushed {i}", body=f"subject: x\n\nJunk {i}.") for i in range(pushed)]
    return team, noise


def context_of(entries: list, budget: int) -> str:
    st = state_of(entries)
    inp = ctx.ContextInput(state=st, line="main", head_commit=None, conflicts=st.conflicting())
    return ctx.assemble(inp, budget).text


def test_150_pushed_decisions_on_one_subject_leave_every_team_decision_named():
    team, noise = team_and_pushed(150)
    text = context_of(team + noise, DEFAULT_BUDGET)
    named = [e for e in team if f"`[{e.short}]`" in text]
    assert len(named) == len(team), f"{len(named)} of {len(team)} team decisions named"


def test_a_conflict_note_names_a_few_rivals_and_counts_the_rest():
    team, noise = team_and_pushed(150)
    text = context_of(team + noise, DEFAULT_BUDGET)
    notes = [line for line in text.splitlines() if "⚠ conflicts with" in line]
    assert notes, "no conflict note shown"
    for note in notes:
        assert len(re.findall(r"\[[0-9a-f]{8}\]", note)) <= 3, note
        assert " and 146 more on 'x'" in note, note


def test_5000_decisions_on_one_subject_are_grouped_and_noted_in_near_linear_time():
    # cubic grouping could not finish this within a test's normal time (about an hour)
    _, noise = team_and_pushed(5000)
    st = state_of(noise)
    rivals = st.conflicting()
    assert len(st.conflicts) == 1 and len(rivals) == 5000
    assert rivals[noise[0].id].count == 4999 and len(rivals[noise[0].id].first(3)) == 3
    text = context_of(noise, DEFAULT_BUDGET)
    assert len(text) <= DEFAULT_BUDGET and " and 4996 more on 'x'" in text
