"""What a newcomer meets first: install lines that work as written, a push with no remote,
a mistyped --line, a lifeline-context ledger with an empty body, a large import's commit."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta, timezone

import pytest
from _interop_support import needs_seed, seed_python
from helpers import ROOT, cli, git

from git_lifeline.core.entry import Entry
from git_lifeline.core.seed import render_seed_markdown


# ---- install -----------------------------------------------------------------------------
def test_the_install_lines_install_from_a_checkout_with_extras_that_exist():
    # `pip install 'git-lifeline[mcp]'` failed: the package is on no registry
    tomllib = pytest.importorskip("tomllib")
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        line
        for doc in (readme, (ROOT / "docs" / "INTEGRATION.md").read_text(encoding="utf-8"))
        for line in doc.splitlines()
        if "pip install" in line
    ]
    assert lines
    for line in lines:
        for target in re.findall(r"pip install (?:-\S+ )*('?[^\s']+'?)", line):
            target = target.strip("'")
            assert target.startswith("."), f"not from a checkout: {line}"
            named = re.fullmatch(r"\.(?:\[([a-z,]+)\])?", target)
            assert named, line
            assert set(filter(None, (named.group(1) or "").split(","))) <= extras, line
    assert {"mcp", "semantic"} <= extras and "'.[semantic]'" in readme and "'.[mcp]'" in readme


# ---- push with no remote ----------------------------------------------------------------------
def test_push_with_no_remote_says_how_to_add_one(repo):
    # it used to say "git lifeline pull <remote>"
    assert cli(repo, "log", "--kind", "note", "--summary", "s", "--body", "b").code == 0
    for verb in ("push", "sync", "pull", "fetch"):
        res = cli(repo, verb)
        assert res.code == 2, res
        assert "no remote" in res.err and "git remote add origin <url>" in res.err and "pull <remote>" not in res.err


def test_push_with_remotes_but_no_origin_names_them(repo, tmp_path):
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "backup.git"))
    git(repo, "remote", "add", "backup", str(tmp_path / "backup.git"))
    res = cli(repo, "push")
    assert res.code == 2 and "name one of backup (e.g. git lifeline push backup)" in res.err, res


# ---- a mistyped --line ---------------------------------------------------------------------------
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


# ---- import what lifeline-context accepts ---------------------------------------------------------
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


# ---- a large import's commit ----------------------------------------------------------------------
def test_a_10k_import_writes_a_bounded_commit_message(repo, tmp_path):
    # it used to list every id: a 780 KB message for 10,000 entries
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    entries = [
        Entry.new(
            kind="note",
            summary=f"Note {i}",
            author="A <a@example.com>",
            body=f"Why {i}.",
            ts=base + timedelta(seconds=i),
        )
        for i in range(10_000)
    ]
    source = tmp_path / "LIFELINE.md"
    source.write_text(render_seed_markdown(entries, "main"))
    res = cli(repo, "import", "--from", str(source))
    assert res.code == 0 and "10000 added" in res.out, res
    message = git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")
    assert len(message.encode()) < 4096
    assert message.startswith("lifeline: add 10000 entries")
    assert "the commit's tree holds all 10000" in message
    named = git(repo, "log", "-1", "--format=%(trailers:key=Lifeline-Id,valueonly)", "refs/lifeline/main").split()
    assert named == [e.id for e in sorted(entries, key=lambda e: (e.ts, e.id))[:20]]
