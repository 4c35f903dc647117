"""`git lifeline status` (the ledger at a glance) and `git lifeline doctor` (the setup checked,
with a fix for each problem), on healthy and on broken setups."""

from __future__ import annotations

import json

from kit.home import (
    hermetic,  # noqa: F401
    installed_on_path,
)
from kit.repos import commit_policy, log_entry, make_repo, project_on_remote  # noqa: F401
from kit.run import Via, cli, git

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace


def team(tmp_path):
    remote, a = project_on_remote(tmp_path, "a", upstream=True)
    return remote, a


def status(repo) -> dict:
    r = cli(repo, "status", "--json", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    return json.loads(r.out)


def checks(repo) -> tuple:
    r = cli(repo, "doctor", "--json", via=Via.THIS_PROCESS)
    data = json.loads(r.out)
    return r.code, {c["name"]: c for c in data["checks"] if c["level"] != "ok"}, data


def test_status_shows_each_line_against_its_remote_and_what_waits(tmp_path):
    remote, a = team(tmp_path)
    for s in ("Database: PostgreSQL", "Queue: RabbitMQ"):
        assert cli(a, "log", "--kind", "decision", "--summary", s, "--body", "Why.", via=Via.THIS_PROCESS).code == 0
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    assert cli(a, "log", "--kind", "note", "--summary", "unpushed", "--body", "b", via=Via.THIS_PROCESS).code == 0
    Agents(Workspace.open(str(a)).ledger()).write(Draft("decision", "Cache: Redis", "Sessions.", agent="codex"))
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    assert cli(b, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS).code == 0
    assert cli(b, "log", "--kind", "note", "--summary", "from b", "--body", "b", via=Via.THIS_PROCESS).code == 0
    assert cli(b, "push", via=Via.THIS_PROCESS).code == 0
    assert cli(a, "fetch", via=Via.THIS_PROCESS).code == 0
    main = status(a)["lines"][0]
    assert main["line"] == "main" and main["entries"] == 3 and main["pending"] == 1
    assert (main["ahead"], main["behind"], main["unpushed"], main["incoming"]) == (1, 1, 1, 1)
    assert main["projection"]["state"] == "current"
    text = cli(a, "status", via=Via.THIS_PROCESS).out
    assert "1 entry to push (git lifeline push origin)" in text and "1 entry to pull" in text, text
    assert "1 proposal(s) pending" in text and "policy: built-in default" in text


def test_status_shows_stale_and_conflicting_decisions_and_a_projection_left_behind(repo):
    log_entry(repo, "decision", "Auth: sessions", "paths: app.py\nsubject: auth\n\nSimple.", via=Via.THIS_PROCESS)
    log_entry(repo, "decision", "Auth: JWT", "subject: auth\n\nStateless.", via=Via.THIS_PROCESS)
    (repo / "app.py").write_text("print('auth')\n")
    git(repo, "add", "app.py")
    later = f"@{int(__import__('time').time()) + 3600} +0000"
    git(repo, "commit", "-q", "-m", "auth", env={"GIT_AUTHOR_DATE": later, "GIT_COMMITTER_DATE": later})
    # a write through the MCP door's confined workspace never touches LIFELINE.md
    confined = Workspace.open(str(repo), confined=True)
    commit_policy(repo, {"default": "direct"})
    Agents(confined.ledger()).write(Draft("note", "agent note", "why", agent="claude-code"))
    main = status(repo)["lines"][0]
    assert main["stale"] == 1 and main["conflicts"] == 1
    assert main["projection"]["state"] == "behind" and "git lifeline render" in main["projection"]["detail"]
    assert cli(repo, "render", via=Via.THIS_PROCESS).code == 0
    assert status(repo)["lines"][0]["projection"]["state"] == "current"


def test_status_reports_agent_setup_hooks_and_the_semantic_model(repo, monkeypatch):
    installed_on_path(monkeypatch)
    before = status(repo)
    assert before["agents"]["mcp"] == "no .mcp.json" and before["hooks"]["states"]["pre-push"] == "absent"
    assert before["semantic"]["configured"] is None
    assert cli(repo, "init", "--hooks", via=Via.THIS_PROCESS).code == 0
    git(repo, "config", "lifeline.semantic.model", str(repo / "no-model-here"))
    after = status(repo)
    assert after["agents"]["mcp"] == "git lifeline mcp"
    assert after["agents"]["rules"]["CLAUDE.md"] == "current" and after["agents"]["rules"]["GEMINI.md"] == "absent"
    assert after["agents"]["claude_hooks"]["SessionStart"] == "git lifeline agent-hook session-start"
    assert after["hooks"]["states"]["pre-push"] == "installed"
    assert after["semantic"]["state"].startswith("missing")


def test_doctor_passes_a_healthy_setup(tmp_path, monkeypatch):
    installed_on_path(monkeypatch)
    _remote, a = team(tmp_path)
    assert cli(a, "init", "--hooks", via=Via.THIS_PROCESS).code == 0
    code, bad, data = checks(a)
    assert code == 0 and data["ok"], bad
    assert not [c for c in bad.values() if c["level"] == "problem"]
    r = cli(a, "doctor", via=Via.THIS_PROCESS)
    assert r.code == 0 and "no problem found" in r.out, r


def test_doctor_finds_each_broken_setup_and_prints_its_fix(tmp_path, monkeypatch):
    installed_on_path(monkeypatch)
    remote, a = team(tmp_path)
    assert (
        cli(
            a, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID.", via=Via.THIS_PROCESS
        ).code
        == 0
    )
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    for _ in range(3):
        (a / "README").write_text((a / "README").read_text() + "more\n")
        git(a, "commit", "-q", "-am", "more")
    git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", "--depth", "1", remote.as_uri(), str(b))
    assert cli(b, "init", "--hooks", "--no-pull", via=Via.THIS_PROCESS).code == 0
    assert checks(b)[1]["ledger"]["level"] == "note", "not fetched yet: the remote may hold a ledger"
    git(b, "fetch", "-q", "origin")  # init set the refspecs: a plain fetch brings the remote's lines
    code, bad, _ = checks(b)
    assert bad["history"]["fix"] == "git fetch --unshallow"
    assert bad["ledger"]["level"] == "problem" and bad["ledger"]["fix"] == "git lifeline pull origin"
    # the MCP entry names an interpreter that is gone
    doc = json.loads((b / ".mcp.json").read_text())
    doc["mcpServers"]["lifeline"] = {
        "command": str(tmp_path / "gone" / "python"),
        "args": ["-m", "git_lifeline", "mcp"],
    }
    (b / ".mcp.json").write_text(json.dumps(doc))
    # hooks installed where git no longer looks
    git(b, "config", "core.hooksPath", ".husky")
    # a policy that cannot be parsed, on the branch it is read from (origin's default branch)
    commit_policy(a, {"default": "yolo"})
    git(a, "push", "-q", "origin", "main")
    git(b, "fetch", "-q", "origin")
    code, bad, _ = checks(b)
    assert code == 1
    assert bad["mcp"]["level"] == "problem" and "git lifeline init" in bad["mcp"]["fix"]
    assert bad["hooks"]["level"] == "problem" and ".husky" in bad["hooks"]["detail"]
    assert bad["hooks"]["fix"] == "git lifeline hooks install"
    assert bad["policy"]["level"] == "problem" and "default" in bad["policy"]["detail"]
    text = cli(b, "doctor", via=Via.THIS_PROCESS)
    assert text.code == 1 and "fix: git fetch --unshallow" in text.out and "problem(s)" in text.out, text
    # init repairs its own MCP entry; the hooks go where git looks
    assert cli(b, "init", "--hooks", "--no-pull", via=Via.THIS_PROCESS).code == 0
    assert json.loads((b / ".mcp.json").read_text())["mcpServers"]["lifeline"] == {
        "command": "git",
        "args": ["lifeline", "mcp"],
    }
    _, bad, _ = checks(b)
    assert "mcp" not in bad and "hooks" not in bad, (sorted(bad), bad.get("mcp"), bad.get("hooks"))


def test_doctor_says_when_the_hooks_cannot_find_git_lifeline(repo, monkeypatch):
    assert cli(repo, "init", "--hooks", "--no-mcp", "--no-agents", via=Via.THIS_PROCESS).code == 0
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, bad, _ = checks(repo)
    assert code == 1 and "not on PATH" in bad["hooks"]["detail"], bad
