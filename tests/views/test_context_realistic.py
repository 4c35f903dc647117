"""The current truth at every budget, on a realistic ledger (tests/kit/realistic_ledger.py).

152 entries: 57 decisions in force (10 of them corrections that carry the truth of a
change, one pinned, two in conflict), 15 open items, 6 threads with checkpoints,
incidents with their lesson, requirements, debt, and the notes around them.
"""

from __future__ import annotations

import re

import pytest
from kit.realistic_ledger import build
from kit.repos import init_repo, open_ledger

from git_lifeline.app.context_run import DEFAULT_BUDGET
from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.views.tokens import estimate

ANCHOR = re.compile(r"\[([0-9a-f]{8})\]")
ITEM_ANCHOR = re.compile(r"^- (?:\*\*.*?\*\* )?`\[([0-9a-f]{8})\]`")
MARKER = re.compile(r"_\[… (\d+) (.+?) omitted for the budget: ([^\]]*)\]_")


@pytest.fixture(scope="module")
def tally(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("tally") / "repo")
    entries, facts = build()
    ledger = open_ledger(repo)
    ledger.append(entries)
    return ledger, facts


def sections(text: str) -> dict:
    out = {}
    for block in re.split(r"\n(?=## )", text):
        if block.startswith("## "):
            out[re.sub(r" \(\d+\)$", "", block.split("\n", 1)[0][3:])] = block
    return out


def items(block: str) -> dict:
    """anchor -> the lines under it, for each item of a section."""
    out: dict = {}
    last = None
    for line in block.splitlines()[1:]:
        m = ITEM_ANCHOR.match(line)
        if m:
            last = m.group(1)
            out[last] = []
        elif last and line.startswith("  "):
            out[last].append(line)
    return out


def has_why(lines: list) -> bool:
    return any(line.startswith("  > ") for line in lines)


def test_the_ledger_is_the_one_the_tests_describe(tally):
    ledger, facts = tally
    st = ledger.state()
    assert st.count >= 150
    assert len(st.decision_ids) == 57 and len(st.open_ids) == 15 and len(st.checkpoint_ids) == 6
    assert set(facts.corrections) <= set(st.decision_ids) and not set(facts.superseded) & set(st.decision_ids)
    assert st.conflicts and st.pinned == [facts.pinned]


@pytest.mark.parametrize("budget", [None, 8000])  # the default, and the old default of 8,000 characters
def test_default_budget_names_every_decision_and_every_correction_keeps_its_why(tally, budget):
    ledger, facts = tally
    text = ledger.context(budget=budget).text
    assert len(text) <= (budget or DEFAULT_BUDGET)
    decided = items(sections(text)["Decisions in force"])
    st = ledger.state()
    assert {i[:8] for i in st.decision_ids} == set(decided), "a decision in force is not named"
    missing_why = [c[:8] for c in facts.corrections if not has_why(decided[c[:8]])]
    assert missing_why == [], "a correction that carries the truth lost its why"
    assert "decision(s) omitted" not in text


def test_open_items_and_checkpoints_degrade_instead_of_starving_the_decisions(tally):
    ledger, _ = tally
    secs = sections(ledger.context(budget=8000).text)  # a budget where the decisions' why competes
    assert len(items(secs["Open"])) == 15
    resume = items(secs["Resume"])
    assert len(resume) == 6
    assert sum(1 for lines in resume.values() if lines) <= 2, "checkpoints kept in full before the decisions' why"
    assert all(
        " next: " in line
        for line in secs["Resume"].splitlines()[1:]
        if line.startswith("- ") and not resume[ITEM_ANCHOR.match(line).group(1)]
    )


def test_an_open_item_worked_on_by_a_thread_shows_its_next_step_when_room_allows(tally):
    ledger, _ = tally
    st = ledger.state()
    worked = [o for o in st.open_ids if o in st.checkpoint_ids]
    assert len(worked) == 1
    line = next(ln for ln in ledger.context(budget=12000).text.splitlines() if f"`[{worked[0][:8]}]`" in ln)
    assert line.endswith(" — next: tune the date window"), line
    compact = next(ln for ln in ledger.context(budget=4000).text.splitlines() if f"`[{worked[0][:8]}]`" in ln)
    assert " — next: " not in compact


def test_at_4000_chars_everything_fits_and_every_omission_is_named(tally):
    ledger, facts = tally
    text = ledger.context(budget=4000).text
    assert len(text) <= 4000
    st = ledger.state()
    secs = sections(text)
    decided = items(secs["Decisions in force"])
    marker = MARKER.search(secs["Decisions in force"])
    assert marker and "`git lifeline show <id>`" in marker.group(0)
    assert len(decided) + int(marker.group(1)) == len(st.decision_ids)
    named = set(marker.group(3).split("; ", 1)[0].replace(" ", "").split("+")[0].strip(",").split(","))
    assert named and not named & set(decided) and named <= {i[:8] for i in st.decision_ids}
    assert facts.pinned[:8] in decided
    counted = sum(int(m.group(1)) for m in MARKER.finditer(text))
    footer = re.search(r"· (\d+) item\(s\) omitted for the budget", text.splitlines()[-1])
    assert footer and int(footer.group(1)) >= counted  # and sections left out whole are counted there


def test_a_budget_at_every_size_is_a_hard_limit_and_anchors_are_real(tally):
    ledger, _ = tally
    ids = {e.id[:8] for e in ledger.entries()}
    full = ledger.context(budget=10**6).text
    for budget in list(range(0, 401)) + list(range(401, len(full) + 60, 23)):
        text = ledger.context(budget=budget).text
        assert len(text) <= budget, budget
        if text:
            assert text.endswith("_\n") and " · latest " in text.splitlines()[-1], budget
            assert set(ANCHOR.findall(text)) <= ids, budget


def test_a_token_budget_at_every_size_is_a_hard_limit(tally):
    ledger, _ = tally
    for budget in list(range(0, 200)) + list(range(200, 5000, 41)):
        text = ledger.context(budget_tokens=budget).text
        assert estimate(text) <= budget, budget


def test_more_budget_never_names_fewer_decisions(tally):
    ledger, _ = tally
    before = 0
    for budget in range(1000, 20000, 500):
        named = len(items(sections(ledger.context(budget=budget).text).get("Decisions in force", "")))
        assert named >= before, budget
        before = named


def test_recent_does_not_repeat_what_is_shown_above_it(tally):
    ledger, _ = tally
    text = ledger.context(budget=10**6).text
    head, recent = text.split("## Recent", 1)
    assert set(ANCHOR.findall(recent)) and not set(ANCHOR.findall(recent)) & set(ANCHOR.findall(head))


def test_incidents_with_their_lesson_requirements_and_debt_get_room_when_the_budget_allows(tally):
    ledger, facts = tally
    secs = sections(ledger.context(budget=16000).text)
    incidents = items(secs["Incidents and their lessons"])
    assert set(incidents) == {i[:8] for i in facts.incidents}
    assert all(any(line.startswith("  > Lesson: ") for line in lines) for lines in incidents.values())
    assert set(items(secs["Requirements"])) == {i[:8] for i in facts.requirements}
    assert set(items(secs["Debt"])) == {i[:8] for i in facts.debt}
    tight = sections(ledger.context(budget=3000).text)
    assert "Requirements" not in tight and "Incidents and their lessons" not in tight


def test_relevant_hits_carry_an_excerpt_of_their_why(tally):
    ledger, facts = tally
    text = ledger.context(query="duplicate invoice retried POST idempotency").text
    hits = items(sections(text)["Relevant to: duplicate invoice retried POST idempotency"])
    assert hits and all(has_why(lines) for lines in hits.values())
    assert any("Idempotency-Key" in " ".join(lines) or "gapless" in " ".join(lines) for lines in hits.values())


def test_a_checkpoint_or_a_note_leaves_the_stable_part_byte_identical_at_every_budget(tmp_path):
    ledger = open_ledger(init_repo(tmp_path / "repo"))
    entries, facts = build()
    ledger.append(entries)
    budgets = list(range(500, 20001, 250))
    before = {b: ledger.context(budget=b) for b in budgets}
    ledger.checkpoint(
        CheckpointDraft(
            facts.threads[0],
            {
                "goal": ["ship v2"],
                "next": ["a different next step, much longer than the one it replaces, to move things"],
            },
        )
    )
    ledger.log(Draft(kind="note", summary="A passing remark about the invoice run", body="Nothing decided here."))
    changed = [b for b in budgets if ledger.context(budget=b).stable != before[b].stable]
    assert changed == [], "budgets where the stable prefix changed"
    assert ledger.context(budget=DEFAULT_BUDGET).volatile != before[DEFAULT_BUDGET].volatile
