"""`git lifeline init` gives Cursor, Codex and Gemini CLI their session-start hook, their end-of-turn
hook (it asks once for a checkpoint) and MCP server
in the form each client's documentation gives (the schemas below are taken from those pages,
cited in docs/INTEGRATION.md), merged into what the user has, and the hook answers in the
channel the client reads. A command naming this machine's interpreter never lands in a file
the team commits."""

from __future__ import annotations

import json
import sys

import jsonschema
import pytest
from kit.home import (
    hermetic,  # noqa: F401
    installed_on_path,
)
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import Via, cli, git, run_as_client

from git_lifeline.app.agent_hooks import HOOK_LIMIT

COMMAND = {"type": "string", "minLength": 1}
# Claude Code's and Codex's groups: {"matcher"?, "hooks": [{"type": "command", "command", "timeout"?}]}
GROUPS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "matcher": {"type": "string"},
            "hooks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type", "command"],
                    "properties": {
                        "type": {"const": "command"},
                        "command": COMMAND,
                        "timeout": {"type": "number"},
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                    },
                },
            },
        },
    },
}
SERVER = {
    "type": "object",
    "required": ["command"],
    "properties": {"command": COMMAND, "args": {"type": "array", "items": {"type": "string"}}},
}
SERVERS = {"type": "object", "required": ["lifeline"], "properties": {"lifeline": SERVER}}
# cursor.com/docs/agent/hooks: a schema version and camelCase events of flat {command} objects
CURSOR_HOOKS = {
    "type": "object",
    "required": ["version", "hooks"],
    "properties": {
        "version": {"const": 1},
        "hooks": {
            "type": "object",
            "required": ["sessionStart", "stop"],
            "properties": {
                "sessionStart": {
                    "type": "array",
                    "items": {"type": "object", "required": ["command"], "properties": {"command": COMMAND}},
                },
                # the stop hook may cap the follow-ups it causes (loop_limit)
                "stop": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["command"],
                        "properties": {"command": COMMAND, "loop_limit": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}
# developers.openai.com/codex/hooks: .codex/hooks.json, the groups of Claude Code's form
CODEX_HOOKS = {
    "type": "object",
    "required": ["hooks"],
    "properties": {
        "hooks": {
            "type": "object",
            "required": ["SessionStart", "Stop"],
            "properties": {"SessionStart": GROUPS, "Stop": GROUPS},
        }
    },
}
# geminicli.com/docs/hooks/reference: hooks by event (timeout in ms) and mcpServers, one settings.json
GEMINI_SETTINGS = {
    "type": "object",
    "required": ["hooks", "mcpServers"],
    "properties": {
        "hooks": {
            "type": "object",
            "required": ["SessionStart", "AfterAgent"],
            "properties": {"SessionStart": GROUPS, "AfterAgent": GROUPS},
        },
        "mcpServers": SERVERS,
    },
}
CURSOR_MCP = {"type": "object", "required": ["mcpServers"], "properties": {"mcpServers": SERVERS}}
# Codex's session-start output (its published schema: no other key in hookSpecificOutput)
HOOK_SPECIFIC_OUTPUT = {
    "type": "object",
    "required": ["hookSpecificOutput"],
    "additionalProperties": False,
    "properties": {
        "hookSpecificOutput": {
            "type": "object",
            "required": ["hookEventName", "additionalContext"],
            "additionalProperties": False,
            "properties": {"hookEventName": {"const": "SessionStart"}, "additionalContext": {"type": "string"}},
        }
    },
}
# Codex's published stop.command.output schema (codex-rs/hooks/schema/generated): these keys only;
# a `block` needs a reason that is not blank
CODEX_STOP_OUTPUT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["decision", "reason"],
    "properties": {
        "continue": {"type": "boolean"},
        "decision": {"const": "block"},
        "reason": {"type": "string", "pattern": ".*\\S.*"},
        "stopReason": {"type": ["string", "null"]},
        "suppressOutput": {"type": "boolean"},
        "systemMessage": {"type": ["string", "null"]},
    },
}
# cursor.com/docs/agent/hooks: stop answers with followup_message, sent as the next user message
CURSOR_STOP_OUTPUT = {
    "type": "object",
    "required": ["followup_message"],
    "additionalProperties": False,
    "properties": {"followup_message": {"type": "string", "minLength": 1}},
}
# geminicli.com/docs/hooks/reference, AfterAgent: "deny" (alias "block") sends `reason` as a new prompt
GEMINI_AFTER_AGENT_OUTPUT = {
    "type": "object",
    "required": ["decision", "reason"],
    "properties": {"decision": {"enum": ["deny", "block"]}, "reason": {"type": "string", "minLength": 1}},
}
CURSOR_OUTPUT = {
    "type": "object",
    "required": ["additional_context"],
    "properties": {"additional_context": {"type": "string"}},
}


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_cursor_codex_and_gemini_get_a_hook_and_server_of_their_documented_shape_merged_into_theirs(repo, monkeypatch):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; on 3.10 init prints Codex's table instead
    installed_on_path(monkeypatch)
    (repo / ".gemini").mkdir()
    theirs = {"theme": "Dracula", "mcpServers": {"github": {"command": "gh-mcp"}}}
    (repo / ".gemini" / "settings.json").write_text(json.dumps(theirs))
    (repo / ".cursor").mkdir()
    their_hook = {"command": "./audit.sh"}
    (repo / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": {"afterFileEdit": [their_hook]}}))
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text('model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    r = cli(repo, "init", "--agents", "cursor,codex,gemini", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0, r

    cursor = load(repo / ".cursor" / "hooks.json")
    jsonschema.validate(cursor, CURSOR_HOOKS)
    assert cursor["hooks"]["afterFileEdit"] == [their_hook], "the user's own Cursor hook is kept"
    jsonschema.validate(load(repo / ".cursor" / "mcp.json"), CURSOR_MCP)
    codex = load(repo / ".codex" / "hooks.json")
    jsonschema.validate(codex, CODEX_HOOKS)
    assert codex["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    config = tomllib.loads((repo / ".codex" / "config.toml").read_text())
    assert config["model"] == "o4" and config["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert config["mcp_servers"]["lifeline"] == {"command": "git", "args": ["lifeline", "mcp"]}
    gemini = load(repo / ".gemini" / "settings.json")
    jsonschema.validate(gemini, GEMINI_SETTINGS)
    assert gemini["theme"] == "Dracula" and gemini["mcpServers"]["github"] == {"command": "gh-mcp"}
    assert gemini["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] >= 1000, "Gemini CLI counts milliseconds"

    files = [".cursor/hooks.json", ".cursor/mcp.json", ".codex/hooks.json", ".codex/config.toml"]
    files.append(".gemini/settings.json")
    before = {f: (repo / f).read_bytes() for f in files}
    again = cli(repo, "init", "--agents", "cursor,codex,gemini", "--no-hooks", via=Via.THIS_PROCESS)
    assert again.code == 0 and {f: (repo / f).read_bytes() for f in files} == before, "a second init changes nothing"


def test_each_clients_session_start_hook_answers_in_the_channel_that_client_reads(repo, monkeypatch):
    installed_on_path(monkeypatch)
    cli(repo, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID.", via=Via.THIS_PROCESS)
    assert cli(repo, "init", "--agents", "cursor,codex,gemini", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    cursor = load(repo / ".cursor" / "hooks.json")["hooks"]["sessionStart"][0]["command"]
    codex = load(repo / ".codex" / "hooks.json")["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    gemini = load(repo / ".gemini" / "settings.json")["hooks"]["SessionStart"][0]["hooks"][0]["command"]

    # Cursor sends the project's folders, not a cwd, and runs the hook from anywhere
    out = run_as_client(cursor, repo.parent, {"conversation_id": "c1", "workspace_roots": [str(repo)]})
    answer = json.loads(out.stdout)
    jsonschema.validate(answer, CURSOR_OUTPUT)
    assert "Database: PostgreSQL" in answer["additional_context"], out
    for command in (codex, gemini):
        out = run_as_client(command, repo, {"session_id": "s1", "source": "clear", "cwd": str(repo)})
        answer = json.loads(out.stdout)  # Gemini CLI parses stdout as JSON only: nothing else on it
        jsonschema.validate(answer, HOOK_SPECIFIC_OUTPUT)
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert "Database: PostgreSQL" in context and len(context) <= HOOK_LIMIT, out
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    out = run_as_client(gemini, elsewhere, {"session_id": "s2", "cwd": str(elsewhere)})
    assert out.returncode == 0 and out.stdout == b"", "outside a repository: no output at all"


def test_a_machine_specific_command_goes_to_local_files_never_into_what_the_team_commits(repo):
    # git-lifeline is not on PATH here: the commands name this machine's interpreter
    (repo / ".claude").mkdir()
    team = {"permissions": {"allow": ["Bash(make)"]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(team))
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"lifeline": {"command": "git", "args": ["lifeline", "mcp"]}}})
    )
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text("{}\n")
    git(repo, "add", ".claude/settings.json", ".mcp.json", ".gemini/settings.json")
    git(repo, "commit", "-q", "-m", "the team's client files")
    tracked = {p: (repo / p).read_bytes() for p in (".claude/settings.json", ".mcp.json", ".gemini/settings.json")}
    r = cli(repo, "init", "--agents", "claude,cursor,gemini", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    assert {p: (repo / p).read_bytes() for p in tracked} == tracked, "no tracked file gets a machine path"
    said = r.out + r.err
    assert ".mcp.json is tracked" in said and ".gemini/settings.json is tracked" in said, r
    local = load(repo / ".claude" / "settings.local.json")
    starts = local["hooks"]["SessionStart"]
    assert starts[0]["matcher"] == "startup|resume|clear|compact" and sys.executable in starts[0]["hooks"][0]["command"]
    assert "settings.local.json" in r.out
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    written = [".claude/settings.local.json", ".cursor/hooks.json", ".cursor/mcp.json"]
    assert all(w not in status for w in written), f"what names this machine stays out of commits: {status}"


def test_an_earlier_inits_hooks_leave_the_shared_settings_and_its_matcher_takes_in_clear(repo, monkeypatch):
    # what an earlier init wrote into the committed settings when git-lifeline was not on PATH
    (repo / ".claude").mkdir()
    old_start = f"{sys.executable} -P -m git_lifeline agent-hook session-start"
    earlier = {
        "hooks": {
            "SessionStart": [
                {"matcher": "startup|resume|compact", "hooks": [{"type": "command", "command": old_start}]},
                {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]},
            ]
        }
    }
    (repo / ".claude" / "settings.json").write_text(json.dumps(earlier))
    assert cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    shared = load(repo / ".claude" / "settings.json")
    assert shared["hooks"]["SessionStart"] == [earlier["hooks"]["SessionStart"][1]], "only the team's hook stays"
    # on PATH now: the portable command goes into the shared file, with every session start
    installed_on_path(monkeypatch)
    (repo / ".claude" / "settings.local.json").unlink()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps(
            earlier
            | {
                "hooks": {
                    "SessionStart": [
                        {
                            "matcher": "startup|resume|compact",
                            "hooks": [{"type": "command", "command": "git lifeline agent-hook session-start"}],
                        }
                    ]
                }
            }
        )
    )
    assert cli(repo, "init", "--no-mcp", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    assert (
        load(repo / ".claude" / "settings.json")["hooks"]["SessionStart"][0]["matcher"]
        == "startup|resume|clear|compact"
    )


def test_the_other_mcp_clients_block_is_printed_on_the_first_run_only_or_when_asked(repo):
    first = cli(repo, "init", "--no-hooks", via=Via.THIS_PROCESS)
    assert first.code == 0 and "Claude Desktop" in first.out, first
    again = cli(repo, "init", "--no-hooks", via=Via.THIS_PROCESS)
    assert again.code == 0 and "Claude Desktop" not in again.out and "--verbose" in again.out, again
    verbose = cli(repo, "init", "--no-hooks", "--verbose", via=Via.THIS_PROCESS)
    assert "Claude Desktop" in verbose.out, verbose


def test_status_and_doctor_check_each_clients_files_and_name_a_broken_one(repo, monkeypatch):
    installed_on_path(monkeypatch)
    assert cli(repo, "init", "--agents", "cursor,codex,gemini", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    status = cli(repo, "status", via=Via.THIS_PROCESS)
    for client in ("cursor", "codex", "gemini"):
        assert f"agents: {client}: session-start hook set; mcp server set" in status.out, status
    (repo / ".gemini" / "settings.json").write_text("{broken")
    doctor = cli(repo, "doctor", via=Via.THIS_PROCESS)
    assert doctor.code != 0 and "gemini hook" in doctor.out and "not valid JSON" in doctor.out, doctor
    assert "cursor hook: the session-start hook is set" in doctor.out, doctor


def test_a_client_folder_that_links_out_of_the_work_tree_is_never_written_through(repo, tmp_path, monkeypatch):
    installed_on_path(monkeypatch)
    outside = tmp_path / "their-home-cursor"
    outside.mkdir()
    (repo / ".cursor").symlink_to(outside, target_is_directory=True)
    (repo / ".gemini").symlink_to(outside, target_is_directory=True)
    # the hook and server files (the rules files' writer is held to the same rule elsewhere)
    r = cli(repo, "init", "--agents", "cursor,gemini", "--no-hooks", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    written = {p.name for p in outside.iterdir()}
    assert not written & {"hooks.json", "mcp.json", "settings.json"}, "never through a link out of the work tree"
    assert "nothing was written" in r.err or "left it untouched" in r.err, r


def test_each_clients_end_of_turn_hook_asks_once_for_a_checkpoint_in_its_documented_form(repo, monkeypatch):
    installed_on_path(monkeypatch)
    cli(repo, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID.", via=Via.THIS_PROCESS)
    assert cli(repo, "init", "--agents", "cursor,codex,gemini", "--no-hooks", via=Via.THIS_PROCESS).code == 0
    cursor = load(repo / ".cursor" / "hooks.json")["hooks"]
    codex = load(repo / ".codex" / "hooks.json")["hooks"]
    gemini = load(repo / ".gemini" / "settings.json")["hooks"]
    assert cursor["stop"][0]["loop_limit"] == 1, "one follow-up at most: the hook asks once"
    clients = {
        "cursor": (cursor["sessionStart"][0]["command"], cursor["stop"][0]["command"], CURSOR_STOP_OUTPUT),
        "codex": (
            codex["SessionStart"][0]["hooks"][0]["command"],
            codex["Stop"][0]["hooks"][0]["command"],
            CODEX_STOP_OUTPUT,
        ),
        "gemini": (
            gemini["SessionStart"][0]["hooks"][0]["command"],
            gemini["AfterAgent"][0]["hooks"][0]["command"],
            GEMINI_AFTER_AGENT_OUTPUT,
        ),
    }
    for n, (client, (start, stop, shape)) in enumerate(clients.items()):
        # each client's own payload: Cursor names a conversation and the workspace's folders
        if client == "cursor":
            payload = {"conversation_id": f"c{n}", "workspace_roots": [str(repo)], "status": "completed"}
        else:
            payload = {"session_id": f"s{n}", "cwd": str(repo), "hook_event_name": "Stop"}
        assert run_as_client(start, repo, payload).returncode == 0
        (repo / f"work-{client}.txt").write_text("changed\n")  # the session changed code
        out = run_as_client(stop, repo, payload)
        assert out.returncode == 0, out
        answer = json.loads(out.stdout)
        jsonschema.validate(answer, shape)
        assert "lifeline_checkpoint" in json.dumps(answer), answer
        again = run_as_client(stop, repo, payload | ({"loop_count": 1} if client == "cursor" else {}))
        assert again.returncode == 0 and again.stdout == b"", f"{client}: asked once, never twice"
