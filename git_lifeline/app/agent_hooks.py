"""What a coding agent's session hooks say (SessionStart and Stop, in each client's own form; any client
that runs a command at those moments can use them).

session-start prints what the agent should know, most important first: what is wrong with
this clone's ledger (nothing here while a remote may hold it), the context (identity,
decisions in force, open items, where work stopped) and the proposals waiting for review.
It is bounded (a hard limit in characters), says what the budget left out, and prints
nothing at all outside a repository. It also notes where the session started (HEAD, the
state of the work tree, the heads of the line and its review trail), under the git dir.

stop looks at that note: when the session changed code and recorded no checkpoint, it asks
the agent, once, to record one. It asks for a checkpoint only; it never asks or allows the
agent to commit, push or change code, and it never asks twice (nor when the client says a
stop hook is already active).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core.entry import format_ts
from ..core.json_input import JSONInputError, JSONValue, read_json, read_json_object
from ..errors import LifelineError
from ..git.fs import write_atomic
from ..views.context_text import md
from .workspace import Workspace

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from .agents import Agents
    from .ledger import Ledger

HOOK_BUDGET = 9000  # characters: Claude Code keeps a hook's output whole up to 10,000
HOOK_LIMIT = 10000  # ... counted in UTF-16 units; beyond it the model gets a 2 KB preview
MAX_PAYLOAD = 1024 * 1024  # what a client sends on stdin is a small JSON object
MAX_NOTE_BYTES = 64 * 1024  # a session note we wrote is a few hundred bytes
MARKER_DAYS = 14  # session notes older than this are removed
_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# What is not code: the ledger's own files (a projection refresh is not a code change).
NOT_CODE = (":(exclude,glob)LIFELINE*.md", ":(exclude).lifeline")


# What a client sends a hook on stdin: a JSON object, each value checked where it is read.
Payload = dict[str, JSONValue]


def parse_payload(data: bytes) -> Payload:
    """The client's JSON object from stdin; anything else is an empty one."""
    if not data or len(data) > MAX_PAYLOAD:
        return {}
    try:
        doc = read_json(data, MAX_PAYLOAD)
    except JSONInputError:
        return {}
    return doc if isinstance(doc, dict) else {}


def for_client(client: str, text: str) -> str:
    """The session-start text in the channel the client's documentation gives: Claude Code adds
    a SessionStart hook's plain stdout to the context; Cursor reads `additional_context`;
    Codex and Gemini CLI read `hookSpecificOutput.additionalContext` (Gemini CLI takes stdout
    as JSON only). Nothing to say is no output at all, for every client."""
    if not text or client == "claude":
        return text
    if client == "cursor":
        return json.dumps({"additional_context": text}, ensure_ascii=False) + "\n"
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return json.dumps(answer, ensure_ascii=False) + "\n"


def _open(payload: Payload) -> Optional[Workspace]:
    cwd = payload.get("cwd")
    roots = payload.get("workspace_roots")  # Cursor sends the project's folders, not a cwd
    if not cwd and isinstance(roots, list) and roots:
        cwd = roots[0]
    start = cwd if isinstance(cwd, str) and cwd and Path(cwd).is_dir() else None
    try:
        return Workspace.open(start)
    except LifelineError:
        return None


def _session_key(payload: Payload) -> str:
    sid = payload.get("session_id") or payload.get("conversation_id")  # Cursor: conversation_id
    if isinstance(sid, str) and _SESSION_ID.fullmatch(sid):
        return sid
    if isinstance(sid, str) and sid:
        return hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()[:32]
    return "default"


def _sessions_dir(ws: Workspace) -> Path:
    return ws.gr.lifeline_dir() / "sessions"


def _tree_state(ws: Workspace) -> tuple[Optional[str], str]:
    """(HEAD commit or None, a digest of the work tree's changes outside the ledger's files)."""
    head = ws.gr.resolve_commit("HEAD")
    if ws.workdir is None:
        return head, ""
    return head, hashlib.sha256(ws.gr.work_tree_status([".", *NOT_CODE])).hexdigest()


@dataclass
class SessionNote:
    started: str
    head: Optional[str]
    tree: str
    line: str
    asked: bool = False

    @classmethod
    def load(cls, path: Path) -> Optional["SessionNote"]:
        try:
            doc = read_json_object(path.read_bytes(), MAX_NOTE_BYTES)
            head = doc.get("head")
            if head is not None and not isinstance(head, str):
                raise TypeError("a note's head is a commit id or null")
            return cls(str(doc["started"]), head, str(doc["tree"]), str(doc["line"]), bool(doc.get("asked")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, path: Path) -> None:
        write_atomic(path, json.dumps(self.__dict__, sort_keys=True) + "\n")


def _note_start(ws: Workspace, payload: Payload, line: str) -> None:
    """Remember where the session started; a resumed or compacted session keeps its note."""
    folder = _sessions_dir(ws)
    path = folder / f"{_session_key(payload)}.json"
    try:
        if payload.get("source") in ("resume", "compact") and SessionNote.load(path) is not None:
            return
        head, tree = _tree_state(ws)
        now = format_ts(datetime.now(timezone.utc))
        SessionNote(now, head, tree, line).save(path)
        limit = time.time() - MARKER_DAYS * 86400
        for old in folder.glob("*.json"):
            if old.stat().st_mtime < limit:
                old.unlink()
    except OSError:
        pass  # a read-only repository: the context is still printed, stop will not ask


def pending_section(agents: Agents, room: int) -> str:
    """The proposals waiting for review, within `room` characters ("" when none or no room)."""
    pending = agents.proposals()
    if not pending:
        return ""
    text = (
        f"\n## Waiting for review\n{len(pending)} proposal(s) wait for a human (git lifeline review); "
        "do not file them again:\n"
    )
    for i, p in enumerate(pending):
        summary = md(" ".join(p.content.summary.split())[:160])  # a proposal's text fakes no anchor
        row = f"- `[{p.short}]` {p.content.kind}: {summary}\n"
        more = f"- … and {len(pending) - i} more\n"
        if len(text) + len(row) + len(more) > room:
            return text + more if len(text) + len(more) <= room else ""
        text += row
    return text


def session_start(payload: Payload, line: Optional[str] = None, budget: int = HOOK_BUDGET) -> str:
    """The text for the agent at session start; empty outside a repository."""
    ws = _open(payload)
    if ws is None:
        return ""
    from .catch_up import catch_up, session_fetch

    session_fetch(ws)  # bounded by lifeline.sessionFetchTimeout, silent offline
    notice = catch_up(ws, line).notice()  # what git fetched is what the agent reads
    led = ws.ledger(line)
    _note_start(ws, payload, led.line)
    if led.head() is None:
        from .empty_ledger import text_for_agents

        return (notice + text_for_agents(ws.gr, led.line))[:budget]
    from .agents import Agents

    pending = pending_section(Agents(led), budget // 4)
    room = max(0, budget - len(pending))
    while True:
        text = led.context(budget=room, notice=notice).text
        # a character outside the BMP counts twice where the client measures
        over = len(text.encode("utf-16-le")) // 2 + len(pending) - min(budget, HOOK_LIMIT)
        if not text or over <= 0:
            break
        room -= over
    if not text:
        return f"git-lifeline: the context of line {led.line} does not fit in {budget} characters\n"[:budget]
    return text + pending


def stop_answer(client: str, reason: str) -> str:
    """The request for a checkpoint in the form the client's documentation gives for its
    end-of-turn hook: Cursor's `stop` submits `followup_message` as the next user message;
    Gemini CLI's `AfterAgent` sends `reason` to the agent as a new prompt on `deny`; Claude
    Code's and Codex's `Stop` continue the turn with `reason` on `block`."""
    if client == "cursor":
        return json.dumps({"followup_message": reason})
    return json.dumps({"decision": "deny" if client == "gemini" else "block", "reason": reason})


def stop(payload: Payload, line: Optional[str] = None, client: str = "claude") -> Optional[str]:
    """The client's JSON answer asking for a checkpoint, or None to let the agent stop."""
    if payload.get("stop_hook_active") or payload.get("loop_count"):  # Cursor counts its follow-ups
        return None
    ws = _open(payload)
    if ws is None:
        return None
    path = _sessions_dir(ws) / f"{_session_key(payload)}.json"
    note = SessionNote.load(path)
    if note is None or note.asked:
        return None
    head, tree = _tree_state(ws)
    if head == note.head and tree == note.tree:
        return None
    led = ws.ledger(line or note.line)
    if _checkpointed_since(ws, led, note.started):
        return None
    note.asked = True
    try:
        note.save(path)
    except OSError:
        return None  # could not remember asking: better not to ask at all than to ask forever
    what = "new commits" if head != note.head else "changes in the work tree"
    reason = (
        f"This session changed code ({what}) and recorded no checkpoint on ledger line '{led.line}'. Before "
        "you stop, record where the work stands with lifeline_checkpoint (thread, done, next, blocked, tried), "
        f'or without MCP: git lifeline checkpoint --agent <your-name> --next "...". If nothing is worth '
        "recording, say so and stop. This asks for a checkpoint only: it does not ask you to commit, push "
        "or change any code."
    )
    return stop_answer(client, reason)


def _checkpointed_since(ws: Workspace, led: Ledger, started: str) -> bool:
    """A checkpoint entered the line, or was proposed, since the session started."""
    from ..core.entry import format_ts
    from .agents import Agents

    if any(f"{cp.entry.ts:%Y-%m-%dT%H:%M:%S.%f}Z" >= started for cp in led.resume()):
        return True
    return any(p.content.kind == "checkpoint" and format_ts(p.record.ts) >= started for p in Agents(led).proposals())
