"""The agent's door: `git lifeline mcp`, an MCP server over stdio.

A thin face: every tool calls app/ (a Ledger, its Agents) and turns the result into text
(text.py), with typed parameters a model cannot misuse (schema.py). Tool names and
parameters are those of lifeline-context's server, so agent rules written for it keep
working, plus `lifeline_show` (one entry whole) and `lifeline_pending` (what waits for
review). Writes go through the project's write policy (app/agents.py) and proposals wait in
the review trail for a human; the same proposal is never filed twice.

The server finds the repository from its working directory (or --repo), serves every line
of it (the `line` argument), and never writes outside the repository's git dir: refs,
objects and the cache only, never the work tree (LIFELINE.md catches up at the next CLI
write or `git lifeline render`; `git lifeline status` shows when it is behind).

The MCP Python SDK (2.x, extra `[mcp]`) is imported only when the server starts, so the
rest of the CLI never needs it. Every failure becomes an MCP tool error (isError) in one
sentence (errors.describe_failure, the boundary every face shares; schema.readable for
arguments); nothing a caller sends can crash the server. What the user should know after a
call succeeded (the workspace's warnings) comes back with the answer.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at
# registration, and these tools are defined inside a function.
import asyncio
import logging
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated, Any, Awaitable, Callable, Optional, TypeVar

from pydantic import Field, ValidationError

from ..app.agent_hooks import pending_section
from ..app.agents import Agents
from ..app.catch_up import catch_up, session_fetch
from ..app.context_run import DEFAULT_BUDGET
from ..app.draft import CheckpointDraft, Draft, Writer
from ..app.empty_ledger import text_for_agents
from ..app.entry_view import view_entry
from ..app.text import JSONObject
from ..app.visible import visible
from ..app.workspace import Workspace
from ..errors import InputError, LifelineError, describe_failure, install_hint
from .recall_schema import OUTPUT_SCHEMA as RECALL_OUTPUT_SCHEMA
from .schema import NO_ITEMS, Agent, Budget, Items, Kind, Line, Model, OptionalInt, Provider, compact, readable
from .text import pending_answer, recall_answer, resume_text, show_answer, with_warnings, write_data, write_message

SERVER_NAME = "lifeline"
CONTEXT_URI = "lifeline://project/context"
RESOURCE_BUDGET = DEFAULT_BUDGET
SDK_HINT = install_hint("mcp")
INTERNAL = 3  # describe_failure's exit code for a bug of ours
log = logging.getLogger("git_lifeline.mcp")

INSTRUCTIONS = """\
This project keeps its reasoning ledger in git with git-lifeline: decisions and the why behind
them, reversals, open items, incidents and checkpoints of work in progress. Every entry is
immutable and has an id; the ledger is the project's memory across sessions and agents.

How to work with it:
1. When a session starts, and again after your context was compacted, call lifeline_context and
   then lifeline_resume. Treat the decisions in force as the project's current truth and cite the
   entry id (e.g. [1a2b3c4d]) when you rely on one. lifeline_show(id) reads one entry whole: its
   why, its parents, what superseded it. Never reconstruct a why from the code: if the ledger does
   not say it, ask the human.
2. Before you decide something, ask lifeline_recall("the topic") whether it was decided already.
3. While you work, record each meaningful decision, feature, fix or incident with lifeline_append.
   The summary is the what (one line); the body is the why, and it is required. To reverse or
   replace an earlier entry call lifeline_recontextualize with its id; do not restate it as new.
4. Your writes follow the project's write policy. Most become proposals that a human approves;
   lifeline_pending lists what waits, so do not file it again. Checkpoints are usually written
   directly. A write the policy denies comes back as an error: tell the human, and do not retry it
   under another agent name or by another way in.
5. When a step is done, when you are blocked, and before you stop: lifeline_checkpoint with the
   thread and what is done, next, blocked and tried. The next session resumes from it. A checkpoint
   records where work stands; it is no reason to commit or push code.
6. When you hand work to a sub-agent, give it lifeline_brief(task or thread) and ask it to write
   back on the same thread.
Pass agent, provider and model on every write, so the ledger shows who wrote what. If the context
says this clone has no ledger while a remote may hold one, ask the human to pull it and propose
nothing. Only when it says the ledger is empty, ask the human three to seven questions about what
the project is and why it exists, then propose one bootstrap entry, the decisions in force and the
open items, one entry each, with lifeline_append."""

if TYPE_CHECKING:  # the SDK is imported only when the server starts (_require_sdk)
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult as ToolResult
    from mcp.types import InputRequiredResult, Tool

    from ..app.ledger import Ledger

Answer = TypeVar("Answer")  # what a tool's work returns on the worker thread
Tool_ = Callable[..., Awaitable["ToolResult"]]  # a tool function, as the SDK registers it

READ = {"readOnlyHint": True, "openWorldHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


class Gate:
    """What a caller may do, and who it is. Over stdio the caller is the user's own agent:
    every tool, the agent name it gives, direct writes where the policy allows. The HTTP face
    (http.py) answers per request from the caller's token, refreshes the clone before a call
    and publishes what a write recorded."""

    via = "mcp"

    def missing_scope(self, tool: str) -> Optional[str]:
        """The scope the caller lacks for `tool`, or None when it may call it."""
        return None

    def agent(self, claimed: str) -> str:
        return claimed

    def propose_only(self) -> bool:
        return False

    def refresh(self) -> None:
        """Before any call, on the worker thread."""

    def recorded(self) -> None:
        """A write recorded something (on the worker thread, right after it)."""

    def publish(self) -> list[str]:
        """After a write recorded something, on the worker thread: warnings, if any."""
        return []

    def shown(self, message: str) -> str:
        """An error message as the caller may see it."""
        return message


class Door:
    """The repository the server serves: a confined Workspace (nothing written outside the
    git dir), one Ledger per line kept warm between calls."""

    def __init__(self, start: Optional[str] = None, line: Optional[str] = None):
        self.workspace = Workspace.open(start, confined=True)
        self.default_line = self.workspace.ledger(line).line  # a bad line fails here, before serving

        self.fetched = False  # the session's first read fetches (catch_up.session_fetch)

    def ledger(self, line: str = "") -> "Ledger":
        return self.workspace.ledger((line or "").strip() or self.default_line)

    def reading(self, line: str = "") -> "tuple[Ledger, str]":
        """The ledger of a read, once it caught up with what git fetched (the session's
        first read fetches first, bounded), and the notice that comes first in the answer
        when it stays behind. A line named that does not exist is refused, as the CLI does."""
        if not self.fetched:
            self.fetched = True
            session_fetch(self.workspace)
        name = (line or "").strip() or self.default_line
        caught = catch_up(self.workspace, name)
        led = self.workspace.ledger(name)
        if name != self.default_line:
            led.require()
        return led, caught.notice()

    def agents(self, line: str = "") -> Agents:
        return Agents(self.ledger(line))


def recorded(data: JSONObject) -> bool:
    """Whether a write's answer says it recorded something (an entry, or a new proposal)."""
    return bool(data.get("written") or (data.get("proposal") and not data.get("already")))


# ---- answers --------------------------------------------------------------------------
def context_text(
    ledger: "Ledger",
    budget: int,
    budget_tokens: Optional[int],
    query: str = "",
    thread: str = "",
    as_of: str = "",
    notice: str = "",
) -> str:
    if budget_tokens is None and budget < 0:
        raise InputError("budget must be zero or more characters")
    if budget_tokens is not None and budget_tokens < 0:
        raise InputError("budget_tokens must be zero or more")
    if ledger.head() is None and not as_of and not thread:
        text = notice + text_for_agents(ledger.gr, ledger.line)
        if budget_tokens is None and len(text) > budget:
            raise InputError(
                f"nothing fits in a budget of {budget} characters; ask for a larger budget (the "
                f"default is {DEFAULT_BUDGET} characters)"
            )
        return text
    pending = pending_section(Agents(ledger), budget // 5) if budget_tokens is None and not as_of else ""
    parts = ledger.context(
        budget=None if budget_tokens is not None else budget - len(pending),
        budget_tokens=budget_tokens,
        query=query or None,
        thread=thread or None,
        as_of=as_of or None,
        notice=notice,
    )
    if not parts.text:
        asked = f"{budget_tokens} tokens" if budget_tokens is not None else f"{budget} characters"
        raise InputError(
            f"nothing fits in a budget of {asked}; ask for a larger budget (the default is {DEFAULT_BUDGET} characters)"
        )
    return parts.text + pending


def brief_text(ledger: "Ledger", task_or_thread: str, budget: int, notice: str = "") -> str:
    ref = (task_or_thread or "").strip()
    if not ref:
        raise InputError("task_or_thread is empty: give a thread name, an open item's id, or the task in a sentence")
    try:
        ledger.thread_key(ref)
    except InputError:
        return context_text(ledger, budget, None, query=ref, notice=notice)
    return context_text(ledger, budget, None, thread=ref, notice=notice)


# ---- the server -----------------------------------------------------------------------
def _server_class(gate: Gate) -> "type[MCPServer]":
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from .schema import oversized
    from .text import needs_scope

    class LifelineServer(MCPServer):
        """Compact schemas for the client; argument and tool errors in one sentence."""

        async def list_tools(self) -> "list[Tool]":
            tools = [t for t in await super().list_tools() if gate.missing_scope(t.name) is None]
            return [
                t.model_copy(
                    update={
                        "input_schema": compact(t.input_schema),
                        "description": " ".join((t.description or "").split()),
                        **({"output_schema": RECALL_OUTPUT_SCHEMA} if t.name == "lifeline_recall" else {}),
                    }
                )
                for t in tools
            ]

        async def call_tool(
            self, name: str, arguments: dict[str, Any], context: Any = None
        ) -> "ToolResult | InputRequiredResult":
            missing = gate.missing_scope(name)
            if missing:
                raise ToolError(needs_scope(name, missing))
            too_large = oversized(name, arguments or {})
            if too_large:
                raise ToolError(too_large)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, ValidationError):
                    raise ToolError(readable(name, cause)) from None
                if isinstance(cause, ToolError):
                    raise ToolError(str(cause)) from None
                raise

    return LifelineServer


def build_server(
    door: Door,
    gate: Optional[Gate] = None,
    auth: "Optional[AuthSettings]" = None,
    token_verifier: "Optional[TokenVerifier]" = None,
) -> "MCPServer":
    """The server with its nine tools and the context resource; `gate` says what each caller
    may do (default: everything, as over stdio), `auth` and `token_verifier` protect it as an
    OAuth resource server (the HTTP face)."""
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations

    from .. import __version__
    from .text import needs_scope

    gate = gate or Gate()
    server = _server_class(gate)(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        auth=auth,
        token_verifier=token_verifier,
    )
    # All ledger work runs on one worker thread: calls are served in order, the event loop
    # stays free for the protocol, and the warm SQLite cache stays on the thread that opened it.
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lifeline")

    def guarded(fn: Callable[[], Answer], error: type[Exception]) -> Answer:
        try:
            gate.refresh()
            return fn()
        except Exception as exc:  # the one boundary; a bug of ours must not take the server down
            message, code = describe_failure(exc)
            if code == INTERNAL:
                log.exception("internal error")
            raise error(gate.shown(with_warnings(message, door.workspace.take_warnings()))) from None

    async def run(fn: Callable[[], Answer], error: type[Exception] = ToolError) -> Answer:
        return await asyncio.get_running_loop().run_in_executor(worker, guarded, fn, error)

    async def call(fn: Callable[[], str]) -> CallToolResult:
        """A text answer, and the call's warnings as a second text block."""
        text = await run(fn)
        blocks: list[ContentBlock] = [TextContent(type="text", text=text)]
        warnings = door.workspace.take_warnings()
        if warnings:
            blocks.append(TextContent(type="text", text=with_warnings("", warnings)))
        return CallToolResult(content=blocks)

    def written(line: str, draft: Draft, propose_only: bool) -> tuple[str, JSONObject]:
        """An agent's entry routed by the write policy (on the worker), and what the answer says of it."""
        out = door.agents(line).write(draft, gate.via, propose_only)
        text = write_message(out)
        return text, write_data(out, text)

    async def answer(fn: Callable[[], tuple[str, JSONObject]], writes: bool = False) -> CallToolResult:
        """A text answer with its data (structured content), the warnings in both. After a write,
        what it recorded is published (queued behind the writes already waiting, so one push
        carries them all)."""

        def job() -> tuple[str, JSONObject]:
            text, data = fn()
            if writes and recorded(data):
                gate.recorded()
            return text, data

        text, data = await run(job)
        warnings = door.workspace.take_warnings()
        if writes and recorded(data):
            warnings += [gate.shown(w) for w in await run(gate.publish)]
        blocks: list[ContentBlock] = [TextContent(type="text", text=text)]
        if warnings:
            blocks.append(TextContent(type="text", text=with_warnings("", warnings)))
        return CallToolResult(content=blocks, structured_content={**data, "warnings": warnings})

    def tool(hints: dict[str, bool]) -> Callable[[Tool_], Tool_]:
        return server.tool(structured_output=False, annotations=ToolAnnotations.model_validate(hints))

    @server.resource(
        CONTEXT_URI,
        name="project-context",
        mime_type="text/markdown",
        description="The project's context (what, decisions in force, open, resume, recent, "
        f"waiting for review) within {RESOURCE_BUDGET} characters.",
    )
    async def project_context() -> str:
        missing = gate.missing_scope("lifeline_context")
        if missing:
            raise ResourceError(needs_scope("lifeline_context", missing, resource=True))

        def read() -> str:
            led, notice = door.reading()
            return context_text(led, RESOURCE_BUDGET, None, notice=notice)

        text = await run(read, ResourceError)
        for w in door.workspace.take_warnings():
            log.warning("%s", w)
        return text

    @tool(READ)
    async def lifeline_context(
        query: Annotated[str, Field(description="Your task in a few words: adds the entries relevant to it.")] = "",
        thread: Annotated[str, Field(description="Scope to one thread: its name or an open item's id.")] = "",
        budget: Budget = DEFAULT_BUDGET,
        line: Line = "",
        budget_tokens: Annotated[
            OptionalInt, Field(description="Hard limit in estimated tokens instead of characters.")
        ] = None,
        as_of: Annotated[str, Field(description="The context as the ledger stood then: a date or a commit.")] = "",
    ) -> CallToolResult:
        """The project's context: what it is, the decisions in force (with their why), open items, where
        work stopped, recent entries and what waits for review, within the budget. Call it when a session
        starts and after any compaction. Every item carries its entry id: cite it, never invent one."""

        def read() -> str:
            led, notice = door.reading(line)
            return context_text(led, budget, budget_tokens, query, thread, as_of, notice)

        return await call(read)

    @tool(READ)
    async def lifeline_resume(
        thread: Annotated[str, Field(description="Only this thread (name or open item id); empty = all.")] = "",
        line: Line = "",
    ) -> CallToolResult:
        """Where work stopped: the live checkpoint of each thread (goal, done, next, blocked, tried), newest
        first. Read it after lifeline_context and continue from `next`."""

        def read() -> str:
            led, notice = door.reading(line)
            return notice + resume_text(led, thread)

        return await call(read)

    @tool(READ)
    async def lifeline_brief(
        task_or_thread: Annotated[str, Field(description="A thread name, an open item's id, or the task.")],
        budget: Budget = 4000,
        line: Line = "",
    ) -> CallToolResult:
        """The brief for a sub-agent: the project's identity, the decisions that matter for the thread or
        task, and where its work stopped, within the budget."""

        def read() -> str:
            led, notice = door.reading(line)
            return brief_text(led, task_or_thread, budget, notice)

        return await call(read)

    @tool(READ)
    async def lifeline_recall(
        query: Annotated[str, Field(description="What you want to know, in a few words.")],
        k: Annotated[int, Field(description="At most this many entries.")] = 5,
        line: Line = "",
    ) -> CallToolResult:
        """Find the entries about a topic ("did we already decide X?"), by relevance, not recency.
        Entries a correction replaced are marked [SUPERSEDED], [WITHDRAWN] or [CLOSED]: do not act
        on them. Abstains when nothing answers it."""

        def read() -> tuple[str, JSONObject]:
            led, notice = door.reading(line)
            text, data = recall_answer(led, query, k)
            return notice + text, data

        return await answer(read)

    @tool(READ)
    async def lifeline_show(
        id: Annotated[str, Field(description="The entry's id or a unique prefix (6+ hex).")],
        line: Line = "",
    ) -> CallToolResult:
        """One entry in full: its why (body), who wrote it, its parents, what it supersedes and what
        superseded it. Use it when the context or recall shows only a summary."""

        def read() -> tuple[str, JSONObject]:
            led, notice = door.reading(line)
            text, data = show_answer(view_entry(led, id))
            return notice + text, data

        return await answer(read)

    @tool(READ)
    async def lifeline_pending(line: Line = "") -> CallToolResult:
        """The proposals waiting for a human's review, oldest first (yours included): do not file them
        again, and tell the human they wait (git lifeline review)."""
        return await answer(lambda: pending_answer(door.agents(line)))

    @tool(WRITE)
    async def lifeline_append(
        kind: Kind,
        summary: Annotated[str, Field(description="One line: the what.")],
        body: Annotated[str, Field(description="The why: reasons, alternatives, consequences.")],
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        thread: Annotated[str, Field(description="Record it on a thread (name or open item id).")] = "",
        line: Line = "",
        parents: Annotated[
            list[str], Field(description="Entries this one builds on (ids or unique prefixes).")
        ] = NO_ITEMS,
    ) -> CallToolResult:
        """Record a decision, feature, fix, incident or other entry. By the project's policy it is either
        written directly (audited) or filed as a proposal that a human approves; the answer says which."""

        agent, propose_only = gate.agent(agent), gate.propose_only()  # per request: read here, not on the worker

        writer = Writer(agent=agent, provider=provider, model=model)
        draft = writer.draft(kind, summary, body, parents, thread=thread or None)
        return await answer(lambda: written(line, draft, propose_only), writes=True)

    @tool(WRITE)
    async def lifeline_recontextualize(
        parent_id: Annotated[str, Field(description="The entry this supersedes (id or unique prefix).")],
        summary: Annotated[str, Field(description="One line: what is true now.")],
        body: Annotated[str, Field(description="Why it changed.")],
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        line: Line = "",
        revert: Annotated[bool, Field(description="True when the entry is withdrawn and nothing replaces it.")] = False,
    ) -> CallToolResult:
        """Supersede an earlier entry with a correction (a reversed decision, a closed open item, an updated
        fact). The ledger is append-only: this never edits, it adds. Routed by the policy like any write."""

        agent, propose_only = gate.agent(agent), gate.propose_only()  # per request: read here, not on the worker

        text = body.strip()
        if revert:
            text = "action: revert\n\n" + text if text else ""
        draft = Writer(agent=agent, provider=provider, model=model).draft("correction", summary, text, (parent_id,))
        return await answer(lambda: written(line, draft, propose_only), writes=True)

    @tool(WRITE)
    async def lifeline_checkpoint(
        thread: Annotated[str, Field(description="The thread: a name or an open item's id.")] = "main",
        next: Items = NO_ITEMS,
        done: Items = NO_ITEMS,
        blocked: Items = NO_ITEMS,
        tried: Items = NO_ITEMS,
        goal: Items = NO_ITEMS,
        summary: Annotated[str, Field(description="Default: derived from the first next/goal item.")] = "",
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        line: Line = "",
    ) -> CallToolResult:
        """Record where work stopped on a thread: goal, done, next, blocked, tried (what failed and why).
        Call it when a step completes, when blocked, and before the session ends. It replaces the thread's
        previous checkpoint; the next session resumes from it."""

        agent, propose_only = gate.agent(agent), gate.propose_only()  # per request: read here, not on the worker

        def write() -> tuple[str, JSONObject]:
            writer = Writer(agent=agent, provider=provider, model=model)
            draft = CheckpointDraft.from_options(
                thread or None, goal, done, next, blocked, tried, summary or None, writer
            )
            out = door.agents(line).checkpoint(draft, gate.via, propose_only=propose_only)
            text = write_message(out, out.replaced)
            return text, write_data(out, text)

        return await answer(write, writes=True)

    return server


def _require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        try:
            from importlib.metadata import version

            found = f" (found mcp {version('mcp')}, which has no mcp.server.mcpserver)"
        except Exception:
            found = ""
        raise LifelineError(f"git lifeline mcp needs the MCP Python SDK 2.x{found}: {SDK_HINT}") from None


def check(start: Optional[str] = None, line: Optional[str] = None) -> str:
    """What `mcp --check` says: the server could serve (repository, line, SDK), without serving."""
    door = Door(start, line)
    _require_sdk()
    from importlib.metadata import version

    return (
        f"git-lifeline mcp: ready to serve line '{door.default_line}' of {door.workspace.location} "
        f"(MCP SDK {version('mcp')})"
    )


def serve(start: Optional[str] = None, line: Optional[str] = None) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    door = Door(start, line)  # a bad repository or line fails before the (slow) SDK import
    _require_sdk()
    server = build_server(door)
    for handler in logging.getLogger().handlers:  # the SDK's, set up as the server is made
        handler.addFilter(_Visible())
    server.run("stdio")


class _Visible(logging.Filter):
    """A log record reaches stderr made visible (app/visible.py), as the CLI prints: warnings
    and errors carry paths, names and entry text, and stderr is a terminal or a client's log
    file. A traceback is shown with its line breaks, each line visible."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = visible(record.getMessage())
        if record.exc_info:
            shown = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            text += "\n" + visible(shown, multiline=True)
            record.exc_info, record.exc_text = None, None
        record.msg, record.args = text, ()
        return True
