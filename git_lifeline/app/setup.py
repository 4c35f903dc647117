"""Setting a repository up for git-lifeline: the git hooks, the MCP client configuration,
the write policy file. The hooks' verdicts are hooks.py's; .mcp.json is integration.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import InputError
from . import hooks
from .workspace import Workspace, validate_line


@dataclass
class McpSetup:
    status: str                    # created | added | kept | invalid | skipped
    detail: str
    snippets: list = field(default_factory=list)  # (client, where, server entry) for the other clients


# ---- hooks ----------------------------------------------------------------------
def hooks_dir(ws: Workspace) -> Path:
    return hooks.hooks_dir(ws.gr)


def install_hooks(ws: Workspace, names: Optional[list] = None) -> list:
    """Install hooks (default: pre-push and post-commit; pre-receive in a bare repository)."""
    return hooks.install(ws.gr, names)


def uninstall_hooks(ws: Workspace, names: Optional[list] = None) -> list:
    return hooks.uninstall(ws.gr, names)


def hook_status(ws: Workspace) -> list:
    return hooks.status(ws.gr)


def installed_hooks(ws: Workspace) -> list:
    return [r.name for r in hooks.status(ws.gr) if r.state == "installed"]


def run_hook(ws: Workspace, name: str, args: list, stdin: bytes, line: Optional[str] = None):
    """An installed hook's verdict (hooks.HookOutcome: messages and exit code)."""
    return hooks.run(ws.gr, name, list(args), stdin, validate_line(line) if line else ws.default_line)


# ---- MCP clients ----------------------------------------------------------------------
def setup_mcp(ws: Workspace) -> McpSetup:
    """Add the `lifeline` server to the work tree's .mcp.json (Claude Code's project file),
    and the snippets for clients configured by hand."""
    from .integration import install_mcp_json, snippets
    if ws.workdir is None:
        return McpSetup("skipped", "a bare repository has no work tree for .mcp.json")
    status, detail = install_mcp_json(ws.workdir)
    return McpSetup(status, detail, snippets(ws.workdir))


# ---- the write policy ------------------------------------------------------------------
def init_policy(ws: Workspace, agents: tuple = ()) -> Path:
    """Write a starter .lifeline/policy.json; never overwrites one."""
    from ..core.policy import POLICY_PATH, render_policy, starter_policy
    from .integration import write_shared_file
    if ws.workdir is None:
        raise InputError("a bare repository has no work tree to write .lifeline/policy.json into")
    path = ws.workdir / POLICY_PATH
    if path.exists():
        raise InputError(f"{path} already exists; edit it instead (nothing was written)")
    write_shared_file(path, render_policy(starter_policy(tuple(agents))))
    return path
