"""What an AI reads: budgets, layout, current truth, recall, checkpoints, threads, pins, as-of."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from kit.run import cli, git

from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.app.edits import pin, unpin
from git_lifeline.core import blocks
from git_lifeline.errors import InputError
from git_lifeline.views.tokens import estimate

ANCHOR = re.compile(r"\[([0-9a-f]{8})\]")
T0 = datetime(2026, 1, 10, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def add(ledger, kind, summary, body="why it matters", parents=(), days=0.0, **kw):
    return ledger.log(Draft(kind=kind, summary=summary, body=body, parents=list(parents), ts=at(days), **kw)).entry


@pytest.fixture
def rich(ledger):
    """A ledger with every section populated, and more decisions than fit small budgets."""
    add(ledger, "bootstrap", "Acme billing API", "Multi-tenant billing; invoices auditable for 7 years.")
    decisions = [
        add(ledger, "decision", f"Decision {i}: choice {i}", f"Because reason {i} " * 6, days=i + 1) for i in range(30)
    ]
    add(ledger, "open", "Queue: SQS or RabbitMQ?", "Decide after the load test.", days=40)
    add(ledger, "open", "Retention of logs", "Legal has to answer.", days=41)
    ledger.checkpoint(CheckpointDraft("api", {"goal": ["ship v1"], "next": ["write the tests"], "done": ["schema"]}))
    add(ledger, "note", "Ünïcödé note — 数据库", "Body with ümlauts and 中文.", days=42)
    return ledger, decisions


def anchors_exist(ledger, text):
    ids = {e.id[:8] for e in ledger.entries()}
    return all(a in ids for a in ANCHOR.findall(text))


def test_char_budget_is_never_exceeded_at_any_size(rich):
    ledger, _ = rich
    full = ledger.context().text
    for budget in list(range(0, 400)) + list(range(400, len(full) + 50, 37)):
        text = ledger.context(budget=budget).text
        assert len(text) <= budget, budget
        if text:
            assert text.endswith("_\n") and " · latest " in text.splitlines()[-1], budget
            assert anchors_exist(ledger, text)


def test_token_budget_is_never_exceeded_at_any_size(rich):
    ledger, _ = rich
    for budget in range(0, 700, 7):
        text = ledger.context(budget_tokens=budget).text
        assert estimate(text) <= budget, budget


def test_below_the_smallest_footer_nothing_is_printed_rather_than_a_cut_line(rich):
    ledger, _ = rich
    assert ledger.context(budget=0).text == ""
    smallest = min(len(ledger.context(budget=b).text) or 10**9 for b in range(0, 200))
    assert ledger.context(budget=smallest - 1).text == ""


def test_every_omitted_decision_is_named_by_the_marker_or_counted(rich):
    ledger, decisions = rich
    text = ledger.context(budget=1500).text
    shown = {a for a in ANCHOR.findall(text)}
    marker = re.search(r"_\[… (\d+) decision\(s\) omitted for the budget: ([^\]]*)\]_", text)
    assert marker, text
    omitted = int(marker.group(1))
    in_section = [d for d in decisions if d.id[:8] in shown]
    assert len(in_section) + omitted == len(decisions)
    assert "item(s) omitted for the budget" in text.splitlines()[-1]


def test_when_decisions_must_be_left_out_the_foundation_and_the_newest_stay(rich):
    ledger, decisions = rich
    text = ledger.context(budget=1100).text
    assert "decision(s) omitted for the budget" in text
    assert decisions[0].short in text and decisions[-1].short in text
    assert decisions[15].short not in text


def test_every_decision_is_named_before_any_of_them_keeps_a_why(rich):
    ledger, decisions = rich
    text = ledger.context(budget=2500).text
    assert all(d.short in text for d in decisions), text
    assert "omitted" not in text.split("## Decisions in force", 1)[1].split("\n\n", 1)[0]


def test_why_shrinks_before_any_decision_is_omitted(ledger):
    add(ledger, "decision", "Long why", "word " * 200)
    full = ledger.context().text
    smaller = ledger.context(budget=len(full) - 150).text  # room for a 96-char why, not for 320
    assert "Long why" in smaller and "…" in smaller and "omitted" not in smaller


def test_pinned_decision_comes_first_and_survives_a_tight_budget(rich):
    ledger, decisions = rich
    pin(ledger, decisions[17].id[:10])
    text = ledger.context(budget=900).text
    section = text.split("## Decisions in force", 1)[1]
    first = ANCHOR.search(section).group(1)
    assert first == decisions[17].short and "(pinned)" in section


def test_a_non_decision_append_leaves_the_stable_part_byte_identical(rich):
    ledger, _ = rich
    before = ledger.context(budget=4000)
    add(ledger, "note", "A passing note", "nothing decided", days=50)
    ledger.checkpoint(CheckpointDraft("api", {"next": ["something else"]}))
    after = ledger.context(budget=4000)
    assert after.stable == before.stable
    assert after.volatile != before.volatile


def test_correction_that_replaces_a_decision_carries_the_current_truth(ledger):
    mongo = add(ledger, "decision", "Database: MongoDB", "Flexible schema.")
    pg = add(ledger, "correction", "Database: PostgreSQL", "Audit needs ACID.", parents=[mongo.id], days=1)
    st = ledger.state()
    assert [d.id for d in st.decisions] == [pg.id]
    text = ledger.context().text
    decided = text.split("## Decisions in force", 1)[1].split("\n\n", 1)[0]
    assert "Database: PostgreSQL" in decided and "MongoDB" not in decided


def test_closing_an_open_or_reverting_never_invents_a_decision(ledger):
    q = add(ledger, "open", "Which queue?", "Load test pending.")
    add(ledger, "correction", "Closed: chose SQS elsewhere", "Done.", parents=[q.id], days=1)
    cache = add(ledger, "decision", "Cache: Redis", "Latency.", days=2)
    add(
        ledger,
        "correction",
        "Revert the cache decision",
        "action: revert\n\nNo cache for now.",
        parents=[cache.id],
        days=3,
    )
    st = ledger.state()
    assert st.decisions == [] and st.open_ids == []


def test_reverting_a_revert_restores_the_original_decision(ledger):
    d = add(ledger, "decision", "Auth: OAuth", "SSO customers.")
    r1 = add(ledger, "correction", "Drop OAuth", "action: revert\n\nToo early.", parents=[d.id], days=1)
    add(ledger, "correction", "Undo the drop", "action: revert\n\nCustomers asked.", parents=[r1.id], days=2)
    assert [x.id for x in ledger.state().decisions] == [d.id]


def test_recall_abstains_on_a_query_unrelated_to_the_ledger(rich):
    ledger, _ = rich
    assert ledger.recall("kubernetes helm chart rollout") == []
    assert ledger.recall("the of and") == []


def test_recall_abstains_when_only_one_word_of_several_matches(ledger):
    # In a ledger of a few dozen entries its vocabulary says the other words are topics of
    # their own. (In a ledger of one or two entries, one shared word with nothing competing
    # is an answer: issue 29, tests/recall/test_recall_answers_with_its_strength_or_says_why_it_abstains.py.)
    for i, topic in enumerate(["Postgres", "Redis", "Kafka", "Terraform", "Sentry", "Grafana"] * 5):
        add(ledger, "decision", f"Adopt {topic} for service {i}", f"Team {i} needed it.", days=i / 10)
    add(ledger, "decision", "Deploy with blue-green", "Zero downtime deploys.", days=5)
    assert ledger.recall("frontend bundle size deploy") == []


def test_recall_finds_by_prefix_and_ignores_accents_and_marks_superseded(ledger):
    mongo = add(ledger, "decision", "Database: MongoDB", "Flexible schema for the invoice model.")
    pg = add(ledger, "correction", "Database: PostgreSQL", "Auditors require ACID.", parents=[mongo.id], days=1)
    add(ledger, "note", "Café opening hours", "Irrelevant to the database.", days=2)
    hits = ledger.recall("mongo")
    # the superseded hit comes with the decision that replaced it, in front of it
    assert [h.id for h in hits] == [pg.id, mongo.id]
    assert ledger.recall("cafe")[0].id != mongo.id
    rows = json.loads(cli(ledger.gr.workdir, "recall", "mongo", "--json").out)["hits"]
    assert [r["in_force"] for r in rows] == [True, False]


def test_recall_treats_fts_syntax_in_the_query_as_plain_words(ledger):
    d = add(ledger, "decision", "Use NEAR caching", "Edge caches near users.")
    for q in ['"unterminated', "NEAR(a b)", "a* OR b", "-x", "col:value", "^start", "(((", "AND"]:
        ledger.recall(q)  # must not raise
    assert [h.id for h in ledger.recall('"near" (caching*')] == [d.id]


def test_recall_summary_outweighs_body(ledger):
    add(ledger, "note", "Unrelated title", "invoice invoice invoice rounding")
    s = add(ledger, "decision", "Invoice rounding to cents", "Banker's rounding.", days=1)
    assert ledger.recall("invoice rounding")[0].id == s.id


def test_context_query_adds_a_relevant_section_anchored_to_hits(rich):
    ledger, decisions = rich
    text = ledger.context(query="choice 7 reason 7").text
    assert "## Relevant to: choice 7 reason 7" in text
    relevant = text.split("## Relevant to", 1)[1].split("\n\n", 1)[0]
    assert decisions[7].short in relevant


def test_identical_recheckpoint_writes_nothing(ledger):
    first = ledger.checkpoint(CheckpointDraft("api", {"goal": ["g"], "next": ["n"]}))
    again = ledger.checkpoint(CheckpointDraft("api", {"goal": ["g"], "next": ["n"]}))
    assert first.written and not again.written and again.entry.id == first.entry.id


def test_correcting_a_checkpoint_restores_the_previous_one(ledger):
    a = ledger.checkpoint(CheckpointDraft("api", {"next": ["step one"]})).entry
    b = ledger.checkpoint(CheckpointDraft("api", {"next": ["step two"]})).entry
    assert ledger.state().checkpoints["api"].entry.id == b.id
    ledger.log(Draft(kind="correction", summary="That checkpoint was wrong", body="Back to step one.", parents=[b.id]))
    assert ledger.state().checkpoints["api"].entry.id == a.id


def test_closing_an_open_drops_its_threads_checkpoint(ledger):
    q = add(ledger, "open", "Pick a queue", "Need throughput numbers.")
    ledger.checkpoint(CheckpointDraft(q.id[:8], {"next": ["benchmark RQ"]}))
    assert q.id in ledger.state().checkpoints
    ledger.log(Draft(kind="correction", summary="Queue picked: SQS", body="Benchmarks done.", parents=[q.id]))
    assert q.id not in ledger.state().checkpoints


def test_unknown_thread_is_an_error_not_an_empty_context(rich):
    ledger, _ = rich
    with pytest.raises(InputError, match="unknown thread"):
        ledger.context(thread="nope")
    r = cli(ledger.gr.workdir, "context", "--thread", "nope")
    assert r.code == 2 and "unknown thread" in r.err and r.out == ""


def test_thread_brief_pins_the_threads_decisions_and_filters_resume(rich):
    ledger, decisions = rich
    ledger.checkpoint(CheckpointDraft("billing-ui", {"next": ["design review"]}))
    d = ledger.log(Draft(kind="decision", summary="API style: REST", body="Simple clients.", thread="api")).entry
    text = ledger.context(thread="api", budget=1200).text
    section = text.split("## Decisions in force", 1)[1]
    assert ANCHOR.search(section).group(1) == d.short
    assert "design review" not in text and "write the tests" in text


def test_log_in_thread_chains_to_the_threads_head(ledger):
    a = ledger.log(Draft(kind="note", summary="first", body="b", thread="t1")).entry
    b = ledger.log(Draft(kind="note", summary="second", body="b", thread="t1")).entry
    assert b.parents == [a.id] and blocks.field(b.body, "thread") == "t1"


def test_pin_in_the_middle_of_prose_is_not_a_pin(ledger):
    d = add(ledger, "decision", "Use Postgres", "ACID.")
    add(ledger, "note", "Musing", f"Some prose first.\npin: {d.id}\nmore prose", parents=[d.id], days=1)
    assert ledger.state().pinned == []


def test_thread_line_in_the_middle_of_prose_is_not_a_thread(ledger):
    add(ledger, "note", "Musing", "Prose first.\nthread: secret\n")
    assert "secret" not in ledger.state().threads


def test_unpin_removes_the_pin(ledger):
    d = add(ledger, "decision", "Use Postgres", "ACID.")
    pin(ledger, d.id[:8])
    assert ledger.state().pinned == [d.id]
    unpin(ledger, d.id[:8])
    assert ledger.state().pinned == []
    assert [x.id for x in ledger.state().decisions] == [d.id]


def test_as_of_february_includes_what_april_superseded(ledger):
    feb = ledger.log(
        Draft(kind="decision", summary="Hosting: Heroku", body="Fast start.", ts="2026-02-03T10:00:00Z")
    ).entry
    ledger.log(
        Draft(
            kind="correction",
            summary="Hosting: AWS",
            body="Cost at scale.",
            parents=[feb.id],
            ts="2026-04-20T10:00:00Z",
        )
    )
    text = ledger.context(as_of="2026-02-28").text
    assert "Hosting: Heroku" in text and "Hosting: AWS" not in text
    now = ledger.context().text.split("## Decisions in force", 1)[1].split("\n\n", 1)[0]
    assert "Hosting: AWS" in now and "Heroku" not in now


def test_as_of_a_ledger_commit_shows_the_ledger_then(ledger):
    add(ledger, "decision", "First", "one")
    then = ledger.head()
    add(ledger, "decision", "Second", "two", days=1)
    text = ledger.context(as_of=then).text
    assert "First" in text and "Second" not in text


def test_as_of_garbage_is_an_error(ledger):
    add(ledger, "decision", "First", "one")
    r = cli(ledger.gr.workdir, "context", "--as-of", "not-a-date")
    assert r.code == 2 and "--as-of" in r.err


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "gemini"])
def test_provider_formats_are_valid_json_holding_the_same_markdown(rich, fmt):
    ledger, _ = rich
    parts = ledger.context(budget=3000)
    r = cli(ledger.gr.workdir, "context", "--budget", "3000", "--format", fmt)
    assert r.code == 0, r
    doc = json.loads(r.out)
    if fmt == "anthropic":
        assert doc["system"][0]["text"] == parts.stable
        assert doc["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in doc["system"][1]
        assert doc["system"][1]["text"] == parts.volatile
    elif fmt == "openai":
        assert doc["messages"] == [{"role": "system", "content": parts.text}]
    else:
        assert "".join(p["text"] for p in doc["system_instruction"]["parts"]) == parts.text


def test_budget_and_budget_tokens_together_are_refused(rich):
    ledger, _ = rich
    r = cli(ledger.gr.workdir, "context", "--budget", "10", "--budget-tokens", "10")
    assert r.code == 2 and "not both" in r.err


def test_negative_budget_is_refused(rich):
    ledger, _ = rich
    r = cli(ledger.gr.workdir, "context", "--budget", "-1")
    assert r.code == 2


FAKES = "Use `[deadbeef]` **now** ⚠ conflicts _(superseded)_ <!-- [cafebabe]"


def unescaped(line: str, mark: str) -> int:
    return len(re.findall(r"(?<!\\)" + re.escape(mark), line))


def test_markdown_in_entry_text_cannot_fake_an_anchor_or_a_mark_within_its_line(ledger):
    add(ledger, "decision", FAKES, "See `[deadbeef]` and **this** _(expired)_ ⚠ <!--", days=1)
    add(ledger, "open", "Is [abcdef12] right? " + FAKES, "body", days=2)
    ledger.checkpoint(CheckpointDraft("t " + FAKES, {"next": ["check " + FAKES]}))
    text = ledger.context().text
    assert anchors_exist(ledger, text), "a summary faked an anchor"
    lines = [ln for ln in text.splitlines() if "deadbeef" in ln or "abcdef12" in ln]
    assert len(lines) >= 4, text
    for line in lines:
        assert unescaped(line, "`") in (0, 2), line  # only our own `[id]`
        assert unescaped(line, "**") in (0, 2), line  # only our own bold
        assert unescaped(line, "⚠") == 0, line
        assert unescaped(line, "_(") == 0 and unescaped(line, "<!--") == 0, line
    assert "\\`\\[deadbeef\\]\\`" in text


def test_a_recall_hit_carries_its_why_not_only_its_summary(ledger):
    pg = add(ledger, "decision", "Database: PostgreSQL", "subject: database\n\nAuditors need ACID across invoices.")
    out = cli(ledger.gr.workdir, "recall", "postgresql").out
    assert pg.id[:8] in out and "Auditors need ACID across invoices." in out
    assert "subject:" not in out  # headers are structure, not the why
    rows = json.loads(cli(ledger.gr.workdir, "recall", "postgresql", "--json").out)["hits"]
    assert rows[0]["why"] == "Auditors need ACID across invoices."


def test_recall_json_says_it_is_lexical_and_why_so_an_agent_knows_paraphrases_may_be_refused(ledger):
    add(ledger, "decision", "Database: PostgreSQL", "Auditors need ACID across invoices.")
    doc = json.loads(cli(ledger.gr.workdir, "recall", "postgresql", "--json").out)
    assert doc["mode"] == "lexical" and "no model configured" in doc["mode_reason"]
    assert [h["summary"] for h in doc["hits"]] == ["Database: PostgreSQL"]
    refused = json.loads(cli(ledger.gr.workdir, "recall", "drone pilots", "--json").out)
    assert refused["hits"] == [] and refused["mode"] == "lexical"  # an abstention still says which recall
    git(ledger.gr.workdir, "config", "lifeline.semantic.model", str(ledger.gr.workdir / "no-such-model"))
    broken = cli(ledger.gr.workdir, "recall", "postgresql", "--json")
    doc = json.loads(broken.out)
    assert doc["mode"] == "lexical" and "no-such-model" in doc["mode_reason"] and doc["hits"]
    assert "recall is lexical" in broken.err
    said = cli(ledger.gr.workdir, "recall", "drone pilots").out
    assert "lexical recall abstained" in said
