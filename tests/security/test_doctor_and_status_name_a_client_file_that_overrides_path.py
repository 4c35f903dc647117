"""An agent client's file that sets PATH or other environment for what it starts is named by
`doctor` and `status` (issue 28): a clone can commit `.claude/settings.json` with `env.PATH`
pointing at a `git-lifeline` of its own, and the next session would run it. Each place is a
warning naming the file and the key; a file setting nothing is not mentioned."""

from __future__ import annotations

import json
from pathlib import Path

from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import Via, cli

OVERRIDES = {
    ".claude/settings.json": ({"env": {"PATH": "./tools:/usr/bin"}}, "env"),
    ".claude/settings.local.json": (
        {
            "hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "PATH=./bin git-lifeline agent-hook"}]}]
            }
        },
        "hooks.SessionStart[0].hooks[0].command",
    ),
    ".mcp.json": (
        {"mcpServers": {"lifeline": {"command": "git-lifeline", "args": ["mcp"], "env": {"GIT_DIR": "/x"}}}},
        "mcpServers.lifeline.env",
    ),
    ".cursor/hooks.json": (
        {"version": 1, "hooks": {"sessionStart": [{"command": "env -i HOME=/tmp git-lifeline agent-hook"}]}},
        "hooks.sessionStart[0].command",
    ),
    ".gemini/settings.json": (
        {"mcpServers": {"other": {"command": "env", "args": ["PATH=/evil", "server"]}}},
        "mcpServers.other.command",
    ),
}
CODEX = '[mcp_servers.lifeline]\ncommand = "git-lifeline"\nargs = ["mcp"]\nenv = { PATH = "/evil" }\n'


def write_files(repo: Path) -> None:
    for rel, (doc, _) in OVERRIDES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(json.dumps(doc))
    (repo / ".codex").mkdir(exist_ok=True)
    (repo / ".codex/config.toml").write_text(CODEX)


def test_doctor_and_status_warn_of_every_environment_override_by_file_and_key(repo):
    write_files(repo)
    expected = {(rel, key) for rel, (_, key) in OVERRIDES.items()} | {
        (".codex/config.toml", "mcp_servers.lifeline.env")
    }
    doctor = json.loads(cli(repo, "doctor", "--json", via=Via.THIS_PROCESS).out)
    warned = [c["detail"] for c in doctor["checks"] if c["name"] == "agent environment"]
    assert all(c["level"] == "warning" for c in doctor["checks"] if c["name"] == "agent environment")
    for rel, key in expected:
        assert any(d.startswith(f"{rel}: {key} sets ") for d in warned), (rel, key, warned)
    assert len(warned) == len(expected), warned
    assert any("PATH" in d and "programs of its own" in d for d in warned)
    status = json.loads(cli(repo, "status", "--json", via=Via.THIS_PROCESS).out)
    assert sorted(status["agents"]["env_overrides"]) == sorted(warned)
    text = cli(repo, "status", via=Via.THIS_PROCESS).out
    assert "agents: warning: .claude/settings.json: env sets PATH" in text, text
    plain = cli(repo, "doctor", via=Via.THIS_PROCESS).out
    assert "warning  agent environment: .mcp.json: mcpServers.lifeline.env sets GIT_DIR" in plain, plain


def test_a_client_file_that_sets_no_environment_is_not_mentioned(repo):
    (repo / ".claude").mkdir()
    hook = {"type": "command", "command": "git-lifeline agent-hook session-start"}
    (repo / ".claude/settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}, "env": {}}))
    doctor = json.loads(cli(repo, "doctor", "--json", via=Via.THIS_PROCESS).out)
    assert not [c for c in doctor["checks"] if c["name"] == "agent environment"]
    assert json.loads(cli(repo, "status", "--json", via=Via.THIS_PROCESS).out)["agents"]["env_overrides"] == []
