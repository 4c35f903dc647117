"""An entry's status is one answer (core/status.py): a reverted decision reads "withdrawn",
an answered open item "closed", in every view and face — the context's Recent section,
recall (text and --json), the HTML export, `show` and the MCP door's `lifeline_show`. The
context, recall and the page used to say "superseded" where `show` said "withdrawn"."""

from __future__ import annotations

import json
import re

from kit.mcp_client import call_once
from kit.repos import commit_file
from kit.run import cli


def ok(repo, *args):
    res = cli(repo, *args)
    assert res.code == 0, (args, res)
    return res


def write(repo, kind, summary, body) -> str:
    res = ok(repo, "log", "--kind", kind, "--summary", summary, "--body", body, "--json")
    return json.loads(res.out)["entry"]["id"]


def page_statuses(repo) -> dict:
    page = repo.parent / "page.html"
    ok(repo, "export", "--format", "html", "-o", str(page))
    m = re.search(r'<script type="application/json" id="entries-data">(.*?)</script>', page.read_text(), re.S)
    assert m, "the page has no entries island"
    return {row[0]: row[8] for row in json.loads(m.group(1))}  # ID, STATUS (page.js's field order)


def mcp_show(repo, entry_id: str) -> tuple:
    shown = call_once(repo, "lifeline_show", id=entry_id[:8])
    assert not shown.is_error, shown.content[0].text
    return shown.content[0].text, shown.structured_content


def test_a_reverted_decision_reads_withdrawn_in_context_recall_html_show_and_mcp(repo):
    commit_file(repo)
    write(repo, "bootstrap", "A shop", "Sells shoes online.")
    d = write(repo, "decision", "Queue: SQS for order events", "Managed, no servers to run.")
    ok(repo, "revert", d[:8], "--body", "We run no AWS after all.")

    context = ok(repo, "context").out
    recent = context.split("## Recent", 1)[1]
    assert re.search(rf"`\[{d[:8]}\]`.*Queue: SQS for order events _\(withdrawn\)_", recent), recent
    assert "_(superseded)_" not in context, context

    recall = ok(repo, "recall", "SQS queue order events").out
    assert d[:8] in recall and "(withdrawn)" in recall and "(superseded)" not in recall, recall
    (hit,) = [h for h in json.loads(ok(repo, "recall", "SQS queue order events", "--json").out)["hits"] if h["id"] == d]
    assert hit["status"] == "withdrawn" and hit["in_force"] is False, hit

    assert page_statuses(repo)[d] == "withdrawn"

    assert json.loads(ok(repo, "show", d[:8], "--json").out)["status"] == "withdrawn"
    assert "status:   withdrawn" in ok(repo, "show", d[:8]).out

    text, data = mcp_show(repo, d)
    assert "- status: withdrawn" in text and data["status"] == "withdrawn" and data["superseded"], text


def test_an_answered_open_item_reads_closed_in_context_recall_html_show_and_mcp(repo):
    commit_file(repo)
    o = write(repo, "open", "Which queue for order events?", "We need one before launch.")
    ok(repo, "close", o[:8], "--answer", "None: a cron job is enough.")

    recent = ok(repo, "context").out.split("## Recent", 1)[1]
    assert re.search(rf"`\[{o[:8]}\]`.*_\(closed\)_", recent), recent
    hits = json.loads(ok(repo, "recall", "queue order events", "--json").out)["hits"]
    assert [h["status"] for h in hits if h["id"] == o] == ["closed"], hits
    assert page_statuses(repo)[o] == "closed"
    assert json.loads(ok(repo, "show", o[:8], "--json").out)["status"] == "closed"
    text, data = mcp_show(repo, o)
    assert "- status: closed" in text and data["status"] == "closed", text
