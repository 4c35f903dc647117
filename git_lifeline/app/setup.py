"""Setting a repository up for git-lifeline (`git lifeline init` and `policy --init`): the
remote's ledger brought in, the MCP client configuration, what the coding agents are told,
the git hooks, the write policy file. The hooks' verdicts are hooks.py's; how a client
starts git-lifeline is integration.py's; the agents' files are agent_files.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import InputError, LifelineError
from ..git.names import validate_name
from . import hook_files, hooks
from .workspace import Workspace

if TYPE_CHECKING:  # annotations only: integration is loaded by the commands that set MCP up
    from ..git.integrate import PullLine
    from ..git.programs import Probe
    from .agent_files import FileChange
    from .hook_files import HookChange, HookState
    from .integration import Launcher, ServerEntry


@dataclass
class McpSetup:
    status: str  # created | added | updated | kept | invalid | skipped
    detail: str
    snippets: list[tuple[str, str, ServerEntry]] = field(
        default_factory=list
    )  # (client, where, server entry) for the other clients
    entry: Optional[ServerEntry] = None  # the server entry .mcp.json holds now
    check: Optional[Probe] = None  # integration's Probe of that entry (None: not run)
    launcher: Optional[Launcher] = None  # integration.Launcher chosen for this machine
    local: str = ""  # what keeps a machine-specific .mcp.json out of commits ("" when portable)


@dataclass
class RemoteReport:
    remote: Optional[str]  # None: the repository has no remote
    added: list[str]  # fetch refspecs added to the remote's configuration
    pulls: list[PullLine]  # per line the pull looked at
    error: Optional[LifelineError] = None  # why the pull failed (init goes on)


# ---- hooks ----------------------------------------------------------------------
def hooks_dir(ws: Workspace) -> Path:
    return hook_files.hooks_dir(ws.gr)


def install_hooks(ws: Workspace, names: Optional[list[str]] = None) -> list[HookChange]:
    """Install hooks (default: pre-push and post-commit; pre-receive in a bare repository)."""
    return hook_files.install(ws.gr, names)


def uninstall_hooks(ws: Workspace, names: Optional[list[str]] = None) -> list[HookChange]:
    return hook_files.uninstall(ws.gr, names)


def hook_status(ws: Workspace) -> list[HookState]:
    return hook_files.status(ws.gr)


def installed_hooks(ws: Workspace) -> list[str]:
    return [r.name for r in hook_files.status(ws.gr) if r.state == "installed"]


def run_hook(ws: Workspace, name: str, args: list[str], stdin: bytes, line: Optional[str] = None) -> hooks.HookOutcome:
    """An installed hook's verdict (hooks.HookOutcome: messages and exit code)."""
    return hooks.run(ws.gr, name, list(args), stdin, validate_name(line) if line else ws.default_line)


# ---- the remote's ledger ----------------------------------------------------------------
def connect_remote(ws: Workspace, pull: bool = True) -> RemoteReport:
    """Make a plain `git fetch` bring the ledger and its review trails from the shared remote,
    then pull them: a clone made with plain `git clone` finds the project's ledger."""
    from .exchange import pull as pull_lines
    from .exchange import set_refspecs
    from .status import shared_remote

    remote = shared_remote(ws)
    if remote is None:
        return RemoteReport(None, [], [])
    added = set_refspecs(ws, remote)
    if not pull:
        return RemoteReport(remote, added, [])
    try:
        report = pull_lines(ws, remote)
    except LifelineError as exc:
        return RemoteReport(remote, added, [], exc)
    return RemoteReport(remote, added, report.lines)


# ---- MCP clients and agents ------------------------------------------------------------
def setup_mcp(ws: Workspace) -> McpSetup:
    """Add the `lifeline` server to the work tree's .mcp.json (Claude Code's project file),
    with a command checked to start on this machine, and the snippets for other clients."""
    from .client_files import keep_local, machine_specific_refusal
    from .integration import MCP_JSON, install_mcp_json, resolve_launcher, snippets

    if ws.workdir is None:
        return McpSetup("skipped", "a bare repository has no work tree for .mcp.json")
    resolved = resolve_launcher(ws.workdir)
    found = snippets(ws.workdir, resolved.launcher)
    refusal = machine_specific_refusal(ws.gr, ws.workdir, MCP_JSON, resolved.launcher)
    if refusal is not None:  # the team's .mcp.json: nothing of this machine goes in
        return McpSetup("skipped", refusal, found, None, resolved.check, resolved.launcher)
    result = install_mcp_json(ws.workdir, resolved)
    local = ""
    if result.status in ("created", "added", "updated"):
        local = keep_local(ws.gr, ws.workdir, MCP_JSON, resolved.launcher)
    return McpSetup(result.status, result.detail, found, result.entry, result.check, resolved.launcher, local)


def snippets_left(mcp: McpSetup, clients: list[str]) -> list[tuple[str, str, ServerEntry]]:
    """The other clients' snippets, but those init wrote the entry for itself."""
    written = {"cursor": "Cursor", "gemini": "Gemini CLI", "codex": "Codex"}
    done = {written[c] for c in clients if c in written}
    return [s for s in mcp.snippets if s[0] not in done]


def agent_launcher(ws: Workspace, mcp: Optional[McpSetup] = None) -> Launcher:
    """The launcher the agents' hooks run: the MCP server's when that one starts, else the
    first that starts at all."""
    from .integration import STARTS, resolve_launcher

    if mcp is not None and mcp.launcher is not None and mcp.check is not None and mcp.check.ok:
        return mcp.launcher
    assert ws.workdir is not None
    return resolve_launcher(ws.workdir, STARTS).launcher


def setup_agents(ws: Workspace, clients: list[str], launcher: Launcher, mcp: bool = True) -> list[FileChange]:
    """The git-lifeline section in each client's rules file, Claude Code's session hooks when
    Claude Code is among the clients, and Cursor's, Codex's and Gemini CLI's session-start
    hook and MCP server entry when they are (agent_files.FileChange each)."""
    from .agent_files import install_claude_hooks, install_rules
    from .client_files import CLIENTS, setup_client

    if ws.workdir is None or not clients:
        return []
    changes = install_rules(ws.workdir, clients)
    if "claude" in clients:
        changes.append(install_claude_hooks(ws.workdir, launcher, ws.gr))
    for client in clients:
        if client in CLIENTS:
            changes += setup_client(ws.workdir, client, launcher, ws.gr, mcp)
    return changes


# ---- the write policy ------------------------------------------------------------------
def init_policy(ws: Workspace, agents: tuple[str, ...] = ()) -> Path:
    """Write a starter .lifeline/policy.json; never overwrites one."""
    from ..core.policy import POLICY_PATH, render_policy, starter_policy
    from ..git.fs import UnsafeFile, write_in_worktree

    if ws.workdir is None:
        raise InputError("a bare repository has no work tree to write .lifeline/policy.json into")
    path = ws.workdir / POLICY_PATH
    if path.exists() or path.is_symlink():
        raise InputError(f"{path} already exists; edit it instead (nothing was written)")
    try:  # a tracked `.lifeline` link must not carry the write out of the work tree
        write_in_worktree(ws.workdir, path, render_policy(starter_policy(tuple(agents))))
    except UnsafeFile as exc:
        raise InputError(f"{exc.strerror}; nothing was written") from None
    return path
