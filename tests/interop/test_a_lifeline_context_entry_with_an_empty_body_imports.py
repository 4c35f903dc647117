"""A lifeline-context ledger whose entry has an empty body imports, keeping its ids; a new
entry still needs its why.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from kit.run import cli, git
from kit.seed import needs_seed, seed_python

from git_lifeline.core.entry import Entry
from git_lifeline.core.seed import render_seed_markdown


def _seed_ledger_with_an_empty_body(cwd):
    """A lifeline-context ledger written by lifeline-context itself: one entry without a body
    (its library and MCP paths store one; only its CLI's log asks for the why)."""
    script = (
        "import asyncio, os\nfrom lifeline import cli\nos.makedirs('.lifeline', exist_ok=True)\n"
        "a = 'Seed User <seed@example.com>'\n"
        "asyncio.run(cli.cmd_log('.lifeline/ledger.db', 'LIFELINE.md', 'decision', 'Keep it small', "
        "'Because.', a, 'human', 'none', 'human', None))\n"
        "asyncio.run(cli.cmd_log('.lifeline/ledger.db', 'LIFELINE.md', 'note', 'Said without a why', '', "
        "a, 'human', 'none', 'human', None))\n"
    )
    subprocess.run([seed_python(), "-c", script], cwd=cwd, check=True, capture_output=True)


@needs_seed
@pytest.mark.parametrize("source", ["LIFELINE.md", ".lifeline/ledger.db"])
def test_import_accepts_a_lifeline_context_ledger_with_an_empty_body_keeping_its_ids(repo, tmp_path, source):
    # it used to refuse the whole ledger: "a note needs its why"
    seed_dir = tmp_path / "seed"
    seed_dir.mkdir()
    _seed_ledger_with_an_empty_body(seed_dir)
    recorded = re.findall(r"\*\*id\*\*: ([0-9a-f]{64})", (seed_dir / "LIFELINE.md").read_text())
    res = cli(repo, "import", "--from", str(seed_dir / source))
    assert res.code == 0 and "2 added" in res.out, res
    entries = json.loads(cli(repo, "list", "--json").out)
    assert sorted(e["id"] for e in entries) == sorted(recorded)
    assert next(e for e in entries if e["kind"] == "note")["body"] == ""
    assert cli(repo, "verify").code == 0
    exported = cli(repo, "export").out
    assert sorted(re.findall(r"\*\*id\*\*: ([0-9a-f]{64})", exported)) == sorted(recorded)


def test_an_entry_with_an_empty_body_is_valid_stored_but_a_new_one_needs_its_why(repo, tmp_path):
    stored = Entry.new(kind="decision", summary="No why", author="A <a@example.com>", body="", require_why=False)
    source = tmp_path / "LIFELINE.md"
    source.write_text(render_seed_markdown([stored], "main"))
    assert cli(repo, "import", "--from", str(source)).code == 0
    assert cli(repo, "verify").code == 0
    assert "No why" in cli(repo, "context").out
    # the projection round trip keeps it
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    res = cli(other, "migrate", "--from", str(repo / "LIFELINE.md"))
    assert res.code == 0 and "1 added" in res.out, res
    new = cli(repo, "log", "--kind", "decision", "--summary", "No why either", "--body", "")
    assert new.code == 2 and "needs its why" in new.err
