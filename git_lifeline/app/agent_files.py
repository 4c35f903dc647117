"""The files that tell coding agents about the ledger: a section in each client's rules file,
and Claude Code's session hooks.

Everything here is idempotent and owns only what it wrote: in a rules file, the text between
its two markers (the rest of the file is the team's, never touched); in
`.claude/settings.json`, the two hook commands of its own (every other key and hook is kept).
A file it cannot read as it expects (no end marker, invalid JSON, a symbolic link) is left
untouched and reported. The section is a pointer: it says when to read and when to write and
which tools do it; what the project knows comes from the ledger (`git lifeline context`).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from ..errors import InputError
from ..git.fs import UnsafeFile, worktree_target, write_in_worktree
from .integration import Launcher, our_arguments

BEGIN = "<!-- git-lifeline:begin"
END = "<!-- git-lifeline:end -->"
CLIENT_FILES = {
    "claude": "CLAUDE.md",  # Claude Code
    "codex": "AGENTS.md",  # Codex and the other AGENTS.md readers
    "cursor": ".cursor/rules/git-lifeline.mdc",  # Cursor's project rules
    "gemini": "GEMINI.md",  # Gemini CLI
    "copilot": ".github/copilot-instructions.md",  # GitHub Copilot
}
DEFAULT_CLIENTS = ("claude", "codex")
CURSOR_HEADER = (
    "---\ndescription: git lifeline, the project's reasoning ledger: when to read it and when to "
    "write to it\nalwaysApply: true\n---\n\n"
)
CLAUDE_SETTINGS = ".claude/settings.json"
SESSION_START_MATCHER = "startup|resume|compact"
HOOK_TIMEOUT = 30  # seconds; Claude Code's default is longer than a context ever needs
MAX_RULES_BYTES = 1024 * 1024
# A command that names our hook: init's own when is_our_hook says so, else a lookalike doctor reports.
_NAMES_OUR_HOOK = re.compile(r"(?:git lifeline|git_lifeline) agent-hook (session-start|stop)\b")
_HOOK_ARG = {"SessionStart": "session-start", "Stop": "stop"}

SECTION = f"""{BEGIN} (kept by `git lifeline init`, which rewrites only what lies between these markers) -->
## Project memory: git lifeline

This repository keeps its reasoning ledger in git: decisions and their why, corrections,
incidents, and where work stopped. This note only says when to use it. What the project
knows is in the ledger, and `git lifeline context` (MCP: `lifeline_context`) prints it.

- **Read when a session starts** and after the conversation was compacted: `lifeline_context`,
  then `lifeline_resume`. Before you decide something, ask `lifeline_recall` whether it was
  decided already. `lifeline_show` reads one entry whole (its why, what superseded it). Cite ids.
- **Write as you work**, one entry each, the why in the body: a decision, feature, fix or
  incident with `lifeline_append`; a correction of an earlier entry with `lifeline_recontextualize`.
- **Before you stop**, when you are blocked and when a step is done: `lifeline_checkpoint`
  (thread, done, next, blocked, tried). The next session resumes from it.
- Your writes follow the project's write policy; most wait for a human's approval
  (`lifeline_pending` lists them). Without MCP, name yourself and the same policy applies:
  `git lifeline log --agent <your-name> ...`, `git lifeline checkpoint --agent <your-name> ...`.
- A checkpoint records where work stands. Nothing here asks or allows you to commit, push
  or change code.
{END}
"""


@dataclass
class FileChange:
    what: str  # the client, or "claude-hooks"
    path: Path
    status: str  # created | added | updated | kept | invalid
    detail: str = ""


def parse_clients(values: Iterable[str]) -> list[str]:
    """Client names from repeatable, comma-separated values; `all` names every one."""
    names: list = []
    for value in values:
        names.extend(v.strip().lower() for v in value.split(",") if v.strip())
    if "all" in names:
        return list(CLIENT_FILES)
    unknown = [n for n in names if n not in CLIENT_FILES]
    if unknown:
        raise InputError(f"unknown agent client(s) {', '.join(unknown)}; known: {', '.join(CLIENT_FILES)}, all")
    return list(dict.fromkeys(names))


# ---- a marked section in a text file ---------------------------------------------------------
def _find(text: str) -> Optional[tuple]:
    """(start, end) of our section, None when there is none; InputError when the markers are
    not one begin followed by one end."""
    begins = [m.start() for m in re.finditer(re.escape(BEGIN), text)]
    ends = [m.start() for m in re.finditer(re.escape(END), text)]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise InputError("its git-lifeline markers are not one begin line followed by one end line")
    end = ends[0] + len(END)
    if text[end : end + 2] == "\r\n":
        end += 2
    elif text[end : end + 1] == "\n":
        end += 1
    return begins[0], end


def _read(root: Path, path: Path) -> str:
    try:  # a committed directory link (`.claude -> ~/.claude`) is never read through
        worktree_target(root, path)
    except UnsafeFile as exc:
        raise InputError(exc.strerror) from None
    if path.is_symlink():
        raise InputError("it is a symbolic link")
    if not path.is_file():
        raise InputError("it is not a regular file")
    if path.stat().st_size > MAX_RULES_BYTES:
        raise InputError(f"it is larger than {MAX_RULES_BYTES} bytes")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("it is not UTF-8 text") from None


def upsert_section(root: Path, path: Path, section: str, header: str = "") -> tuple:
    """(status, detail): the section written into `path` (in the work tree `root`),
    replacing only a previous one."""
    try:
        if not path.exists() and not path.is_symlink():
            write_in_worktree(root, path, header + section)
            return "created", ""
        text = _read(root, path)
        span = _find(text)
    except UnsafeFile as exc:
        return "invalid", f"{exc.strerror}; left it untouched"
    except InputError as exc:
        return "invalid", f"{exc}; left it untouched"
    crlf = "\r\n" in text
    ours = section.replace("\n", "\r\n") if crlf else section
    if span is None:
        nl = "\r\n" if crlf else "\n"
        sep = "" if not text or text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
        write_in_worktree(root, path, text + sep + ours)
        return "added", ""
    start, end = span
    if text[start:end] == ours:
        return "kept", ""
    write_in_worktree(root, path, text[:start] + ours + text[end:])
    return "updated", ""


def section_state(root: Path, path: Path) -> str:
    """current | outdated | no section | absent | invalid (for status)."""
    if not path.exists() and not path.is_symlink():
        return "absent"
    try:
        text = _read(root, path)
        span = _find(text)
    except InputError as exc:
        return f"invalid: {exc}"
    if span is None:
        return "no section"
    current = text[span[0] : span[1]].replace("\r\n", "\n")
    return "current" if current == SECTION else "outdated"


def install_rules(workdir: Path, clients: list) -> list:
    out = []
    for client in clients:
        path = workdir / CLIENT_FILES[client]
        header = CURSOR_HEADER if client == "cursor" else ""
        status, detail = upsert_section(workdir, path, SECTION, header)
        out.append(FileChange(client, path, status, detail))
    return out


# ---- Claude Code's hooks --------------------------------------------------------------------
def hook_commands(launcher: Launcher) -> dict:
    return {"SessionStart": launcher.shell("agent-hook", "session-start"), "Stop": launcher.shell("agent-hook", "stop")}


def _read_settings(root: Path, path: Path) -> tuple:
    """(the settings document, a problem or None); a missing file is an empty document."""
    try:
        worktree_target(root, path)
    except UnsafeFile as exc:
        return None, f"{exc.strerror}; left it untouched"
    if not path.exists() and not path.is_symlink():
        return {}, None
    try:
        text = _read(root, path)
    except InputError as exc:
        return None, f"{path}: {exc}; left it untouched"
    if not text.strip():
        return {}, None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); left it untouched"
    if not isinstance(doc, dict):
        return None, f"{path} is not a JSON object; left it untouched"
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(hooks.get(e, []), list) for e in ("SessionStart", "Stop")):
        return None, f"{path}: its hooks are not an object of lists; left it untouched"
    return doc, None


def is_our_hook(command: object, wanted: str) -> bool:
    """Whether a hook's command is the one init writes for `agent-hook <wanted>`, as a whole
    command line (integration.our_arguments: `git lifeline`, or a Python interpreter with
    `-m git_lifeline`); `evil; git lifeline agent-hook stop` merely mentions it."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return our_arguments(argv) == ["agent-hook", wanted]


def _hooks_of(groups: list) -> list:
    return [
        hook
        for group in groups
        for hook in (group.get("hooks") if isinstance(group, dict) else None) or []
        if isinstance(hook, dict)
    ]


def _our_hooks(groups: list, event: str) -> list:
    """The hook objects of ours in an event's groups (matched by the command they run)."""
    return [hook for hook in _hooks_of(groups) if is_our_hook(hook.get("command"), _HOOK_ARG[event])]


def install_claude_hooks(workdir: Path, launcher: Launcher) -> FileChange:
    """SessionStart (startup, resume, compact) prints the context; Stop asks once for a
    checkpoint when the session changed code. Merged into the settings, never replacing them."""
    path = workdir / CLAUDE_SETTINGS
    doc, problem = _read_settings(workdir, path)
    if problem is not None:
        return FileChange("claude-hooks", path, "invalid", problem)
    existed = bool(doc)
    hooks = doc.setdefault("hooks", {})
    changed = False
    for event, command in hook_commands(launcher).items():
        groups = hooks.setdefault(event, [])
        ours = _our_hooks(groups, event)
        if not ours:
            group: dict = {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]}
            if event == "SessionStart":
                group = {"matcher": SESSION_START_MATCHER, **group}
            groups.append(group)
            changed = True
        for hook in ours:
            if hook.get("command") != command:
                hook["command"] = command
                changed = True
    if not changed:
        return FileChange("claude-hooks", path, "kept")
    try:
        write_in_worktree(workdir, path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    except UnsafeFile as exc:
        return FileChange("claude-hooks", path, "invalid", f"{exc.strerror}; left it untouched")
    return FileChange("claude-hooks", path, "updated" if existed else "created")


def claude_hooks_state(workdir: Path) -> dict:
    """{event: the command of ours or None}, or {"invalid": problem}."""
    doc, problem = _read_settings(workdir, workdir / CLAUDE_SETTINGS)
    if problem is not None:
        return {"invalid": problem}
    hooks = doc.get("hooks", {})
    out = {}
    for event in ("SessionStart", "Stop"):
        ours = _our_hooks(hooks.get(event, []), event)
        out[event] = ours[0].get("command") if ours else None
    return out


def lookalike_hooks(workdir: Path) -> list:
    """(event, command) of the hooks that name git-lifeline's agent-hook but are not a command
    init writes: init leaves them, and a reader of the settings would take them for ours."""
    doc, problem = _read_settings(workdir, workdir / CLAUDE_SETTINGS)
    if problem is not None:
        return []
    hooks = doc.get("hooks", {})
    return [
        (event, str(hook.get("command")))
        for event in _HOOK_ARG
        for hook in _hooks_of(hooks.get(event, []))
        if _NAMES_OUR_HOOK.search(str(hook.get("command", "")))
        and not is_our_hook(hook.get("command"), _HOOK_ARG[event])
    ]
