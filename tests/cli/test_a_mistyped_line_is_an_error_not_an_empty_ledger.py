"""A mistyped --line is an error on every read, not an empty ledger; writes create a new
line and the default line may be empty.
"""

from __future__ import annotations

import json

import pytest
from kit.run import cli, git

from git_lifeline.core.entry import Entry
from git_lifeline.core.seed import render_seed_markdown

READS = [
    ["list"],
    ["show", "abcdef"],
    ["context"],
    ["recall", "x"],
    ["resume"],
    ["stale"],
    ["conflicts"],
    ["export"],
    ["graph"],
    ["render"],
    ["revise", "abcdef", "--body", "b"],
    ["revert", "abcdef"],
    ["verify"],
    ["why", "README"],
    ["review"],
    ["audit"],
    ["approve", "all"],
    ["reject", "all"],
]


@pytest.mark.parametrize("argv", READS, ids=lambda a: a[0])
def test_a_mistyped_line_is_an_error_not_an_empty_ledger(repo, argv):
    assert cli(repo, "--line", "research", "log", "--kind", "note", "--summary", "s", "--body", "b").code == 0
    res = cli(repo, "--line", "reserch", *argv)
    assert res.code == 2, res
    assert "unknown line 'reserch' (lines: research)" in res.err
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/lifeline/") == "refs/lifeline/research"


def test_writes_create_a_new_line_and_the_default_line_may_be_empty(repo, tmp_path):
    assert cli(repo, "list").code == 0 and cli(repo, "context").code == 0  # a fresh repository
    assert cli(repo, "--line", "fresh", "log", "--kind", "note", "--summary", "s", "--body", "b").code == 0
    es = [Entry.new(kind="note", summary="Imported", author="A <a@example.com>", body="b")]
    source = tmp_path / "LIFELINE.md"
    source.write_text(render_seed_markdown(es, "x"))
    assert cli(repo, "--line", "imported", "import", "--from", str(source)).code == 0
    first = json.loads(cli(repo, "--line", "fresh", "list", "--json").out)[0]["id"]
    assert cli(repo, "promote", "--from", "fresh", "--to", "promoted", "--id", first[:8]).code == 0
    assert cli(repo, "--line", "promoted", "list").code == 0
