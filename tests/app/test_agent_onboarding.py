"""`git lifeline init` tells coding agents about the ledger: a marked section in their rules
files and Claude Code's session hooks, idempotently and without touching anyone else's text.
The hook commands it writes are run here as the client runs them (sh -c, JSON on stdin)."""

from __future__ import annotations

import json

from kit.home import (
    hermetic,  # noqa: F401
    installed_on_path,
)
from kit.repos import commit_policy, log_entry, make_repo, ref, repo_with_a_commit  # noqa: F401
from kit.run import Via, cli, git, run_as_client

from git_lifeline.app.agent_files import BEGIN, END, SECTION
from git_lifeline.app.agent_hooks import HOOK_LIMIT
from git_lifeline.app.draft import Draft

TEAM_TEXT = "# Our conventions\n\nUse tabs. Never force-push main.\n"


def settings(repo, name: str = "settings.json") -> dict:
    return json.loads((repo / ".claude" / name).read_text())


def hook_command(repo, event: str) -> str:
    """The command init wrote: in the personal settings when it names this machine's interpreter."""
    local = (repo / ".claude" / "settings.local.json").exists()
    groups = settings(repo, "settings.local.json" if local else "settings.json")["hooks"][event]
    return next(h["command"] for g in groups for h in g["hooks"] if "agent-hook" in h["command"])


def test_init_adds_its_section_and_hooks_and_keeps_the_teams_text_and_settings(repo, monkeypatch):
    installed_on_path(monkeypatch)
    (repo / "CLAUDE.md").write_text(TEAM_TEXT)
    (repo / ".claude").mkdir()
    theirs = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        },
    }
    (repo / ".claude" / "settings.json").write_text(json.dumps(theirs))
    r = cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith(TEAM_TEXT) and claude.count(BEGIN) == 1 and claude.rstrip().endswith(END)
    assert (repo / "AGENTS.md").read_text() == SECTION
    doc = settings(repo)
    assert doc["permissions"] == theirs["permissions"] and doc["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    starts = doc["hooks"]["SessionStart"]
    assert starts[0] == theirs["hooks"]["SessionStart"][0], "the team's own SessionStart hook is kept, first"
    assert (
        starts[1]["matcher"] == "startup|resume|clear|compact"
        and starts[1]["hooks"][0]["command"] == "git lifeline agent-hook session-start"
    )
    assert "agent-hook stop" in doc["hooks"]["Stop"][0]["hooks"][0]["command"]
    before = {p: (repo / p).read_bytes() for p in ("CLAUDE.md", "AGENTS.md", ".claude/settings.json")}
    r = cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0 and "section is current" in r.out and "already has the hooks" in r.out, r
    assert {p: (repo / p).read_bytes() for p in before} == before, "a second init changes nothing"


def test_init_rewrites_only_its_own_section_and_refuses_broken_markers(repo):
    cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS)
    text = (repo / "CLAUDE.md").read_text()
    edited = "Intro the team added.\n\n" + text.replace("Read when a session starts", "Read sometimes") + "\nOutro.\n"
    (repo / "CLAUDE.md").write_text(edited)
    r = cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0 and "CLAUDE.md: updated" in r.out, r
    assert (repo / "CLAUDE.md").read_text() == "Intro the team added.\n\n" + SECTION + "\nOutro.\n"
    broken = TEAM_TEXT + BEGIN + " -->\nhalf a section, no end marker\n"
    (repo / "AGENTS.md").write_text(broken)
    (repo / ".claude" / "settings.json").write_text("{not json")
    r = cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0 and "left it untouched" in r.err, r
    assert (repo / "AGENTS.md").read_text() == broken
    assert (repo / ".claude" / "settings.json").read_text() == "{not json"


def test_no_agents_writes_no_agent_file_and_other_clients_are_options(repo):
    assert cli(repo, "init", "--no-mcp", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS).code == 0
    assert not any((repo / p).exists() for p in ("CLAUDE.md", "AGENTS.md", ".claude"))
    r = cli(
        repo, "init", "--no-mcp", "--no-hooks", "--agents", "cursor,gemini", "--agents", "copilot", via=Via.THIS_PROCESS
    )
    assert r.code == 0, r
    cursor = (repo / ".cursor" / "rules" / "git-lifeline.mdc").read_text()
    assert cursor.startswith("---\n") and "alwaysApply: true" in cursor and SECTION in cursor
    assert SECTION in (repo / "GEMINI.md").read_text()
    assert SECTION in (repo / ".github" / "copilot-instructions.md").read_text()
    assert not (repo / "CLAUDE.md").exists() and not (repo / ".claude").exists()
    r = cli(repo, "init", "--no-mcp", "--no-hooks", "--agents", "emacs", via=Via.THIS_PROCESS)
    assert r.code == 2 and "unknown agent client" in r.err, r
    r = cli(repo, "init", "--no-mcp", "--no-hooks", "--agents", "claude", "--no-agents", via=Via.THIS_PROCESS)
    assert r.code == 2, r


def test_the_rules_ask_for_a_checkpoint_and_grant_no_authority_over_code():
    assert "lifeline_checkpoint" in SECTION and "Before you stop" in SECTION
    assert "Nothing here asks or allows you to commit, push" in SECTION
    # a pointer, not a copy: when to read and write, and which tools; the ledger itself says the rest
    assert "git lifeline context" in SECTION and len(SECTION) < 2000
    assert "--agent <your-name>" in SECTION, "a shell write without an agent name would bypass the policy"


def test_the_session_start_command_init_wrote_prints_the_context_and_nothing_outside(repo, tmp_path):
    log_entry(repo, "decision", "Database: PostgreSQL", "Auditors need ACID.", via=Via.THIS_PROCESS)
    log_entry(repo, "incident", "Disk full on db-1", "Logs were not rotated.", via=Via.THIS_PROCESS)
    assert cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    command = hook_command(repo, "SessionStart")
    for source in ("startup", "resume", "compact"):
        out = run_as_client(command, repo, {"session_id": "s1", "source": source, "cwd": str(repo)})
        assert out.returncode == 0, out.stderr
        text = out.stdout.decode()
        assert text.startswith("# Lifeline context: main") and "Database: PostgreSQL" in text, text
    sub = repo / "src"
    sub.mkdir()
    assert "Database: PostgreSQL" in run_as_client(command, sub, {"session_id": "s2"}).stdout.decode()
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    out = run_as_client(command, elsewhere, {"session_id": "s3", "cwd": str(elsewhere)})
    assert out.returncode == 0 and out.stdout == b"" and out.stderr == b"", out


def test_the_session_start_output_is_bounded_and_says_what_it_left_out(repo):
    from git_lifeline.app.workspace import Workspace

    led = Workspace.open(str(repo)).ledger()
    entries = [
        led.plan_entry(
            Draft(
                kind="decision",
                summary=f"Service {i}: talks to queue {i} 🚀",
                body="Because " + "the reasons are long. " * 30,
            )
        )
        for i in range(400)
    ]
    led.append(entries)
    assert cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    out = run_as_client(hook_command(repo, "SessionStart"), repo, {"session_id": "big"})
    text = out.stdout.decode()
    assert len(text.encode("utf-16-le")) // 2 <= HOOK_LIMIT, "the client would replace it with a 2 KB preview"
    assert text.startswith("# Lifeline context: main\n\n## Decisions in force"), text[:200]
    assert "omitted for the budget" in text


def test_stop_asks_once_for_a_checkpoint_when_the_session_changed_code(repo):
    commit_policy(repo, {"default": "propose", "kinds": {}})  # a proposed checkpoint counts too
    assert cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    start, stop = hook_command(repo, "SessionStart"), hook_command(repo, "Stop")
    run_as_client(start, repo, {"session_id": "a", "source": "startup"})
    assert run_as_client(stop, repo, {"session_id": "a"}).stdout == b"", "no code changed: nothing to ask"
    (repo / "app.py").write_text("print('changed')\n")
    out = run_as_client(stop, repo, {"session_id": "a", "stop_hook_active": False})
    answer = json.loads(out.stdout)
    assert answer["decision"] == "block" and "lifeline_checkpoint" in answer["reason"]
    assert "does not ask you to commit, push or change any code" in answer["reason"]
    assert run_as_client(stop, repo, {"session_id": "a"}).stdout == b"", "it asks once, never in a loop"
    # a new session that changes code and checkpoints (here through the CLI, named) is let go
    run_as_client(start, repo, {"session_id": "b", "source": "startup"})
    (repo / "app.py").write_text("print('changed again')\n")
    assert run_as_client(stop, repo, {"session_id": "b", "stop_hook_active": True}).stdout == b""
    r = cli(repo, "checkpoint", "--agent", "claude-code", "--next", "wire the queue", via=Via.THIS_PROCESS)
    assert r.code == 0 and "proposal" in r.out, r
    assert run_as_client(stop, repo, {"session_id": "b"}).stdout == b""
    # a commit is a change too, and a resumed session keeps the note of its start
    run_as_client(start, repo, {"session_id": "c", "source": "startup"})
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "change")
    run_as_client(start, repo, {"session_id": "c", "source": "resume"})
    assert json.loads(run_as_client(stop, repo, {"session_id": "c"}).stdout)["decision"] == "block"
    assert ref(repo, "refs/lifeline/main") is None, "the hooks never write the ledger"


def test_the_hook_command_and_mcp_entry_name_the_portable_command_when_git_lifeline_is_on_path(repo, monkeypatch):
    installed_on_path(monkeypatch)
    assert cli(repo, "init", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    assert hook_command(repo, "SessionStart") == "git lifeline agent-hook session-start"
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["lifeline"] == {
        "command": "git",
        "args": ["lifeline", "mcp"],
    }


def test_init_in_a_linked_worktree_writes_into_that_worktree(tmp_path):
    main = make_repo(tmp_path / "main")
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt), "-b", "feature")
    assert cli(wt, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    assert (wt / "CLAUDE.md").exists() and not (main / "CLAUDE.md").exists()
