"""Recall is how an agent asks "was this decided?" before it decides again (issue 29). An
answer says what answers and how strongly (`strength`, and the `answer_score` it stands on);
an abstention says why and which entries are nearest, never presenting them as answers. In a
ledger of two entries, one word the ledger spells differently ("certificate" for its "cert")
used to veto two exact ones, and semantic recall returned the bootstrap for every question."""

from __future__ import annotations

import json

import jsonschema
import pytest
from kit.mcp_client import drive, server
from kit.model import model_dir  # noqa: F401  (the fixture: the test model, or a skip)
from kit.run import cli, git

BOOTSTRAP = (
    "bootstrap",
    "Invoicing service for small shops",
    "Why: shops need invoices they can send from a phone. Who: two developers. Stack: Python.",
)
CERT_OUTAGE = ("incident", "Outage: cert expired on api", "The renewal cron job had stopped.")
CLICK = ("decision", "CLI: use click", "Subcommands via decorators; the team knows it.")


def logged(repo, kind: str, summary: str, body: str) -> str:
    r = cli(repo, "log", "--kind", kind, "--summary", summary, "--body", body, "--json")
    assert r.code == 0, r
    return json.loads(r.out)["entry"]["id"]


def answered(repo, question: str) -> dict:
    r = cli(repo, "recall", "--json", question)
    assert r.code == 0, r
    return json.loads(r.out)


@pytest.fixture(params=["lexical", "semantic"])
def mode(request, repo):
    if request.param == "semantic":
        git(repo, "config", "lifeline.semantic.model", str(request.getfixturevalue("model_dir")))
    return request.param


def test_an_answer_names_each_hits_strength_and_an_abstention_its_reason_and_nearest(repo, mode):
    logged(repo, *BOOTSTRAP)
    outage = logged(repo, *CERT_OUTAGE)
    got = answered(repo, "cert expired on the api")
    assert got["mode"] == mode and got["abstained"] is False and "reason" not in got and "nearest" not in got
    top = got["hits"][0]
    assert top["id"] == outage and top["strength"] == "strong" and top["answers"] is True, top
    assert top["answer_score"] >= got["answer_floor"], top
    refused = answered(repo, "parental leave policy for the team")
    assert refused["abstained"] is True and refused["hits"] == [], refused
    assert "parental" in refused["reason"], refused["reason"]
    assert len(refused["nearest"]) <= 3
    assert all(n["answers"] is False and n["strength"] == "none" for n in refused["nearest"]), refused


def test_an_abstention_shows_its_nearest_entries_as_not_answering_in_words(repo):
    logged(repo, *BOOTSTRAP)
    logged(repo, *CERT_OUTAGE)
    got = answered(repo, "which payment provider bills partners through the api")
    assert got["abstained"] and got["nearest"], got  # "api" is shared: nearest, not an answer
    out = cli(repo, "recall", "which payment provider bills partners through the api").out
    assert "abstained" in out and "do not answer" in out and "Outage: cert expired on api" in out, out
    assert "does not answer" in out, out


@pytest.mark.parametrize(
    "entry, question",
    [
        (CERT_OUTAGE, "certificate outage api"),  # the ledger says "cert"
        (CERT_OUTAGE, "renewal cron"),
        (CLICK, "what library parses command line arguments"),
    ],
)
def test_a_two_entry_ledger_answers_a_question_its_one_decision_answers(repo, mode, entry, question):
    logged(repo, *BOOTSTRAP)
    answer = logged(repo, *entry)
    got = answered(repo, question)
    assert not got["abstained"], got
    assert [h["id"] for h in got["hits"]] == [answer], got  # and not the bootstrap beside it
    assert got["hits"][0]["strength"] == "strong", got


def test_the_cli_says_in_words_how_a_hit_answers(repo):
    logged(repo, *BOOTSTRAP)
    logged(repo, *CERT_OUTAGE)
    out = cli(repo, "recall", "certificate outage api").out
    assert "Outage: cert expired on api" in out and "answers (score" in out, out


def test_lifeline_recall_answers_in_the_shape_its_output_schema_declares(repo):
    logged(repo, *BOOTSTRAP)
    outage = logged(repo, *CERT_OUTAGE)
    cli_answer = answered(repo, "certificate outage api")

    async def scenario():
        async with server(repo) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            schema = tools["lifeline_recall"].output_schema
            assert schema and {"abstained", "hits"} <= set(schema["required"]), schema
            hit = await c.call_tool("lifeline_recall", {"query": "certificate outage api"})
            data = hit.structured_content
            jsonschema.validate(data, schema)
            assert not data["abstained"] and data["hits"][0]["id"] == outage, data
            assert data["hits"] == [{k: v for k, v in h.items() if k != "why"} for h in cli_answer["hits"]]
            assert "answers (score" in hit.content[0].text
            refused = await c.call_tool(
                "lifeline_recall", {"query": "which payment provider bills partners through the api"}
            )
            data = refused.structured_content
            jsonschema.validate(data, schema)
            assert data["abstained"] and data["hits"] == [] and data["reason"], data
            assert data["nearest"] and all(not n["answers"] for n in data["nearest"]), data
            assert "do NOT answer" in refused.content[0].text, refused.content[0].text

    drive(scenario)


@pytest.mark.parametrize(
    "question, answer",
    [
        ("did we pick click over typer", CLICK),
        ("why click and not argparse or docopt for parsing flags", CLICK),
        ("which argument parsing library, click or typer or fire, and why", CLICK),
        ("what happened to the api certificate last winter", CERT_OUTAGE),
        ("what library parses command line arguments", CLICK),
    ],
)
def test_a_small_ledger_answers_a_question_whose_one_shared_word_only_its_answer_uses(repo, mode, question, answer):
    """In a ledger of three entries, a question whose words the ledger never uses ("pick",
    "typer") outweighed the one word its answer shares with it ("click"): two entries'
    vocabulary cannot say those words are a topic of their own, and nothing else competes."""
    logged(repo, *BOOTSTRAP)
    ids = {entry: logged(repo, *entry) for entry in (CERT_OUTAGE, CLICK)}
    got = answered(repo, question)
    assert not got["abstained"], got
    assert got["hits"][0]["id"] == ids[answer], got
