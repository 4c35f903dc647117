"""`why` shows the hidden characters of entry summaries and commit subjects visibly, and a
commit subject cannot forge another commit's link.
"""

from __future__ import annotations

import json
from pathlib import Path

from kit.repos import bare, configured_client, log_decision
from kit.run import cli, git


def commit_with_message(repo: Path, message: bytes) -> str:
    """A commit of the work tree whose message is exactly these bytes (any control character)."""
    (repo / "code.py").write_text(f"x = {len(message)}\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "--cleanup=verbatim", "-F", "-", input=message)
    return git(repo, "rev-parse", "HEAD")


def test_why_shows_hidden_characters_of_summaries_and_subjects_visibly(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    log_decision(repo, summary="Use \u202eSQLite")  # a bidi override: allowed in a summary, hidden on a terminal
    eid = json.loads(cli(repo, "list", "--json").out)[0]["id"]
    commit_with_message(repo, b"Fix \x1b]0;owned\x07 the cache\n\nLifeline: " + eid[:12].encode() + b"\n")
    r = cli(repo, "why", "code.py")
    assert r.code == 0, r
    assert "\u202e" not in r.out and "<U+202E>" in r.out, r
    assert "\x1b" not in r.out and "\x07" not in r.out, r


def test_a_commit_subject_cannot_forge_another_commits_link_in_why(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    log_decision(repo)
    eid = json.loads(cli(repo, "list", "--json").out)[0]["id"]
    honest = commit_with_message(repo, b"Honest change\n")
    # the subject carries the separators why's parser split on: a second, invented record
    forged = b"Evil\x1d" + honest.encode() + b"\x1f1700000000\x1fHonest change\x1f" + eid.encode()
    evil = commit_with_message(repo, forged + b"\n")
    rows = json.loads(cli(repo, "why", "code.py", "--json").out)
    assert all(row["commit"] != honest for row in rows), rows  # the honest commit names no entry
    assert {row["commit"] for row in rows} <= {evil}, rows
