"""Checking a repository's setup (`git lifeline doctor`): each check says what it found and,
when something is wrong, the command that fixes it.

A `problem` is something that does not work as set up (a configured MCP server that does not
start, hooks git never runs, a shallow history, an invalid policy); a `note` is something not
set up yet; a `warning` is something that works but that a human should look at (an agent
client's file that sets PATH or other environment). `doctor` exits non-zero when it finds a
problem.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from ..core.json_input import JSONObject, JSONValue
from ..errors import InputError, install_hint
from .integration import FOREIGN
from .workspace import Workspace

OK, NOTE, WARNING, PROBLEM = "ok", "note", "warning", "problem"
MCP_EXTRA = install_hint("mcp")


@dataclass
class Check:
    name: str
    level: str  # ok | note | warning | problem
    detail: str
    fix: Optional[str] = None

    def to_json(self) -> JSONObject:
        return asdict(self)


def _identity(ws: Workspace) -> Check:
    try:
        name, email = ws.gr.identity()
    except InputError:
        return Check(
            "identity",
            PROBLEM,
            "no git identity: entries and reviews need an author",
            'git config --global user.name "Your Name" && git config --global user.email you@example.com',
        )
    return Check("identity", OK, f"{name} <{email}>")


def _shallow(ws: Workspace) -> Check:
    if ws.gr.is_shallow():
        return Check(
            "history",
            PROBLEM,
            "this clone's history is shallow: `verify` cannot vouch for it, and a decision "
            "whose code history reaches the cut reads 'staleness unknown (shallow clone)' "
            "(nothing is counted across the cut, so no mark is invented); deepen it far "
            "enough with git fetch --deepen=<n> or --shallow-since=<date>, or fetch it all",
            "git fetch --unshallow",
        )
    return Check("history", OK, "complete (not shallow)")


def _remote(ws: Workspace) -> list[Check]:
    from ..git.namespaces import LEDGER
    from .status import shared_remote

    remote = shared_remote(ws)
    if remote is None:
        return [
            Check(
                "remote",
                NOTE,
                "no remote: the ledger stays in this repository",
                "git remote add origin URL && git lifeline push",
            )
        ]
    fetches = LEDGER.fetch_refspec(remote) in ws.gr.config_all(f"remote.{remote}.fetch")
    out = [
        Check("remote", OK, f"{remote}: a plain `git fetch` brings the ledger")
        if fetches
        else Check(
            "remote",
            NOTE,
            f"{remote}: a plain `git fetch` does not bring the ledger",
            f"git lifeline remote-setup {remote}",
        )
    ]
    tracking = LEDGER.tracking_heads(ws.gr, remote)
    missing = sorted(set(tracking) - set(ws.line_names()))
    if missing:
        out.append(
            Check(
                "ledger",
                PROBLEM,
                f"{remote} has line(s) {', '.join(missing)} that this clone has not pulled",
                f"git lifeline pull {remote}",
            )
        )
    elif not ws.line_names() and not tracking:
        out.append(
            Check(
                "ledger",
                NOTE,
                f"no ledger here, and none fetched from {remote}: it may hold one",
                f"git lifeline pull {remote}",
            )
        )
    return out


def _hooks(ws: Workspace) -> list[Check]:
    from . import hook_files

    rows = hook_files.status(ws.gr)
    where = hook_files.hooks_dir(ws.gr)
    installed = [r for r in rows if r.state == "installed"]
    out = []
    configured = ws.gr.config_get("core.hooksPath")
    default = ws.gr.common_dir / "hooks"
    active = {r.name for r in installed}
    stray = [
        n
        for n in hook_files.HOOKS
        if configured and default.resolve() != where.resolve() and _written_by_us(default / n) and n not in active
    ]
    if stray:
        out.append(
            Check(
                "hooks",
                PROBLEM,
                f"{', '.join(stray)} installed in {ws.gr.common_dir / 'hooks'}, but "
                f"core.hooksPath makes git run hooks from {where}",
                "git lifeline hooks install",
            )
        )
    if not installed:
        if not stray:
            out.append(Check("hooks", NOTE, f"no git-lifeline hook in {where}", "git lifeline hooks install"))
        return out
    idle = [str(r.path) for r in installed if not os.access(r.path, os.X_OK)]
    if idle:
        out.append(
            Check(
                "hooks", PROBLEM, f"not executable, so git skips them: {', '.join(idle)}", f"chmod +x {' '.join(idle)}"
            )
        )
    if shutil.which("git-lifeline") is None:
        out.append(
            Check(
                "hooks",
                PROBLEM,
                "the hooks run `git-lifeline`, which is not on PATH: their checks are skipped",
                f"put git-lifeline on PATH ({install_hint('mcp')}, or the venv's bin/)",
            )
        )
    if not idle and shutil.which("git-lifeline") is not None:
        out.append(Check("hooks", OK, f"{', '.join(r.name for r in installed)} in {where}"))
    return out


def _written_by_us(path: Path) -> bool:
    from .hook_files import ours

    return ours(path, path.name)


def _mcp(ws: Workspace) -> list[Check]:
    from .integration import SERVER_NAME, check_entry, entry_argv, is_our_entry, read_mcp_json

    sdk = importlib.util.find_spec("mcp") is not None and _has_server_api()
    if ws.workdir is None:
        return []
    doc, problem = read_mcp_json(ws.workdir)
    if problem is not None:
        return [Check("mcp", PROBLEM, problem, "fix the JSON by hand, then: git lifeline init")]
    entry = (doc or {}).get("mcpServers", {}).get(SERVER_NAME) if doc is not None else None
    if entry is None:
        return [
            Check("mcp", NOTE, "no `lifeline` server in .mcp.json", "git lifeline init"),
            Check(
                "mcp extra",
                OK if sdk else NOTE,
                "the MCP SDK is installed" if sdk else "the MCP SDK is not installed here",
                None if sdk else MCP_EXTRA,
            ),
        ]
    if not is_our_entry(entry):
        return [_foreign_mcp(entry)]
    result = check_entry(entry, ws.workdir)
    argv = " ".join(entry_argv(entry))
    starts = (
        Check("mcp", OK, f".mcp.json starts `{argv}` (checked: it starts)")
        if result.ok
        else Check(
            "mcp",
            PROBLEM,
            f".mcp.json starts `{argv}`, which fails: {result.output or 'no output'}",
            "git lifeline init (it rewrites its own entry with a command that starts)"
            + ("" if sdk else f"; the MCP SDK: {MCP_EXTRA}"),
        )
    )
    importable = Check(
        "mcp extra",
        OK if sdk else PROBLEM,
        "the MCP SDK 2.x is importable" if sdk else "the MCP SDK 2.x is not importable by this interpreter",
        None if sdk else MCP_EXTRA,
    )
    return [starts, importable]


NOT_OURS = f"{FOREIGN}, so doctor does not start it and init leaves it as it is"
REMOVE_IT = "if it should start git-lifeline: remove it from .mcp.json, then run git lifeline init"


def _foreign_mcp(entry: JSONValue) -> Check:
    """Another program's `lifeline` entry: never called healthy (doctor cannot know what it
    serves), a problem when its command is missing or when it borrows git-lifeline's arguments
    (`/tmp/evil -P -m git_lifeline mcp` looks like ours to a reader and is not)."""
    from .integration import borrows_our_arguments, entry_argv

    argv = entry_argv(entry)
    shown = " ".join(argv)
    if borrows_our_arguments(argv):
        return Check(
            "mcp",
            PROBLEM,
            f".mcp.json's `lifeline` server runs `{shown}`: its arguments are "
            f"git-lifeline's, but `{argv[0]}` is neither git nor a Python interpreter; "
            f"{NOT_OURS}",
            REMOVE_IT,
        )
    command = argv[0]
    if command and (shutil.which(command) is not None or Path(command).is_file()):
        return Check(
            "mcp", NOTE, f".mcp.json's `lifeline` server is another program's, `{shown}`: {NOT_OURS}", REMOVE_IT
        )
    return Check(
        "mcp",
        PROBLEM,
        f".mcp.json's `lifeline` server runs `{shown}`, which is not installed here; {NOT_OURS}",
        f"install it, or {REMOVE_IT}",
    )


def _has_server_api() -> bool:
    try:
        return importlib.util.find_spec("mcp.server.mcpserver") is not None
    except (ImportError, ValueError):
        return False


def _claude_hooks(ws: Workspace) -> list[Check]:
    from .agent_files import CLAUDE_SETTINGS, claude_hooks_state, lookalike_hooks

    if ws.workdir is None:
        return []
    state = claude_hooks_state(ws.workdir)
    if "invalid" in state:
        return [Check("agent hooks", PROBLEM, state["invalid"] or "", "fix the JSON by hand, then: git lifeline init")]
    lookalikes = lookalike_hooks(ws.workdir)
    if lookalikes:
        event, command = lookalikes[0]
        return [
            Check(
                "agent hooks",
                PROBLEM,
                f"a {event} hook in {CLAUDE_SETTINGS} names git-lifeline's agent-hook, "
                f"but `{command}` is not a command git lifeline init writes; init "
                "leaves it as it is",
                f"remove it from {CLAUDE_SETTINGS}, then run git lifeline init",
            )
        ]
    commands = [c for c in state.values() if c]
    if not commands:
        return [Check("agent hooks", NOTE, "no Claude Code session hooks", "git lifeline init")]
    broken = [command for command in commands if not _resolves(command)]
    if broken:
        return [
            Check(
                "agent hooks",
                PROBLEM,
                f"a hook's command does not resolve: {broken[0]}",
                "git lifeline init (it rewrites its own hooks)",
            )
        ]
    return [Check("agent hooks", OK, "Claude Code's SessionStart and Stop hooks are set")]


def _resolves(command: str) -> bool:
    """Whether a hook command of ours would start here: its program exists (and git finds
    git-lifeline for `git lifeline ...`)."""
    try:
        first = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    if shutil.which(first) is None and not Path(first).is_file():
        return False
    return first != "git" or shutil.which("git-lifeline") is not None


def _other_clients(ws: Workspace) -> list[Check]:
    """Cursor's, Codex's and Gemini CLI's files, for the clients init set up (or that are broken)."""
    from .client_files import CLIENTS, HOOK_FILES, hook_state, mcp_state, our_hook_command

    if ws.workdir is None:
        return []
    out = []
    for client in CLIENTS:
        hook, mcp = hook_state(ws.workdir, client), mcp_state(ws.workdir, client)
        if hook == "absent" and mcp == "absent":
            continue
        where = HOOK_FILES[client].path
        if hook.startswith("invalid"):
            out.append(Check(f"{client} hook", PROBLEM, hook, "fix the file by hand, then: git lifeline init"))
        elif hook == "absent":
            out.append(
                Check(
                    f"{client} hook", NOTE, f"no session-start hook in {where}", f"git lifeline init --agents {client}"
                )
            )
        elif not _resolves(our_hook_command(ws.workdir, client) or ""):
            command = our_hook_command(ws.workdir, client)
            out.append(
                Check(
                    f"{client} hook", PROBLEM, f"the hook in {where} does not resolve: {command}", "git lifeline init"
                )
            )
        else:
            out.append(Check(f"{client} hook", OK, f"the session-start hook is set in {where}"))
        if mcp.startswith("invalid"):
            out.append(Check(f"{client} mcp", PROBLEM, mcp, "fix the file by hand, then: git lifeline init"))
        elif mcp == "another program's":
            out.append(Check(f"{client} mcp", NOTE, f"its `lifeline` server is another program's: {NOT_OURS}", None))
        elif mcp == "absent":
            out.append(Check(f"{client} mcp", NOTE, "no `lifeline` server", f"git lifeline init --agents {client}"))
        else:
            out.append(Check(f"{client} mcp", OK, "the `lifeline` server is set"))
    return out


def _project_history(ws: Workspace) -> list[Check]:
    """Two bootstraps in force on a line (two histories of the project met): the same finding
    `verify --lint` makes, the conflict the context shows first (docs/FORMAT.md, Identity)."""
    from .empty_ledger import identity_conflict

    out = []
    for line in ws.line_names():
        identities = ws.ledger(line).state().identities
        if len(identities) > 1:
            out.append(
                Check(
                    "project history",
                    PROBLEM,
                    f"line {line}: {identity_conflict(identities)}",
                    f"git lifeline --line {line} revise <id of the one that no longer holds> --body <why>",
                )
            )
    return out


def _policy(ws: Workspace) -> Check:
    from .agents import policy_in_effect

    try:
        source = policy_in_effect(ws.gr).source
    except InputError as exc:
        return Check(
            "policy",
            PROBLEM,
            f"agent writes fail: {exc}",
            "fix .lifeline/policy.json on that branch (git lifeline policy shows the key)",
        )
    return Check("policy", OK, source)


def _client_env(ws: Workspace) -> list[Check]:
    """A warning per place an agent client's file sets environment (app/client_env.py)."""
    from .client_env import env_overrides

    if ws.workdir is None:
        return []
    return [
        Check(
            "agent environment",
            WARNING,
            found.message(),
            f"remove `{found.key}` from {found.file} unless the team meant it",
        )
        for found in env_overrides(ws.workdir)
    ]


def doctor(ws: Workspace) -> list[Check]:
    checks = [_identity(ws), _shallow(ws)]
    checks += _remote(ws)
    checks += _hooks(ws)
    checks += _mcp(ws)
    checks += _claude_hooks(ws)
    checks += _other_clients(ws)
    checks += _client_env(ws)
    checks += _project_history(ws)
    checks.append(_policy(ws))
    return checks


def problems(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.level == PROBLEM]
