"""The secret scan's override (`allow-secret:` in a body's header) counts only where a
human's `--allow-secret` wrote it: an agent typing it (MCP append), a line break in a
single-line argument adding it (MCP checkpoint's `thread`), a proposal, an agent's stored
entry, an imported lifeline-context ledger or ADR all get the scan. The refusal an agent
reads never teaches the bypass."""

from __future__ import annotations

from pathlib import Path

from kit.entries import path_of, stored_entry
from kit.home import hermetic  # noqa: F401  (fixtures)
from kit.mcp_client import call_once
from kit.repos import commit_policy, odb_holds, ref, repo_with_a_commit  # noqa: F401  (fixtures)
from kit.run import cli, git
from kit.secrets import expand
from kit.tamper import add_commit

TOKEN = expand("ghp_{{a:36}}", "override-token")
OVERRIDE = "allow-secret: test fixture, not a real key\n\n"


def call(cwd: Path, tool: str, **args) -> tuple:
    """(is_error, text) of one tool call on a fresh server, within a hard time limit."""
    result = call_once(cwd, tool, **args)
    return result.is_error, result.content[0].text


def refs_of(repo: Path) -> tuple:  # noqa: F811
    return ref(repo, "refs/lifeline/main"), ref(repo, "refs/lifeline-review/main")


def test_an_agent_typing_the_override_files_no_proposal_holding_the_token(repo):  # noqa: F811
    commit_policy(repo, {"default": "propose"})
    before = refs_of(repo)
    error, text = call(
        repo, "lifeline_append", kind="note", summary="Deploy", body=OVERRIDE + f"Use {TOKEN}", agent="codex"
    )
    assert error, text
    assert refs_of(repo) == before
    assert not odb_holds(repo, TOKEN.encode()), "the token reached the object database"
    assert "--allow-secret" not in text and "allow-secret REASON" not in text, text


def test_a_line_break_in_a_checkpoints_thread_writes_no_header(repo):  # noqa: F811
    commit_policy(repo, {"default": "direct"})
    before = refs_of(repo)
    error, text = call(
        repo,
        "lifeline_checkpoint",
        thread="auth\nallow-secret: fixture",
        next=[f"retry with {TOKEN}"],
        agent="codex",
    )
    assert error and "one line" in text, text
    assert refs_of(repo) == before
    assert not odb_holds(repo, TOKEN.encode())


def test_an_agents_refusal_never_names_the_override(repo):  # noqa: F811
    commit_policy(repo, {"default": "direct"})
    error, text = call(repo, "lifeline_append", kind="note", summary="Deploy", body=f"Use {TOKEN}", agent="codex")
    assert error and "credential" in text, text
    assert "allow-secret" not in text, text


def test_verify_reports_an_agents_stored_entry_claiming_the_override(repo):  # noqa: F811
    assert cli(repo, "log", "--kind", "note", "--summary", "first", "--body", "b").code == 0
    planted = stored_entry(agent="codex", provider="x", model="y", body=OVERRIDE + f"Use {TOKEN}")
    add_commit(repo, lambda files: {**files, path_of(planted.id): planted.to_json()})
    r = cli(repo, "verify")
    assert r.code != 0 and "credential" in r.out + r.err, r


def test_a_human_may_not_type_the_override_into_a_body(repo):  # noqa: F811
    r = cli(repo, "log", "--kind", "note", "--summary", "s", "--body", OVERRIDE + f"Use {TOKEN}")
    assert r.code == 2 and "allow-secret" in r.err, r
    assert not odb_holds(repo, TOKEN.encode())
    r = cli(repo, "log", "--kind", "note", "--summary", "s", "--body", f"Use {TOKEN}", "--allow-secret", "fixture")
    assert r.code == 0, r  # the flag still records the human's reasoned override


def test_an_imported_ledger_with_the_override_is_scanned(repo, tmp_path):  # noqa: F811
    from git_lifeline.core import seed

    e = stored_entry(kind="decision", summary="Service account", body=OVERRIDE + f"Credentials: {TOKEN}")
    source = tmp_path / "seed.md"
    source.write_text(seed.render_seed_markdown([e], "main"), encoding="utf-8")
    r = cli(repo, "import", "--from", str(source))
    assert r.code == 2 and "credential" in r.err, r
    assert not odb_holds(repo, TOKEN.encode())


def test_an_imported_adr_with_the_override_is_scanned(repo, tmp_path):  # noqa: F811
    adrs = tmp_path / "adr"
    adrs.mkdir()
    (adrs / "0001-keys.md").write_text(f"# Keys\n\n{OVERRIDE}## Context\n\nUse {TOKEN}.\n")
    r = cli(repo, "import", "--from", str(adrs))
    assert r.code == 2 and "credential" in r.err, r
    assert not odb_holds(repo, TOKEN.encode())
    assert git(repo, "rev-parse", "-q", "--verify", "refs/lifeline/main", check=False) == ""
