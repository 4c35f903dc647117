"""The HTML view says where each item came from (issue 28, trust tiers), as the context does:
an agent's direct write, an approved one and an imported one carry a mark (a human's none),
on the decision cards the page is served with and in the entries its script draws."""

from __future__ import annotations

import json
import re

from kit.browser import chromium, dump_dom
from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.tiers import TIERS, four_tiers

from git_lifeline.app.html_export import export_html
from git_lifeline.app.workspace import Workspace

TAG_OF = {"human": "", "approved": "approved", "agent": "agent", "imported": "imported"}


def entry_rows(page: str) -> list:
    return json.loads(re.search(r'<script type="application/json" id="entries-data">(.*?)</script>', page, re.S)[1])


def card_of(page: str, entry_id: str) -> str:
    start = page.index(f'id="d-{entry_id}"')
    return page[start : page.index("</article>", start)]


def test_the_html_view_marks_each_decision_and_entry_by_its_tier(repo, tmp_path):
    ids = four_tiers(repo)
    page = export_html(Workspace.open(str(repo)).ledger())
    rows = {row[0]: row for row in entry_rows(page)}
    for summary, tier in TIERS.items():
        card = card_of(page, ids[summary])
        mark = f">{TAG_OF[tier]}</span>"
        assert ('class="mark trust"' in card) == (tier != "human") and (tier == "human" or mark in card), card
        assert rows[ids[summary]][15] == TAG_OF[tier], (summary, rows[ids[summary]])
    if chromium() is not None:  # what the page's script draws from those rows
        path = tmp_path / "view.html"
        path.write_text(page, encoding="utf-8")
        dom = dump_dom(path)
        assert dom.count('<span class="mark trust">agent</span>') >= 2, "the decision and the checkpoint"
