"""A decision's re-affirmations (`git lifeline reaffirm`) are one answer
(app/entry_view.reaffirmations_by_decision), listed by every face that shows the decision
whole: `show` (text and --json), the MCP door's `lifeline_show` (text and structured
content) and the HTML view. `lifeline_show` used to leave them out."""

from __future__ import annotations

import json
import re

from kit.mcp_client import call_once
from kit.run import Via, cli, git

FAST = Via.THIS_PROCESS


def ok(repo, *args):
    res = cli(repo, *args, via=FAST)
    assert res.code == 0, (args, res)
    return res


def mcp_show(repo, entry_id: str) -> tuple:
    shown = call_once(repo, "lifeline_show", id=entry_id[:8])
    assert not shown.is_error, shown.content[0].text
    return shown.content[0].text, shown.structured_content


def test_every_face_that_shows_a_decision_lists_its_reaffirmations(repo):
    (repo / "api.py").write_text("def handler():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    res = ok(repo, "log", "--kind", "decision", "--summary", "Handlers are thin", "--paths", "api.py", "--json")
    d = json.loads(res.out)["entry"]["id"]
    (repo / "api.py").write_text("def handler():\n    return 2\n")
    git(repo, "commit", "-q", "-am", "change")
    ok(repo, "reaffirm", d[:10], "--body", "Still thin after the change.")
    ok(repo, "reaffirm", d[:10], "--body", "Read it again.")
    shown = json.loads(ok(repo, "show", d[:10], "--json").out)["reaffirmed_by"]
    assert len(shown) == 2
    ids = [row["id"] for row in shown]

    text = ok(repo, "show", d[:10]).out
    assert text.count("re-affirmed") == 2 and "Still thin after the change." in text

    mcp_text, data = mcp_show(repo, d)
    assert [row["id"] for row in data["reaffirmed_by"]] == ids
    assert data["reaffirmed_by"] == shown
    assert mcp_text.count("- re-affirmed: ") == 2 and all(f"[{i[:8]}]" in mcp_text for i in ids), mcp_text

    page = repo.parent / "page.html"
    ok(repo, "export", "--format", "html", "-o", str(page))
    article = re.search(rf'<article[^>]*id="d-{d}".*?</article>', page.read_text(), re.S)
    assert article, "the decision has no article on the page"
    meta = re.search(r'<div class="meta">re-affirmed by (.*?)</div>', article.group(0), re.S)
    assert meta and re.findall(r'href="#e-([0-9a-f]+)"', meta.group(1)) == ids, article.group(0)
