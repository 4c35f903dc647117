"""Verify's findings, the hooks' refusals and an ADR import show a hostile tree name's or
title's escapes visibly, never raw to the terminal.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit.repos import bare, configured_client, git_push, log_decision
from kit.run import cli, git

from git_lifeline.app.hook_files import install
from git_lifeline.git.repo import open_repo

ESCAPES = "\x1b]0;pwned\x07\x1b[2Jname"


def foreign_file_on_top(repo: Path) -> None:
    """refs/lifeline/main moved to a commit whose tree holds a file named with escape sequences."""
    r = pygit2.Repository(str(repo))
    tip = r.references["refs/lifeline/main"].target
    tb = r.TreeBuilder(r[tip].tree)
    tb.insert(ESCAPES, r.create_blob(b"x"), pygit2.GIT_FILEMODE_BLOB)
    sig = pygit2.Signature("A", "a@example.com", 1714560000, 0)
    new = r.create_commit(None, sig, sig, "x\n", tb.write(), [tip])
    git(repo, "update-ref", "refs/lifeline/main", str(new))


def test_verify_and_the_hooks_show_a_hostile_tree_name_visibly(tmp_path, git_dispatch):
    server = bare(tmp_path)
    install(open_repo(str(server)), ["pre-receive"])
    repo = configured_client(tmp_path, "a", server)
    log_decision(repo)
    install(open_repo(str(repo)), ["pre-push"])
    foreign_file_on_top(repo)
    r = cli(repo, "verify")
    assert r.code == 1 and "foreign-file" in r.out, r
    assert "\x1b" not in r.out and "\x07" not in r.out and "<U+001B>" in r.out, r
    for extra in (["--no-verify"], []):  # the server's pre-receive, then the client's pre-push
        code, err = git_push(repo, "refs/lifeline/main", flags=tuple(extra))
        assert code != 0 and "foreign-file" in err, err
        assert "\x1b" not in err and "\x07" not in err, err


def test_import_from_an_adr_directory_shows_a_titles_hidden_characters_visibly(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    adrs = tmp_path / "adr"
    adrs.mkdir()
    (adrs / "0001-use-sqlite.md").write_text("# Use \u202eSQLite\n\n## Context\n\nSmall data.\n")
    r = cli(repo, "import", "--from", str(adrs))
    assert r.code == 0, r
    assert "\u202e" not in r.out and "<U+202E>" in r.out, r
