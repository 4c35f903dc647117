"""`git lifeline pr` on real branches: a branch that edits a governed file is reported in
markdown, GitHub workflow commands and JSON, with its grade and whether it is linked,
and `--fail-on` exits 1 exactly when the range fails the named check."""

from __future__ import annotations

import json
from pathlib import Path

from kit.repos import logged_id
from kit.run import Via, cli, git

from git_lifeline.cli.pr import escape_data, escape_property

FAST = Via.THIS_PROCESS


def commit_file(repo: Path, path: str, text: str, message: str) -> str:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def decision(repo: Path, summary: str, body: str) -> str:
    return logged_id(repo, "decision", summary, body, via=FAST)


def governed_repo(repo: Path) -> dict:
    """main with db/schema.sql (40 lines) governed by a decision, README ungoverned."""
    commit_file(repo, "db/schema.sql", "".join(f"col{n}\n" for n in range(40)), "schema")
    commit_file(repo, "README", "hello\n", "readme")
    d = decision(repo, "Database: PostgreSQL", "paths: db/\n\nACID transactions.")
    git(repo, "checkout", "-q", "-b", "feature")
    return {"decision": d}


def pr_json(repo: Path, *more: str) -> dict:
    res = cli(repo, "pr", "main...feature", "--format", "json", *more, via=FAST)
    assert res.code == 0, res
    return json.loads(res.out)


def test_a_branch_that_edits_a_governed_file_unlinked_is_reported_in_all_formats_and_fails_on_unlinked(repo):
    d = governed_repo(repo)["decision"]
    commit_file(repo, "db/schema.sql", "".join(f"col{n}\n" for n in range(40)) + "extra\n", "add a column")
    commit_file(repo, "README", "hello again\n", "docs")

    doc = pr_json(repo)
    assert doc["version"] == 1 and doc["range"]["commits"] == 2
    [t] = doc["touched"]
    assert (t["id"], t["grade"], t["state"], t["files"], t["lines"]) == (d, "touched", "unlinked", ["db/schema.sql"], 1)
    assert t["stale"] and "touched" in t["stale"]

    md = cli(repo, "pr", "main...feature", via=FAST)
    assert md.code == 0, md
    assert "1 decision governs this change" in md.out and "**touched**" in md.out and "unlinked" in md.out
    assert d[:12] in md.out and "`db/schema.sql`" in md.out

    gh = cli(repo, "pr", "main...feature", "--format", "github", via=FAST)
    assert gh.code == 0, gh
    assert gh.out.startswith("::warning file=db/schema.sql,title=Lifeline%3A touched decision ")

    for check in ("unlinked", "stale"):
        failed = cli(repo, "pr", "main...feature", "--fail-on", check, via=FAST)
        assert failed.code == 1, failed
        assert check in failed.err or "linked nor re-affirmed" in failed.err
    assert cli(repo, "pr", "main...feature", "--fail-on", "conflict", via=FAST).code == 0


def test_a_branch_whose_commit_links_the_decision_passes_fail_on_unlinked_and_stale(repo):
    d = governed_repo(repo)["decision"]
    schema = "".join(f"col{n}\n" for n in range(40)) + "extra\n"
    commit_file(repo, "db/schema.sql", schema, f"add a column\n\nLifeline: {d[:12]}")

    doc = pr_json(repo, "--fail-on", "unlinked", "--fail-on", "stale")
    [t] = doc["touched"]
    assert t["state"] == "linked" and t["stale"] is None
    assert [(e["id"], e["kind"]) for e in doc["linked"]] == [(d, "decision")]
    gh = cli(repo, "pr", "main...feature", "--format", "github", via=FAST)
    assert gh.out.startswith("::notice file=db/schema.sql,")


def test_a_branch_that_touches_no_governed_code_reports_none_and_passes_every_check(repo):
    governed_repo(repo)
    commit_file(repo, "README", "hello again\n", "docs")
    res = cli(repo, "pr", "main...feature", "--fail-on", "unlinked", "--fail-on", "stale", via=FAST)
    assert res.code == 0, res
    assert "no decision in force governs" in res.out


def test_a_range_naming_an_option_or_nothing_is_refused_before_git_reads_it(repo):
    governed_repo(repo)
    for spec in ("--output=/tmp/x...HEAD", "main...--all", "nope...HEAD"):
        res = cli(repo, "pr", "--", spec, via=FAST)
        assert res.code == 2 and "does not name a commit" in res.err, res
        assert res.out == ""


def test_the_default_range_is_the_upstream_against_head(repo, tmp_path):
    d = governed_repo(repo)["decision"]
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main")
    commit_file(repo, "db/schema.sql", "rewritten\n", "rewrite the schema")
    res = cli(repo, "pr", "--format", "json", via=FAST)
    assert res.code == 0, res
    doc = json.loads(res.out)
    assert doc["range"]["base"] == "@{upstream}"
    assert [(t["id"], t["grade"]) for t in doc["touched"]] == [(d, "rewritten")]


def test_workflow_command_values_are_escaped_as_github_documents():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
