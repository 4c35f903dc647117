"""The agent's door: `git lifeline mcp`, an MCP server over stdio.

A thin face: every tool calls app/ (a Ledger, its Agents) and turns the result into text.
Tool names and parameters are those of lifeline-context's server, so agent rules
written for it keep working; writes go through the project's policy (policy.py),
and proposals wait in the review trail (review.py) for a human.

The server finds the repository from its working directory (or --repo), serves
every line of it (the `line` argument), and never writes outside the repository's
git dir: refs, objects and the cache only, never the work tree.

The MCP Python SDK (2.x, extra `[mcp]`) is imported only when the server starts,
so the rest of the CLI never needs it. Every failure becomes an MCP tool error
(isError) with a clear message (errors.describe_failure, the boundary every face
shares); nothing a caller sends can crash the server. What the user should know after
a call succeeded (the workspace's warnings) comes back as a second text block.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at
# registration, and these tools are defined inside a function.
import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Callable, Optional, Union

from pydantic import Field

from ..app.agents import Agents
from ..app.text import one_line, who
from ..app.workspace import Workspace
from ..errors import InputError, LifelineError, describe_failure

SERVER_NAME = "lifeline"
CONTEXT_URI = "lifeline://project/context"
RESOURCE_BUDGET = 16000
SDK_HINT = "pip install 'git-lifeline[mcp]'  (the MCP Python SDK 2.x)"
INTERNAL = 3  # describe_failure's exit code for a bug of ours
log = logging.getLogger("git_lifeline.mcp")

INSTRUCTIONS = """\
This project keeps its reasoning ledger in git with git-lifeline: decisions and the why behind
them, reversals, open items, incidents and checkpoints of work in progress. Every entry is
immutable and has an id; the ledger is the project's memory across sessions and agents.

How to work with it:
1. When a session starts, and again after your context was compacted, call lifeline_context and
   then lifeline_resume. Treat the decisions in force as the project's current truth and cite the
   entry id (e.g. [1a2b3c4d]) when you rely on one. Never reconstruct a why from the code: if the
   ledger does not say it, ask the human.
2. Before you decide something, ask lifeline_recall("the topic") whether it was decided already.
3. While you work, record each meaningful decision, feature, fix or incident with lifeline_append.
   The summary is the what (one line); the body is the why, and it is required. To reverse or
   replace an earlier entry call lifeline_recontextualize with its id; do not restate it as new.
4. Your writes follow the project's write policy. Most become proposals that a human approves
   (git lifeline review); checkpoints are usually written directly. A write the policy denies
   comes back as an error: tell the human, and do not retry it under another agent name.
5. When a step is done, when you are blocked, and before you stop: lifeline_checkpoint with the
   thread and what is done, next, blocked and tried. The next session resumes from it.
6. When you hand work to a sub-agent, give it lifeline_brief(task or thread) and ask it to write
   back on the same thread.
Pass agent, provider and model on every write, so the ledger shows who wrote what. If the ledger
is empty, ask the human three to seven questions about what the project is and why it exists,
then propose one bootstrap entry, the decisions in force and the open items, one entry each."""


class Door:
    """The repository the server serves: a confined Workspace (nothing written outside the
    git dir), one Ledger per line kept warm between calls."""

    def __init__(self, start: Optional[str] = None, line: Optional[str] = None):
        self.workspace = Workspace.open(start, confined=True)
        self.default_line = self.workspace.ledger(line).line  # a bad line fails here, before serving

    def ledger(self, line: str = ""):
        return self.workspace.ledger((line or "").strip() or self.default_line)

    def agents(self, line: str = "") -> Agents:
        return Agents(self.ledger(line))


# ---- text for the agent (presentation only) ---------------------------------
def write_message(out, replaced: Optional[str] = None) -> str:
    e = out.entry
    if out.mode == "unchanged":
        return f"unchanged: the live checkpoint {e.id[:12]} of this thread already says exactly this; nothing recorded"
    if out.mode == "propose":
        pid = out.proposal.short
        extra = f" It supersedes {e.parents[0][:12]} once approved." if e.kind == "correction" and e.parents else ""
        return (f"proposal {pid} filed ({e.kind}: {e.summary}). It enters the ledger when a human approves it "
                f"(git lifeline review; git lifeline approve {pid}).{extra} Policy: {out.rule} = propose.")
    if not out.written:
        return f"already in the ledger: {e.kind} {e.id[:12]} has exactly this content and parents; nothing written"
    text = (f"{e.kind} recorded directly: id={e.id[:12]} (policy: {out.rule} = direct; audited in the review "
            f"trail as {out.audit.short}).")
    if e.kind == "correction" and e.parents:
        text += f" It supersedes {', '.join(p[:12] for p in e.parents)}."
    if replaced:
        text += f" It replaces checkpoint {replaced[:12]} as where work stopped on this thread."
    return text


def resume_text(ledger, thread: str) -> str:
    cps = ledger.resume(thread or None)
    if not cps:
        return ("No checkpoint recorded yet: nothing to resume. When you stop, record where you are with "
                "lifeline_checkpoint.")
    lines = ["## Resume (where work stopped)"]
    for cp in cps:
        name = ledger.thread_name(cp.thread)
        lines.append(f"- **{name}** `[{cp.entry.short}]` — {who(cp.entry)}, {cp.entry.ts:%Y-%m-%d %H:%M}: "
                     f"{cp.entry.summary}")
        for section, items in cp.sections.items():
            lines.extend(f"  - {section}: {one_line(item)}" for item in items)
    return "\n".join(lines) + "\n"


def recall_text(ledger, query: str, k: int) -> str:
    if k < 1:
        raise InputError("k must be at least 1")
    rows = []
    for f in ledger.find(query, k=k):
        e = f.entry
        mark = "" if f.in_force else " [SUPERSEDED]"
        rows.append(f"- [{e.kind}]{mark} {e.summary} (id={e.id[:12]}, score={f.score:.2f}, "
                    f"coverage={f.coverage:.2f})")
    if not rows:
        return "Nothing in the ledger is about that (recall abstained)."
    return "\n".join(rows) + "\n"


def context_text(ledger, budget: int, budget_tokens: Optional[int], query: str = "", thread: str = "",
                 as_of: str = "") -> str:
    if budget_tokens is None and budget < 0:
        raise InputError("budget must be zero or more characters")
    if budget_tokens is not None and budget_tokens < 0:
        raise InputError("budget_tokens must be zero or more")
    parts = ledger.context(budget=None if budget_tokens is not None else budget, budget_tokens=budget_tokens,
                           query=query or None, thread=thread or None, as_of=as_of or None)
    if not parts.text:
        asked = f"{budget_tokens} tokens" if budget_tokens is not None else f"{budget} characters"
        raise InputError(f"nothing fits in a budget of {asked}; ask for a larger budget (the default is 16000 "
                         "characters)")
    return parts.text


def brief_text(ledger, task_or_thread: str, budget: int) -> str:
    ref = (task_or_thread or "").strip()
    if not ref:
        raise InputError("task_or_thread is empty: give a thread name, an open item's id, or the task in a sentence")
    try:
        ledger.thread_key(ref)
    except InputError:
        return context_text(ledger, budget, None, query=ref)
    return context_text(ledger, budget, None, thread=ref)


# ---- the server -----------------------------------------------------------------------
Line = Annotated[str, Field(description="Another line (ledger) of this repository; empty = the server's line.")]
Agent = Annotated[str, Field(description="Your agent's name (e.g. claude-code); the write policy is keyed on it.")]
Provider = Annotated[str, Field(description="Your model's provider (e.g. anthropic, openai, google).")]
Model = Annotated[str, Field(description="Your model's name.")]
Items = Annotated[Optional[list[str]], Field(description="One line per item.")]
Reply = Union[str, list[str]]  # the text, then the call's warnings when there are any


def build_server(door: Door):
    """The MCPServer with the seven tools and the context resource."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from .. import __version__

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    # All ledger work runs on one worker thread: calls are served in order, the event loop
    # stays free for the protocol, and the warm SQLite cache stays on the thread that opened it.
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lifeline")

    def guarded(fn: Callable[[], str], error) -> str:
        try:
            return fn()
        except Exception as exc:  # the one boundary; a bug of ours must not take the server down
            message, code = describe_failure(exc)
            if code == INTERNAL:
                log.exception("internal error")
            raise error(with_warnings(message, door.workspace.take_warnings())) from None

    async def call(fn: Callable[[], str], error=ToolError) -> Reply:
        """The tool's text, and the warnings of the call as a second text block."""
        text = await asyncio.get_running_loop().run_in_executor(worker, guarded, fn, error)
        warnings = door.workspace.take_warnings()
        return [text, with_warnings("", warnings)] if warnings else text

    async def read(fn: Callable[[], str]) -> str:
        """A resource's text; its warnings go to the server's log (a resource is one text)."""
        text = await asyncio.get_running_loop().run_in_executor(worker, guarded, fn, ResourceError)
        for w in door.workspace.take_warnings():
            log.warning("%s", w)
        return text

    tool = server.tool(structured_output=False)

    @server.resource(CONTEXT_URI, name="project-context", mime_type="text/markdown",
                     description="The project's context (what, decisions in force, open, resume, recent) "
                                 f"within {RESOURCE_BUDGET} characters.")
    async def project_context() -> str:
        return await read(lambda: context_text(door.ledger(), RESOURCE_BUDGET, None))

    @tool
    async def lifeline_context(
        query: Annotated[str, Field(description="Your task in a few words: adds the entries relevant to it.")] = "",
        thread: Annotated[str, Field(description="Scope to one thread: its name or an open item's id.")] = "",
        budget: Annotated[int, Field(description="Hard limit on the answer, in characters.")] = 16000,
        line: Line = "",
        budget_tokens: Annotated[Optional[int], Field(
            description="Hard limit in estimated tokens instead of characters.")] = None,
        as_of: Annotated[str, Field(description="The context as the ledger stood then: a date or a commit.")] = "",
    ) -> Reply:
        """The project's context: what it is, the decisions in force (with their why), open items, where
        work stopped and recent entries, within the budget. Call it when a session starts and after any
        compaction. Every item carries its entry id: cite it, never invent one."""
        return await call(lambda: context_text(door.ledger(line), budget, budget_tokens, query, thread, as_of))

    @tool
    async def lifeline_resume(
        thread: Annotated[str, Field(description="Only this thread (name or open item id); empty = all.")] = "",
        line: Line = "",
    ) -> Reply:
        """Where work stopped: the live checkpoint of each thread (goal, done, next, blocked, tried), newest
        first. Read it after lifeline_context and continue from `next`."""
        return await call(lambda: resume_text(door.ledger(line), thread))

    @tool
    async def lifeline_brief(
        task_or_thread: Annotated[str, Field(description="A thread name, an open item's id, or the task.")],
        budget: Annotated[int, Field(description="Hard limit on the answer, in characters.")] = 4000,
        line: Line = "",
    ) -> Reply:
        """The brief for a sub-agent: the project's identity, the decisions that matter for the thread or
        task, and where its work stopped, within the budget. A known thread gives a thread brief; anything
        else is treated as a task description and adds the relevant entries."""
        return await call(lambda: brief_text(door.ledger(line), task_or_thread, budget))

    @tool
    async def lifeline_recall(
        query: Annotated[str, Field(description="What you want to know, in a few words.")],
        k: Annotated[int, Field(description="At most this many entries.")] = 5,
        line: Line = "",
    ) -> Reply:
        """Find the entries about a topic ("did we already decide X?"), by relevance, not recency.
        Superseded entries are marked [SUPERSEDED]: do not act on them. Abstains when nothing is about it."""
        return await call(lambda: recall_text(door.ledger(line), query, k))

    @tool
    async def lifeline_append(
        kind: Annotated[str, Field(description="decision, feature, fix, incident, milestone, release, note, open, "
                                               "service, api, test, requirement, debt, relation, bootstrap...")],
        summary: Annotated[str, Field(description="One line: the what.")],
        body: Annotated[str, Field(description="The why (required): reasons, alternatives, consequences.")] = "",
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        thread: Annotated[str, Field(description="Record it on a thread (name or open item id).")] = "",
        line: Line = "",
        parents: Annotated[Optional[list[str]], Field(
            description="Entries this one builds on (ids or unique prefixes).")] = None,
    ) -> Reply:
        """Record a decision, feature, fix, incident or other entry. By the project's policy it is either
        written directly (audited) or filed as a proposal that a human approves; the answer says which."""
        def run() -> str:
            out = door.agents(line).write(kind, summary, body, parents=parents, thread=thread or None,
                                          agent=agent, provider=provider, model=model)
            return write_message(out)
        return await call(run)

    @tool
    async def lifeline_recontextualize(
        parent_id: Annotated[str, Field(description="The entry this supersedes (id or unique prefix).")],
        summary: Annotated[str, Field(description="One line: what is true now.")],
        body: Annotated[str, Field(description="Why it changed (required).")] = "",
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        line: Line = "",
        revert: Annotated[bool, Field(
            description="True when the entry is withdrawn and nothing replaces it.")] = False,
    ) -> Reply:
        """Supersede an earlier entry with a correction (a reversed decision, a closed open item, an updated
        fact). The ledger is append-only: this never edits, it adds. Routed by the policy like any write."""
        def run() -> str:
            text = body.strip()
            if revert:
                text = "action: revert\n\n" + text if text else ""
            out = door.agents(line).write("correction", summary, text, parents=[parent_id], agent=agent,
                                          provider=provider, model=model)
            return write_message(out)
        return await call(run)

    @tool
    async def lifeline_checkpoint(
        thread: Annotated[str, Field(description="The thread: a name or an open item's id.")] = "main",
        next: Items = None,
        done: Items = None,
        blocked: Items = None,
        tried: Items = None,
        goal: Items = None,
        summary: Annotated[str, Field(description="Default: derived from the first next/goal item.")] = "",
        agent: Agent = "mcp-agent",
        provider: Provider = "none",
        model: Model = "unknown",
        line: Line = "",
    ) -> Reply:
        """Record where work stopped on a thread: goal, done, next, blocked, tried (what failed and why).
        Call it when a step completes, when blocked, and before the session ends. It replaces the thread's
        previous checkpoint; the next session resumes from it."""
        def run() -> str:
            sections = {"goal": list(goal or []), "done": list(done or []), "next": list(next or []),
                        "blocked": list(blocked or []), "tried": list(tried or [])}
            out = door.agents(line).checkpoint(thread or None, sections, summary or None, agent=agent,
                                               provider=provider, model=model)
            return write_message(out, out.replaced)
        return await call(run)

    return server


def with_warnings(text: str, warnings: list) -> str:
    """`text` followed by one `warning:` line per warning."""
    lines = [text] if text else []
    lines.extend(f"warning: {w}" for w in warnings)
    return "\n".join(lines)


def serve(start: Optional[str] = None, line: Optional[str] = None) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    door = Door(start, line)  # a bad repository or line fails before the (slow) SDK import
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        try:
            from importlib.metadata import version
            found = f" (found mcp {version('mcp')}, which has no mcp.server.mcpserver)"
        except Exception:
            found = ""
        raise LifelineError(f"git lifeline mcp needs the MCP Python SDK 2.x{found}: {SDK_HINT}") from None
    build_server(door).run("stdio")
