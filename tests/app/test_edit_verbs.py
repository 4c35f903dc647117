"""Changing one's mind in an append-only ledger: revise, revert, close, resolve, and what
`show` and the ledger's commits say about corrections. Through the real CLI."""

from __future__ import annotations

import json

import pytest
from kit.repos import open_ledger
from kit.run import cli, git


def ok(repo, *args):
    res = cli(repo, *args)
    assert res.code == 0, (args, res)
    return res


def write(repo, kind, summary, body="Why.", *extra) -> str:
    res = ok(repo, "log", "--kind", kind, "--summary", summary, "--body", body, *extra, "--json")
    return json.loads(res.out)["entry"]["id"]


def state(repo):
    return open_ledger(repo).state()


def last_message(repo) -> str:
    return git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")


def shown(repo, ref) -> dict:
    return json.loads(ok(repo, "show", ref, "--json").out)


# ---- revise ------------------------------------------------------------------------------
def test_a_revised_decision_stays_a_decision_in_force_with_its_paths(repo):
    d = write(repo, "decision", "Database: PostgreSQL", "ACID.", "--paths", "db/**", "--subject", "database")
    res = ok(repo, "revise", d[:8], "--summary", "Database: PostgreSQL 16", "--body", "MERGE is in 16.")
    st = state(repo)
    (c,) = st.decision_ids
    revision = st.by_id[c]
    assert revision.kind == "correction" and revision.parents == [d] and d in st.superseded
    assert revision.summary == "Database: PostgreSQL 16"
    assert revision.body == "paths: db/**\n\nMERGE is in 16."  # carried over
    assert st.fold.facts[c].get("subject") is None and not st.conflicts  # the subject is inherited
    assert f"{d[:8]} is superseded; in force now: {c[:8]}" in res.out


def test_revise_keeps_the_summary_when_none_is_given_and_needs_a_why(repo):
    d = write(repo, "decision", "Cache: Redis")
    res = cli(repo, "revise", d[:8])
    assert res.code == 2 and "say why (--body)" in res.err
    ok(repo, "revise", d[:8], "--body", "Redis 7.")
    (c,) = state(repo).decision_ids
    assert state(repo).by_id[c].summary == "Cache: Redis"


@pytest.mark.parametrize("kind, says", [("open", "git lifeline close"), ("checkpoint", "git lifeline checkpoint")])
def test_revise_of_what_a_revision_cannot_change_says_which_verb_does(repo, kind, says):
    if kind == "checkpoint":
        ok(repo, "checkpoint", "--next", "go on")
        target = open_ledger(repo).entries()[0].id
    else:
        target = write(repo, kind, "Which queue?")
    res = cli(repo, "revise", target[:8], "--body", "x")
    assert res.code == 2 and says in res.err, res


def test_revising_a_superseded_decision_names_the_one_to_revise(repo):
    # a second revision of the same decision would fork it into two versions in force
    d = write(repo, "decision", "Queue: SQS")
    ok(repo, "revise", d[:8], "--body", "v2")
    (c,) = state(repo).decision_ids
    res = cli(repo, "revise", d[:8], "--body", "v3")
    assert res.code == 2 and f"already superseded by {c[:8]}; revise that one" in res.err, res


# ---- revert ------------------------------------------------------------------------------
def test_revert_withdraws_and_a_revert_of_the_revert_puts_it_back(repo):
    d = write(repo, "decision", "Logs: JSON")
    ok(repo, "revert", d[:8], "--body", "Too verbose.")
    assert state(repo).decision_ids == []
    assert shown(repo, d[:8])["status"] == "withdrawn"
    (r,) = [e.id for e in open_ledger(repo).entries() if e.kind == "correction"]
    assert state(repo).by_id[r].body == "action: revert\n\nToo verbose."
    again = cli(repo, "revert", d[:8])
    assert again.code == 2 and "already withdrawn" in again.err
    ok(repo, "revert", r[:8])
    assert state(repo).decision_ids == [d]
    assert shown(repo, d[:8])["status"] == "in force"


def test_reverting_a_revision_puts_back_what_it_replaced(repo):
    d = write(repo, "decision", "Port: 8080")
    ok(repo, "revise", d[:8], "--summary", "Port: 9090", "--body", "Clash.")
    (c,) = state(repo).decision_ids
    ok(repo, "revert", c[:8])
    assert state(repo).decision_ids == [d]


# ---- close -------------------------------------------------------------------------------
def test_closing_an_open_with_a_correction_keeps_the_answer(repo):
    # the answer used to be dropped: only the correction's summary said "closed"
    o = write(repo, "open", "Which queue?", "We need one.")
    ok(repo, "close", o[:8], "--answer", "None: cron is enough.")
    st = state(repo)
    assert st.open_ids == [] and st.decision_ids == []
    (c,) = [e for e in open_ledger(repo).entries() if e.kind == "correction"]
    assert c.parents == [o] and c.body == "None: cron is enough."
    assert shown(repo, o[:8])["status"] == "closed"


def test_an_answer_that_decides_something_becomes_a_decision_in_force(repo):
    o = write(repo, "open", "Which queue?", "We need one.")
    res = ok(
        repo,
        "close",
        o[:8],
        "--answer",
        "RabbitMQ: the team runs it.\n\nAnd it has DLQs.",
        "--decision",
        "--paths",
        "queue/**",
    )
    st = state(repo)
    (d,) = st.decision_ids
    decision = st.by_id[d]
    assert decision.kind == "decision" and decision.parents == [o]
    assert decision.summary == "Which queue? RabbitMQ: the team runs it."  # the question read with its answer
    assert decision.body.startswith("paths: queue/**\n\nRabbitMQ: the team runs it.")
    assert st.open_ids == []
    closing = next(e for e in open_ledger(repo).entries() if e.kind == "correction")
    assert closing.parents == [o] and f"Decided: {d}" in closing.body  # names only the open
    # one commit for both, naming what it closes
    message = last_message(repo)
    assert message.startswith(f"close {o[:8]}: Which queue?")
    assert f"Lifeline-Revises: {o}" in message and f"Lifeline-Id: {d}" in message
    assert git(repo, "rev-list", "--count", "refs/lifeline/main") == "2"
    assert f"decision in force: {d[:8]}" in res.out


def test_close_takes_only_an_open_in_force_and_needs_an_answer(repo):
    d = write(repo, "decision", "Not a question")
    res = cli(repo, "close", d[:8], "--answer", "x")
    assert res.code == 2 and "not an open item" in res.err
    o = write(repo, "open", "Question?")
    assert cli(repo, "close", o[:8]).code == 2
    assert "--paths" in cli(repo, "close", o[:8], "--answer", "a", "--paths", "x").err  # only with --decision
    ok(repo, "close", o[:8], "--answer", "Answered.")
    res = cli(repo, "close", o[:8], "--answer", "Again.")
    assert res.code == 2 and "already closed" in res.err


# ---- resolve -----------------------------------------------------------------------------
def conflicting(repo) -> tuple:
    a = write(repo, "decision", "Database: PostgreSQL", "ACID.", "--subject", "database")
    b = write(repo, "decision", "Database: MySQL", "Cheap.", "--subject", "database")
    assert state(repo).conflicts_of(a)
    return a, b


def test_resolve_keeps_one_decision_and_withdraws_the_others(repo):
    a, b = conflicting(repo)
    res = ok(repo, "resolve", a[:8], "--body", "PostgreSQL won the benchmark.")
    st = state(repo)
    assert st.decision_ids == [a] and not st.conflicts
    assert f"kept {a[:8]}; withdrawn: {b[:8]}" in res.out
    assert shown(repo, b[:8])["status"] == "withdrawn"
    assert "no conflicting decisions in force" in ok(repo, "conflicts").out


def test_resolve_with_a_summary_replaces_every_side_with_one_decision(repo):
    a, b = conflicting(repo)
    ok(repo, "resolve", b[:8], "--summary", "Database: PostgreSQL on RDS", "--body", "Both had a point.")
    st = state(repo)
    (c,) = st.decision_ids
    assert sorted(st.by_id[c].parents) == sorted([a, b]) and not st.conflicts


def test_resolve_refuses_a_plan_that_would_leave_a_conflict(repo):
    # keeping `a` by reverting `r`, a revision, would put back what `r` replaced: `e`, in conflict again
    e = write(repo, "decision", "Database: MySQL", "Cheap.", "--subject", "database")
    ok(repo, "revise", e[:8], "--summary", "Database: MariaDB", "--body", "Fork.")
    (r,) = state(repo).decision_ids
    a = write(repo, "decision", "Database: PostgreSQL", "ACID.", "--subject", "database")
    assert sorted(state(repo).conflicts_of(a)[0].ids) == sorted([a, r])
    before = git(repo, "rev-parse", "refs/lifeline/main")
    res = cli(repo, "resolve", a[:8])
    assert res.code == 2, res
    assert f"would leave {a[:8]} in conflict with {e[:8]}" in res.err and "--summary" in res.err
    assert git(repo, "rev-parse", "refs/lifeline/main") == before
    ok(repo, "resolve", a[:8], "--summary", "Database: PostgreSQL", "--body", "One database.")
    assert not state(repo).conflicts


def test_resolve_of_a_decision_in_no_conflict_is_refused(repo):
    d = write(repo, "decision", "Alone")
    res = cli(repo, "resolve", d[:8])
    assert res.code == 2 and "is in no conflict" in res.err


# ---- show and the ledger's commits ---------------------------------------------------------
def test_show_lists_what_superseded_an_entry_and_what_it_supersedes(repo):
    d = write(repo, "decision", "Port: 8080")
    ok(repo, "revise", d[:8], "--summary", "Port: 9090", "--body", "Clash.")
    (c,) = state(repo).decision_ids
    old = ok(repo, "show", d[:8]).out
    assert "status:   superseded" in old and f"revised by: {c[:8]} correction: Port: 9090" in old
    new = ok(repo, "show", c[:8]).out
    assert "status:   in force" in new and f"revises:  {d[:8]} decision: Port: 8080" in new
    ok(repo, "revert", c[:8])
    assert "(itself reverted: it does not act)" in ok(repo, "show", d[:8]).out
    assert "status:   in force" in ok(repo, "show", d[:8]).out
    doc = shown(repo, c[:8])
    assert doc["status"] == "withdrawn" and doc["supersedes"] == [{"id": d, "how": "revises", "acts": False}]


def test_a_corrections_ledger_commit_names_what_it_corrects(repo):
    # `git log refs/lifeline/main` used to show only "correction: <summary>"
    d = write(repo, "decision", "Port: 8080")
    c = write(repo, "correction", "Port: 9090", "Clash.", "--parents", d[:8])
    message = last_message(repo)
    assert message.startswith("correction: Port: 9090")
    assert f"Revises {d[:8]} (decision: Port: 8080)." in message
    assert f"Lifeline-Id: {c}\nLifeline-Revises: {d}" in message
    ok(repo, "revert", c[:8])
    message = last_message(repo)
    assert message.startswith(f"revert {c[:8]}: Port: 9090")
    assert f"Lifeline-Reverts: {c}" in message
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Lifeline-Reverts,valueonly)", "refs/lifeline/main")
    assert trailer == c
