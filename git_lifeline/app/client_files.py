"""The session-start hook and the MCP server entry of the agent clients besides Claude Code
(Cursor, Codex, Gemini CLI), each in the form its own documentation gives (docs/INTEGRATION.md
cites the pages), and the one rule for every client's file: a command naming this machine's
interpreter never goes into a file the team shares.

Like agent_files, everything here is merged and idempotent: init owns only its own hook (the
command it writes, matched as a whole by agent_files.is_our_hook) and its own `lifeline`
server entry; every other key, hook and server is kept, and a file it cannot read as it
expects is left untouched and reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from ..errors import install_hint
from ..git.fs import UnsafeFile, ensure_excluded, is_tracked, write_in_worktree
from ..git.repo import GitRepo
from .agent_files import LOCAL_NOTE, FileChange, _read, _read_settings, hook_arguments, is_our_hook
from .integration import SERVER_NAME, Launcher, is_our_entry

try:  # Python 3.11+; on 3.10 Codex's config.toml is not edited (init prints the table instead)
    import tomllib
except ImportError:  # pragma: no cover - exercised on Python 3.10 only
    tomllib = None  # type: ignore[assignment]


@dataclass(frozen=True)
class HookFile:
    """Where and how a client declares a session-start command hook."""

    client: str
    path: str  # relative to the top of the work tree
    event: str  # the event's key under "hooks"
    grouped: bool  # Claude Code's form, {matcher, hooks: [{type, command, ...}]}; else {command}
    matcher: Optional[str] = None
    hook_keys: dict = field(default_factory=dict)  # besides type and command (a timeout in the client's unit)
    top_keys: dict = field(default_factory=dict)  # what the file needs at its top (Cursor's schema version)
    wanted: str = "session-start"  # the `git lifeline agent-hook` event it runs


HOOK_FILES = {
    # Cursor: .cursor/hooks.json, {"version": 1, "hooks": {"sessionStart": [{"command": ...}]}}
    "cursor": HookFile("cursor", ".cursor/hooks.json", "sessionStart", False, top_keys={"version": 1}),
    # Codex: .codex/hooks.json, Claude Code's groups; the matcher is a regex over the start's source
    "codex": HookFile(
        "codex", ".codex/hooks.json", "SessionStart", True, "startup|resume|clear|compact", {"timeout": 30}
    ),
    # Gemini CLI: .gemini/settings.json; a lifecycle matcher is an exact string, so none (every start)
    "gemini": HookFile(
        "gemini", ".gemini/settings.json", "SessionStart", True, None, {"name": "git-lifeline", "timeout": 30000}
    ),
}
# The end-of-turn hook that asks, once, for a checkpoint (agent_hooks.stop), where each client's
# documentation gives one (docs/INTEGRATION.md cites the pages): Cursor's `stop` (its follow-up
# bounded by loop_limit), Codex's `Stop`, Gemini CLI's `AfterAgent` (its SessionEnd cannot ask:
# the CLI does not wait for it and ignores its decision).
STOP_HOOK_FILES = {
    "cursor": HookFile(
        "cursor",
        ".cursor/hooks.json",
        "stop",
        False,
        hook_keys={"loop_limit": 1},
        top_keys={"version": 1},
        wanted="stop",
    ),
    "codex": HookFile("codex", ".codex/hooks.json", "Stop", True, None, {"timeout": 30}, wanted="stop"),
    "gemini": HookFile(
        "gemini",
        ".gemini/settings.json",
        "AfterAgent",
        True,
        None,
        {"name": "git-lifeline-checkpoint", "timeout": 30000},
        wanted="stop",
    ),
}
MCP_JSON_FILES = {"cursor": ".cursor/mcp.json", "gemini": ".gemini/settings.json"}  # under "mcpServers"
CODEX_CONFIG = ".codex/config.toml"  # [mcp_servers.lifeline]
CLIENTS = tuple(HOOK_FILES)


# ---- what may go where ------------------------------------------------------------------
def machine_specific_refusal(gr: Optional[GitRepo], workdir: Path, rel: str, launcher: Launcher) -> Optional[str]:
    """Why a command naming this machine's interpreter must not be written into `rel`
    (git tracks it: the team would get a path that exists on this machine only), else None."""
    if launcher.portable or gr is None or not is_tracked(gr, workdir / rel):
        return None
    return (
        f"{rel} is tracked by git and git-lifeline is not on PATH, so the command would name this "
        f"machine's interpreter; left it as it is (put git-lifeline on PATH, {install_hint('mcp')}, "
        "and run git lifeline init again)"
    )


def keep_local(gr: Optional[GitRepo], workdir: Path, rel: str, launcher: Launcher) -> str:
    """After writing a machine-specific command into an untracked file: keep the file out of
    commits (.git/info/exclude); the words init says about it."""
    if launcher.portable or gr is None:
        return ""
    ensure_excluded(gr, workdir / rel, LOCAL_NOTE)
    return "names this machine's interpreter, so it is kept out of commits (.git/info/exclude)"


def _write_json(workdir: Path, path: Path, doc: dict) -> Optional[str]:
    try:
        write_in_worktree(workdir, path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    except UnsafeFile as exc:
        return f"{exc.strerror}; nothing was written"
    return None


# ---- the session-start hook ------------------------------------------------------------------
def hook_command(launcher: Launcher, client: str, wanted: str = "session-start") -> str:
    return launcher.shell(*hook_arguments(wanted, client))


def _our_hook_entries(spec: HookFile, entries: list) -> list:
    """The hook objects of ours among an event's entries (groups or flat commands)."""
    if spec.grouped:
        hooks = [h for g in entries if isinstance(g, dict) for h in (g.get("hooks") or []) if isinstance(h, dict)]
    else:
        hooks = [h for h in entries if isinstance(h, dict)]
    return [h for h in hooks if is_our_hook(h.get("command"), spec.wanted, spec.client)]


def _settings_to_change(
    workdir: Path, rel: str, what: str, launcher: Launcher, gr: Optional[GitRepo], section: str, not_an_object: str
) -> Union[FileChange, dict[str, Any]]:
    """The client file's settings, its `section` an object, ready to change; or the change
    that leaves the file alone: skipped (machine-specific, machine_specific_refusal), or
    invalid (no JSON object, or `section` is no object: the path followed by `not_an_object`)."""
    path = workdir / rel
    refusal = machine_specific_refusal(gr, workdir, rel, launcher)
    if refusal is not None:
        return FileChange(what, path, "skipped", refusal)
    doc, problem = _read_settings(path)
    if problem is None and not isinstance(doc.get(section, {}), dict):
        problem = f"{path}{not_an_object}"
    if problem is not None:
        return FileChange(what, path, "invalid", problem)
    return doc


def install_hook(workdir: Path, client: str, launcher: Launcher, gr: Optional[GitRepo] = None) -> FileChange:
    """The client's session-start hook and its end-of-turn (checkpoint) hook, one file, one write."""
    specs = [HOOK_FILES[client], STOP_HOOK_FILES[client]]
    what, path = f"{client}-hooks", workdir / specs[0].path
    doc = _settings_to_change(
        workdir, specs[0].path, what, launcher, gr, "hooks", ": its hooks are not an object; left it untouched"
    )
    if isinstance(doc, FileChange):
        return doc
    for spec in specs:
        if not isinstance(doc.get("hooks", {}).get(spec.event, []), list):
            problem = f"{path}: its {spec.event} hooks are not a list; left it untouched"
            return FileChange(what, path, "invalid", problem)
    existed = bool(doc)
    changed = False
    for spec in specs:
        changed = _merge_hook(doc, spec, hook_command(launcher, client, spec.wanted)) or changed
    if not changed:
        return FileChange(what, path, "kept")
    failed = _write_json(workdir, path, doc)
    if failed is not None:
        return FileChange(what, path, "invalid", failed)
    return FileChange(what, path, "updated" if existed else "created", keep_local(gr, workdir, spec.path, launcher))


def _merge_hook(doc: dict, spec: HookFile, command: str) -> bool:
    """Our hook of `spec` in `doc` with `command` (added, or its command brought up to date);
    whether anything changed."""
    changed = False
    for key, value in spec.top_keys.items():
        if key not in doc:
            doc[key] = value
            changed = True
    entries = doc.setdefault("hooks", {}).setdefault(spec.event, [])
    ours = _our_hook_entries(spec, entries)
    if not ours:
        if spec.grouped:
            hook: dict = {"type": "command", "command": command, **spec.hook_keys}
            entries.append(({"matcher": spec.matcher} if spec.matcher else {}) | {"hooks": [hook]})
        else:
            entries.append({"command": command, **spec.hook_keys})
        return True
    for hook in ours:
        if hook.get("command") != command:
            hook["command"] = command
            changed = True
    return changed


def our_hook_command(workdir: Path, client: str) -> Optional[str]:
    """The session-start command of ours in the client's file (None: none, or unreadable)."""
    spec = HOOK_FILES[client]
    doc, problem = _read_settings(workdir / spec.path)
    hooks = doc.get("hooks", {}) if problem is None else {}
    entries = hooks.get(spec.event, []) if isinstance(hooks, dict) else []
    ours = _our_hook_entries(spec, entries) if isinstance(entries, list) else []
    return str(ours[0].get("command")) if ours else None


def hook_state(workdir: Path, client: str) -> str:
    """set | absent | invalid: … (for status and doctor)."""
    _, problem = _read_settings(workdir / HOOK_FILES[client].path)
    if problem is not None:
        return f"invalid: {problem}"
    return "set" if our_hook_command(workdir, client) else "absent"


# ---- the MCP server entry -------------------------------------------------------------------
def install_mcp(workdir: Path, client: str, launcher: Launcher, gr: Optional[GitRepo] = None) -> FileChange:
    """The `lifeline` server in the client's project configuration (a launcher already checked
    to start by setup.setup_mcp); another program's entry under that name is kept."""
    if client == "codex":
        return _install_codex_mcp(workdir, launcher, gr)
    rel = MCP_JSON_FILES[client]
    what, path = f"{client}-mcp", workdir / rel
    doc = _settings_to_change(
        workdir, rel, what, launcher, gr, "mcpServers", " has an mcpServers that is not an object; left it untouched"
    )
    if isinstance(doc, FileChange):
        return doc
    existed = bool(doc)
    servers = doc.setdefault("mcpServers", {})
    entry, current = launcher.server_entry(), servers.get(SERVER_NAME)
    if current == entry:
        return FileChange(what, path, "kept")
    if current is not None and not is_our_entry(current):
        return FileChange(what, path, "kept", f"its {SERVER_NAME!r} server is another program's; left it as it is")
    servers[SERVER_NAME] = entry
    failed = _write_json(workdir, path, doc)
    if failed is not None:
        return FileChange(what, path, "invalid", failed)
    return FileChange(what, path, "updated" if existed else "created", keep_local(gr, workdir, rel, launcher))


def codex_table(entry: dict) -> str:
    """The [mcp_servers.lifeline] table (a JSON string with ASCII escapes is a TOML basic string)."""
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(entry['command'])}\nargs = [{args}]\n"


def _install_codex_mcp(workdir: Path, launcher: Launcher, gr: Optional[GitRepo]) -> FileChange:
    """Appended as a new table to config.toml when it has no `lifeline` server; the result is
    parsed before it is written, and a file that does not parse is left untouched."""
    path, entry = workdir / CODEX_CONFIG, launcher.server_entry()
    refusal = machine_specific_refusal(gr, workdir, CODEX_CONFIG, launcher)
    if refusal is not None:
        return FileChange("codex-mcp", path, "skipped", refusal)
    if tomllib is None:
        return FileChange("codex-mcp", path, "skipped", "this Python cannot read TOML; add the table by hand")
    exists = path.exists() or path.is_symlink()
    try:
        text = _read(path) if exists else ""
        current = tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME)
    except Exception as exc:  # InputError from _read, TOMLDecodeError, a non-table mcp_servers
        return FileChange("codex-mcp", path, "invalid", f"{path}: {exc}; left it untouched")
    if current == entry:
        return FileChange("codex-mcp", path, "kept")
    if current is not None:
        return FileChange("codex-mcp", path, "kept", f"it already has [mcp_servers.{SERVER_NAME}]; left it as it is")
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    new = text + sep + codex_table(entry)
    try:
        if tomllib.loads(new)["mcp_servers"][SERVER_NAME] != entry:
            raise ValueError("the table would not read back as written")
    except Exception as exc:
        return FileChange("codex-mcp", path, "invalid", f"{path}: adding the table fails ({exc}); left it untouched")
    try:
        write_in_worktree(workdir, path, new)
    except UnsafeFile as exc:
        return FileChange("codex-mcp", path, "invalid", f"{exc.strerror}; nothing was written")
    return FileChange(
        "codex-mcp", path, "updated" if exists else "created", keep_local(gr, workdir, CODEX_CONFIG, launcher)
    )


def mcp_state(workdir: Path, client: str) -> str:
    """set | another program's | absent | invalid: … (for status and doctor)."""
    if client == "codex":
        path = workdir / CODEX_CONFIG
        if tomllib is None or not (path.exists() or path.is_symlink()):
            return "absent"
        try:
            current = tomllib.loads(_read(path)).get("mcp_servers", {}).get(SERVER_NAME)
        except Exception as exc:
            return f"invalid: {path}: {exc}"
    else:
        doc, problem = _read_settings(workdir / MCP_JSON_FILES[client])
        if problem is not None:
            return f"invalid: {problem}"
        servers = doc.get("mcpServers", {})
        current = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if current is None:
        return "absent"
    return "set" if is_our_entry(current) else "another program's"


def setup_client(workdir: Path, client: str, launcher: Launcher, gr: Optional[GitRepo], mcp: bool) -> list:
    """A client's session-start hook, and its MCP server entry unless MCP is skipped."""
    changes = [install_hook(workdir, client, launcher, gr)]
    if mcp:
        changes.append(install_mcp(workdir, client, launcher, gr))
    return changes
