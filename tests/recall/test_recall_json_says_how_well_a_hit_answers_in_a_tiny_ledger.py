"""`recall --json` (and lifeline_recall's structured answer) used to give each hit a `score`:
the ranking's BM25 product, whose idf is about 0 in a ledger of one or two entries, so the
right answer read "score: 0.0" — irrelevant — to an agent. A hit now says how well it answers
with `coverage` (the share of the question's weight its words match, in [0, 1], the measure
abstention reads), and the ranking's number is `rank_score`, named for what it is."""

from __future__ import annotations

import json

import pytest
from kit.mcp_client import drive, server
from kit.model import model_dir  # noqa: F401  (the fixture: the test model, or a skip)
from kit.run import cli, git


def logged(repo, summary: str, body: str, *extra: str) -> str:
    r = cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", body, *extra, "--json")
    assert r.code == 0, r
    return json.loads(r.out)["entry"]["id"]


def recalled(repo, question: str) -> list:
    r = cli(repo, "recall", "--json", question)
    assert r.code == 0, r
    return json.loads(r.out)["hits"]


@pytest.mark.parametrize("others", [0, 1, 2])
def test_the_right_answer_in_a_tiny_ledger_never_reads_as_irrelevant(repo, others):
    answer = logged(repo, "Database: PostgreSQL", "We need ACID transactions for billing.")
    for i, summary in enumerate(["Frontend: React", "Queue: Redis streams"][:others]):
        logged(repo, summary, f"Reason {i}.")
    hits = recalled(repo, "which database do we use")
    assert hits and hits[0]["id"] == answer, hits
    assert "score" not in hits[0], "a field named score that is ~0 for the right answer misleads"
    assert hits[0]["coverage"] >= 0.9, hits[0]
    assert isinstance(hits[0]["rank_score"], float), hits[0]


def test_a_hit_shown_for_a_superseded_one_names_the_hit_it_replaced(repo):
    """The entry in force that replaced a superseded hit is shown in front of it with that hit's
    numbers (its own words may not match the question at all): `replaces` says so."""
    old = logged(repo, "Brand colour: teal", "Matches the old logo.")
    r = cli(repo, "revise", old[:12], "--summary", "Brand palette: orange", "--body", "Marketing asked.", "--json")
    assert r.code == 0, r
    new = json.loads(r.out)["entries"][0]["id"]
    hits = recalled(repo, "teal")
    assert [h["id"] for h in hits] == [new, old], hits
    assert hits[0]["replaces"] == old and "replaces" not in hits[1], hits


def test_lifeline_recall_gives_an_agent_the_same_hit_fields_as_the_cli(repo):
    answer = logged(repo, "Database: PostgreSQL", "We need ACID transactions for billing.")
    cli_hits = recalled(repo, "which database do we use")

    async def scenario():
        async with server(repo) as c:
            result = await c.call_tool("lifeline_recall", {"query": "which database do we use"})
            hits = result.structured_content["hits"]
            assert [h["id"] for h in hits] == [answer], hits
            assert hits == [{k: v for k, v in h.items() if k != "why"} for h in cli_hits], (hits, cli_hits)
            assert "coverage=1.00" in result.content[0].text and "score=" not in result.content[0].text

    drive(scenario)


def test_with_a_model_a_hit_carries_its_similarity_to_the_question(repo, model_dir):
    """A paraphrase found by the model may share no word with the question (coverage 0): its
    cosine says how close it is. Without a model there is none to give, and no such field."""
    git(repo, "config", "lifeline.semantic.model", str(model_dir))
    answer = logged(repo, "Couriers sign in with a one-time code", "No passwords on shared phones.")
    hits = recalled(repo, "how do drivers log in")
    assert [h["id"] for h in hits] == [answer], hits
    assert 0.0 < hits[0]["similarity"] <= 1.0, hits[0]
    git(repo, "config", "--unset", "lifeline.semantic.model")
    assert "similarity" not in recalled(repo, "how do drivers log in")[0]
