"""The state of a repository's ledger at a glance (`git lifeline status`).

Per line: its head, how it stands against the remote as last fetched (commits ahead and
behind, entries not pushed, entries to pull), the proposals waiting for review, and the
decisions in force that are stale or in conflict. For the repository: the remote and its
fetch refspecs, the git hooks, what the agents are told (MCP configuration, rules files,
Claude Code hooks), the projection file of each line and the semantic model. Nothing here
touches the network or writes anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core.json_input import JSONObject
from ..git.namespaces import LEDGER, REVIEW
from ..git.sync import default_remote, remotes
from .workspace import Workspace

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from .ledger import Ledger

MAX_PROJECTION_BYTES = 64 * 1024 * 1024
PROJECTION_RULE = (
    "the MCP server never writes the work tree: LIFELINE.md catches up at the next "
    "`git lifeline` write on this machine, or with `git lifeline render`"
)


@dataclass
class ProjectionState:
    """Whether the line's projection file shows the line's head."""

    path: Optional[str]  # None: no projection (disabled, or a bare repository)
    state: str  # current | behind | absent | none yet | unreadable | not a projection | disabled
    detail: str


@dataclass
class HookStates:
    dir: str
    states: dict[str, str]  # name -> installed | absent | foreign | tracked


@dataclass
class ClientState:
    hook: str  # the session-start hook's state (client_files.hook_state)
    mcp: str  # the MCP server entry's state (client_files.mcp_state)


@dataclass
class AgentsState:
    mcp: str  # the lifeline entry of .mcp.json, or what is wrong with it
    rules: dict[str, str]  # rules file -> state
    claude_hooks: dict[str, Optional[str]]  # event -> our command or None; or {"invalid": problem}
    clients: dict[str, ClientState]  # Cursor, Codex, Gemini CLI: those set up (or broken) only
    env_overrides: list[str]  # what a client's file sets in the environment it starts


@dataclass
class SemanticState:
    configured: Optional[str]  # lifeline.semantic.model
    state: str


@dataclass
class LineStatus:
    line: str
    head: Optional[str]
    entries: int
    remote_head: Optional[str] = None  # the remote's head as last fetched
    ahead: Optional[int] = None  # commits here and not there (None: no remote head)
    behind: Optional[int] = None
    unpushed: int = 0  # entries here and not on the remote as last fetched
    incoming: int = 0  # entries there and not here (run pull)
    pending: int = 0  # proposals waiting for review
    stale: int = 0  # decisions in force whose code changed since
    conflicts: int = 0  # groups of decisions in force that disagree
    projection: Optional[ProjectionState] = None  # None: not read (a name clash), shown as {}
    remote_known: Optional[str] = None  # with no entries here: has-line | unknown (never looked) | absent
    clash: Optional[str] = None  # the line name in use here this one differs from only in case: not read


@dataclass
class Status:
    repository: str
    workdir: Optional[str]
    remote: Optional[str]
    refspecs: dict[str, bool]  # namespace -> configured on the remote (a plain git fetch brings it)
    lines: list[LineStatus]
    hooks: HookStates
    agents: AgentsState
    policy: str  # where the policy in effect comes from (or its error)
    semantic: SemanticState
    shallow: bool = False

    def to_json(self) -> JSONObject:
        doc = asdict(self)
        for row in doc["lines"]:
            if row["projection"] is None:
                row["projection"] = {}  # a clash's line: its projection is not read
        return doc


def shared_remote(ws: Workspace) -> Optional[str]:
    names = remotes(ws.gr)
    if not names:
        return None
    if "origin" in names:
        return "origin"
    chosen = default_remote(ws.gr)
    return chosen if chosen in names else names[0]


def projection_state(led: Ledger) -> ProjectionState:
    """Whether the line's projection file shows the line's head."""
    from ..views.projection import shown_tree

    path = led.projection_path()
    if path is None:
        return ProjectionState(None, "disabled", "no projection (git config lifeline.projection, or bare)")
    where = str(path)
    head = led.head()
    if not path.exists():
        state = "absent" if head else "none yet"
        return ProjectionState(where, state, "written by the next write, or `git lifeline render`")
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_PROJECTION_BYTES:
        return ProjectionState(where, "unreadable", "not a regular file of a sane size")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ProjectionState(where, "unreadable", "not UTF-8 text")
    found, shown = shown_tree(text)
    if not found:
        return ProjectionState(where, "not a projection", "no git-lifeline footer; `git lifeline render` rewrites it")
    if shown == led.store.tree_id(head):
        return ProjectionState(where, "current", "")
    return ProjectionState(where, "behind", PROJECTION_RULE)


def line_status(
    ws: Workspace, name: str, remote: Optional[str], tracking: dict[str, str], deep: bool = True
) -> LineStatus:
    from ..git.store import LineStore
    from .agents import Agents

    theirs = tracking.get(name)
    other = LineStore(ws.gr, name).clash()
    if other is not None:  # the remote's name (or the default line's) beside ours: never read as ours
        return LineStatus(name, None, 0, remote_head=theirs, clash=other)
    led = ws.ledger(name)
    head = led.head()
    entries = 0
    if head is not None:
        entries = led.state().count
    row = LineStatus(name, head, entries, remote_head=theirs)
    if theirs is not None and head is not None and ws.gr.resolve_commit(theirs) is not None:
        row.ahead, row.behind = ws.gr.ahead_behind(head, theirs)
        row.unpushed = len(led.store.incoming_by_diff(theirs, head)[0]) if row.ahead else 0
        row.incoming = len(led.store.incoming_by_diff(head, theirs)[0]) if row.behind else 0
    elif theirs is not None and head is None:
        row.behind = None
        row.incoming = len(led.store.incoming_by_diff(None, theirs)[0])
    elif head is not None and remote is not None:
        row.unpushed = entries
    if head is None and remote is not None:
        from .empty_ledger import remote_ledger

        known = remote_ledger(ws.gr, name)
        row.remote_known = known.state if known is not None else None
    row.pending = len(Agents(led).proposals())
    if head is not None and deep:
        st = led.state()
        row.stale = len(led.stale(st=st))
        row.conflicts = len(st.conflicts)
    row.projection = projection_state(led)
    return row


def agents_state(ws: Workspace) -> AgentsState:
    from .agent_files import CLIENT_FILES, claude_hooks_state, section_state
    from .client_env import env_overrides
    from .integration import FOREIGN, SERVER_NAME, entry_argv, is_our_entry, read_mcp_json

    if ws.workdir is None:
        return AgentsState("bare repository", {}, {}, {}, [])
    doc, problem = read_mcp_json(ws.workdir)
    if problem is not None:
        mcp = f"invalid: {problem}"
    elif doc is None:
        mcp = "no .mcp.json"
    else:
        entry = (doc.get("mcpServers") or {}).get(SERVER_NAME)
        mcp = (
            "no lifeline server in .mcp.json"
            if entry is None
            else "invalid lifeline entry"
            if not isinstance(entry, dict)
            else " ".join(entry_argv(entry)) + ("" if is_our_entry(entry) else f" (another program's: {FOREIGN})")
        )
    rules = {rel: section_state(ws.workdir / rel) for rel in CLIENT_FILES.values()}
    return AgentsState(
        mcp=mcp,
        rules=rules,
        claude_hooks=claude_hooks_state(ws.workdir),
        clients=clients_state(ws.workdir),
        env_overrides=[found.message() for found in env_overrides(ws.workdir)],
    )


def clients_state(workdir: Path) -> dict[str, ClientState]:
    """{client: {"hook": state, "mcp": state}} for Cursor, Codex and Gemini CLI, those with
    either set up (or broken) only (client_files.hook_state and mcp_state)."""
    from .client_files import CLIENTS, hook_state, mcp_state

    found = {c: ClientState(hook_state(workdir, c), mcp_state(workdir, c)) for c in CLIENTS}
    return {c: s for c, s in found.items() if s.hook != "absent" or s.mcp != "absent"}


def semantic_state(ws: Workspace) -> SemanticState:
    configured = ws.gr.config_get("lifeline.semantic.model")
    if not configured:
        return SemanticState(None, "not configured: recall is lexical (git config lifeline.semantic.model DIR)")
    path = Path(configured).expanduser()
    if not (path / "config.json").is_file():
        return SemanticState(configured, "missing: no model there, recall is lexical")
    return SemanticState(configured, "present")


def policy_state(ws: Workspace) -> str:
    from ..errors import InputError
    from .agents import policy_in_effect

    try:
        return policy_in_effect(ws.gr).source
    except InputError as exc:
        return f"invalid: {exc}"


def status(ws: Workspace, deep: bool = True) -> Status:
    from . import hook_files

    remote = shared_remote(ws)
    tracking = LEDGER.tracking_heads(ws.gr, remote) if remote else {}
    names = sorted(set(ws.line_names()) | set(tracking) | {ws.default_line})
    lines = [line_status(ws, name, remote, tracking, deep) for name in names]
    refspecs = {}
    if remote is not None:
        configured = ws.gr.config_all(f"remote.{remote}.fetch")
        refspecs = {ns.name: ns.fetch_refspec(remote) in configured for ns in (LEDGER, REVIEW)}
    hook_rows = hook_files.status(ws.gr)
    return Status(
        repository=str(ws.location),
        workdir=str(ws.workdir) if ws.workdir else None,
        remote=remote,
        refspecs=refspecs,
        lines=lines,
        hooks=HookStates(str(hook_files.hooks_dir(ws.gr)), {r.name: r.state for r in hook_rows}),
        agents=agents_state(ws),
        policy=policy_state(ws),
        semantic=semantic_state(ws),
        shallow=ws.gr.is_shallow(),
    )
