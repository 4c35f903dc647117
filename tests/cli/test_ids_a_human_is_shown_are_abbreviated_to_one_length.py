"""Every id a human is shown (an entry's, a ledger commit's) has one length, whatever the
command: not 8 hex in `list` and the context and 12 in `status` and `revise`. JSON keeps
the full id. And "head" means one thing: the context's footer names its newest entry
"latest", as `status` keeps "head" for the ledger commit."""

from __future__ import annotations

import json
import re

from kit.repos import head
from kit.run import cli

SHORT = 8


def hex_runs(text: str) -> set[int]:
    """The lengths of the runs of hex digits that stand alone as words in `text`."""
    return {len(m) for m in re.findall(r"(?<![0-9a-z])[0-9a-f]{6,64}(?![0-9a-z])", text)}


def test_status_list_context_and_revise_show_ids_at_one_length_and_json_keeps_them_whole(repo):
    logged = cli(repo, "log", "--kind", "decision", "--summary", "Port: 8080", "--body", "Default.", "--json", expect=0)
    decision = json.loads(logged.out)["entry"]["id"]
    assert len(decision) == 64
    revised = cli(repo, "revise", decision[:12], "--summary", "Port: 9090", "--body", "Clash.", expect=0)
    commit = head(repo)
    assert commit is not None
    status = cli(repo, "status", expect=0)
    assert f"head {commit[:SHORT]}," in status.out, status
    shown = {
        "revise": revised.out,
        "status": next(line for line in status.out.splitlines() if line.startswith("line main:")),
        "list": cli(repo, "list", expect=0).out,
        "context": cli(repo, "context", expect=0).out,
        # show prints the entry's own id whole, and abbreviates the ids it links to
        "show": next(
            line for line in cli(repo, "show", decision[:12], expect=0).out.splitlines() if "revised by" in line
        ),
    }
    assert {name: hex_runs(text) - {64} for name, text in shown.items()} == {name: {SHORT} for name in shown}, shown


def test_the_context_footer_names_its_newest_entry_latest_not_head(repo):
    logged = cli(repo, "log", "--kind", "decision", "--summary", "Port: 8080", "--body", "Default.", "--json", expect=0)
    newest = json.loads(logged.out)["entry"]["id"]
    footer = cli(repo, "context", expect=0).out.rstrip("\n").splitlines()[-1]
    assert f"1 entry · latest {newest[:SHORT]}" in footer and "head" not in footer, footer
