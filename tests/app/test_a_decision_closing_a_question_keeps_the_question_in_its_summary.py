"""`close --decision` without --summary: the decision's summary is the open's question
with the answer, so the decision read alone (in the context, in `list`) still says what it
decides, not "RabbitMQ" with the question lost."""

from __future__ import annotations

import json

from kit.run import cli


def open_item(repo, summary: str) -> str:
    r = cli(repo, "log", "--kind", "open", "--summary", summary, "--body", "We need one.", "--json", expect=0)
    return json.loads(r.out)["entry"]["id"]


def decided(repo, *args: str) -> str:
    r = cli(repo, "close", *args, "--decision", "--json", expect=0)
    (decision,) = [e for e in json.loads(r.out)["entries"] if e["kind"] == "decision"]
    return decision["summary"]


def test_a_decision_closing_a_question_carries_the_question_and_the_answer(repo):
    asked = open_item(repo, "Which queue?")
    assert decided(repo, asked[:8], "--answer", "RabbitMQ\n\nThe team runs it.") == "Which queue? RabbitMQ"
    topic = open_item(repo, "Queue choice")
    assert decided(repo, topic[:8], "--answer", "SQS") == "Queue choice: SQS"
    named = open_item(repo, "Which cache?")
    assert decided(repo, named[:8], "--answer", "Redis", "--summary", "Cache: Redis") == "Cache: Redis"
