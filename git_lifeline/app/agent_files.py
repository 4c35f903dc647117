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

from ..core.json_input import JSONInputError, read_json
from ..errors import InputError
from ..git.fs import UnsafeFile, ensure_excluded, worktree_target, write_in_worktree
from ..git.repo import GitRepo
from .integration import MAX_CONFIG_BYTES, Launcher, our_arguments

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
CLAUDE_SETTINGS = ".claude/settings.json"  # the project's settings, which teams commit
# Claude Code's personal project settings (never committed): where a hook naming this
# machine's interpreter goes when git-lifeline is not on PATH.
CLAUDE_LOCAL_SETTINGS = ".claude/settings.local.json"
# Every way a Claude Code session starts: a new one, --resume/--continue, /clear (the
# conversation is empty again) and compaction (what the agent had read was summarized).
SESSION_START_MATCHER = "startup|resume|clear|compact"
EARLIER_MATCHERS = ("startup|resume|compact",)  # what an earlier init wrote: brought up to date
LOCAL_NOTE = "this machine's command for an agent client (git-lifeline is not on PATH)"
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
    what: str  # the client (its rules file), or "<client>-hooks" / "<client>-mcp"
    path: Path
    status: str  # created | added | updated | kept | invalid | skipped (a tracked file, no machine path)
    detail: str = ""


def parse_clients(values: Iterable[str]) -> list[str]:
    """Client names from repeatable, comma-separated values; `all` names every one."""
    names: list[str] = []
    for value in values:
        names.extend(v.strip().lower() for v in value.split(",") if v.strip())
    if "all" in names:
        return list(CLIENT_FILES)
    unknown = [n for n in names if n not in CLIENT_FILES]
    if unknown:
        raise InputError(f"unknown agent client(s) {', '.join(unknown)}; known: {', '.join(CLIENT_FILES)}, all")
    return list(dict.fromkeys(names))


# ---- a marked section in a text file ---------------------------------------------------------
def _find(text: str) -> Optional[tuple[int, int]]:
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


def _read(path: Path) -> str:
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


def upsert_section(root: Path, path: Path, section: str, header: str = "") -> tuple[str, str]:
    """(status, detail): the section written into `path`, replacing only a previous one."""
    try:  # never through a committed directory link out of the tree (`.cursor -> ~/.cursor`)
        if not path.exists() and not path.is_symlink():
            write_in_worktree(root, path, header + section)
            return "created", ""
        worktree_target(root, path)
    except UnsafeFile as exc:
        return "invalid", f"{exc.strerror}; left it untouched"
    try:
        text = _read(path)
        span = _find(text)
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


def section_state(path: Path) -> str:
    """current | outdated | no section | absent | invalid (for status)."""
    if not path.exists() and not path.is_symlink():
        return "absent"
    try:
        text = _read(path)
        span = _find(text)
    except InputError as exc:
        return f"invalid: {exc}"
    if span is None:
        return "no section"
    current = text[span[0] : span[1]].replace("\r\n", "\n")
    return "current" if current == SECTION else "outdated"


def install_rules(workdir: Path, clients: list[str]) -> list[FileChange]:
    out = []
    for client in clients:
        path = workdir / CLIENT_FILES[client]
        header = CURSOR_HEADER if client == "cursor" else ""
        status, detail = upsert_section(workdir, path, SECTION, header)
        out.append(FileChange(client, path, status, detail))
    return out


# ---- Claude Code's hooks --------------------------------------------------------------------
def hook_commands(launcher: Launcher) -> dict[str, str]:
    return {"SessionStart": launcher.shell("agent-hook", "session-start"), "Stop": launcher.shell("agent-hook", "stop")}


def _read_settings(path: Path) -> tuple:
    """(the settings document, a problem or None); a missing file is an empty document."""
    if not path.exists() and not path.is_symlink():
        return {}, None
    try:
        text = _read(path)
    except InputError as exc:
        return None, f"{path}: {exc}; left it untouched"
    if not text.strip():
        return {}, None
    try:
        doc = read_json(text, MAX_CONFIG_BYTES)
    except JSONInputError as exc:
        return None, f"{path}: {exc}; left it untouched"
    if not isinstance(doc, dict):
        return None, f"{path} is not a JSON object; left it untouched"
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(hooks.get(e, []), list) for e in ("SessionStart", "Stop")):
        return None, f"{path}: its hooks are not an object of lists; left it untouched"
    return doc, None


def hook_arguments(wanted: str, client: str = "claude") -> list[str]:
    """git-lifeline's arguments in the hook command init writes for a client: Claude Code's
    reads plain output, the others name their client (agent_hooks.for_client)."""
    return ["agent-hook", wanted] + ([] if client == "claude" else ["--client", client])


def is_our_hook(command: object, wanted: str, client: str = "claude") -> bool:
    """Whether a hook's command is the one init writes for `agent-hook <wanted>`, as a whole
    command line (integration.our_arguments: `git lifeline`, or a Python interpreter with
    `-m git_lifeline`); `evil; git lifeline agent-hook stop` merely mentions it."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return our_arguments(argv) == hook_arguments(wanted, client)


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


def install_claude_hooks(workdir: Path, launcher: Launcher, gr: Optional[GitRepo] = None) -> FileChange:
    """SessionStart (startup, resume, clear, compact) prints the context; Stop asks once for
    a checkpoint when the session changed code. Merged into the settings, never replacing
    them: the project's settings when the command is portable, else the personal
    settings.local.json (kept out of commits), and an earlier init's machine-specific
    hooks leave the project's file."""
    shared = workdir / CLAUDE_SETTINGS
    path = shared if launcher.portable else workdir / CLAUDE_LOCAL_SETTINGS
    doc, problem = _read_settings(path)
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
        if event == "SessionStart":
            changed = _widen_matchers(groups) or changed
    detail = ""
    if not launcher.portable:
        detail = _drop_machine_hooks(workdir, shared)
    if not changed:
        return FileChange("claude-hooks", path, "kept", detail)
    try:
        write_in_worktree(workdir, path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    except UnsafeFile as exc:
        return FileChange("claude-hooks", path, "invalid", f"{exc.strerror}; nothing was written")
    if not launcher.portable and gr is not None:
        ensure_excluded(gr, path, LOCAL_NOTE)
    return FileChange("claude-hooks", path, "updated" if existed else "created", detail)


def _widen_matchers(groups: list) -> bool:
    """The matcher an earlier init wrote on a group of ours, widened to every session start."""
    changed = False
    for group in groups:
        if isinstance(group, dict) and group.get("matcher") in EARLIER_MATCHERS and _our_hooks([group], "SessionStart"):
            group["matcher"] = SESSION_START_MATCHER
            changed = True
    return changed


def _drop_machine_hooks(workdir: Path, shared: Path) -> str:
    """Remove from the project's settings the hooks of ours that name an interpreter by its
    path (an earlier init wrote them there); the rest of the file is kept as it is."""
    doc, problem = _read_settings(shared)
    if problem is not None:
        return problem  # the team's file: not ours to repair, but worth saying
    if not doc:
        return ""
    removed = 0
    for event, wanted in _HOOK_ARG.items():
        for group in doc.get("hooks", {}).get(event, []):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            keep = [
                h
                for h in group["hooks"]
                if not (isinstance(h, dict) and is_our_hook(h.get("command"), wanted) and not _portable(h))
            ]
            removed += len(group["hooks"]) - len(keep)
            group["hooks"] = keep
        groups = doc.get("hooks", {}).get(event)
        if isinstance(groups, list):
            doc["hooks"][event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    if not removed:
        return ""
    try:
        write_in_worktree(workdir, shared, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    except UnsafeFile:
        return ""
    return f"moved its machine-specific hooks out of {CLAUDE_SETTINGS}"


def _portable(hook: dict) -> bool:
    try:
        return " ".join(shlex.split(str(hook.get("command")))[:2]) == "git lifeline"  # runs through PATH
    except ValueError:
        return False


def claude_hooks_state(workdir: Path) -> dict[str, Optional[str]]:
    """{event: the command of ours or None} over the project's and the personal settings
    (the personal one wins, as in Claude Code), or {"invalid": problem}."""
    out: dict[str, Optional[str]] = {"SessionStart": None, "Stop": None}
    for rel in (CLAUDE_SETTINGS, CLAUDE_LOCAL_SETTINGS):
        doc, problem = _read_settings(workdir / rel)
        if problem is not None:
            return {"invalid": problem}
        hooks = doc.get("hooks", {})
        for event in ("SessionStart", "Stop"):
            ours = _our_hooks(hooks.get(event, []), event)
            if ours:
                out[event] = ours[0].get("command")
    return out


def lookalike_hooks(workdir: Path) -> list[tuple[str, str]]:
    """(event, command) of the hooks that name git-lifeline's agent-hook but are not a command
    init writes: init leaves them, and a reader of the settings would take them for ours."""
    found = []
    for rel in (CLAUDE_SETTINGS, CLAUDE_LOCAL_SETTINGS):
        doc, problem = _read_settings(workdir / rel)
        if problem is not None:
            continue
        hooks = doc.get("hooks", {})
        found += [
            (event, str(hook.get("command")))
            for event in _HOOK_ARG
            for hook in _hooks_of(hooks.get(event, []))
            if _NAMES_OUR_HOOK.search(str(hook.get("command", "")))
            and not is_our_hook(hook.get("command"), _HOOK_ARG[event])
        ]
    return found
