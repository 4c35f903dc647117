"""Commands on one line's entries: write (log, checkpoint, pin, unpin), read (show, list,
context, recall, resume, stale, conflicts), and its projection file (render, migrate).
Everything printed for a human goes through cli/terminal.py (hidden characters made
visible); JSON is printed exact."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable, Optional

import click

from ..app.visible import visible
from .common import (
    complete_kinds,
    echo_json,
    entry_dict,
    entry_options,
    line_option,
    open_ledger,
    open_reading,
    page,
    quiet_option,
    say_behind,
    short,
)
from .listing import ONELINE
from .terminal import echo_painted, info, output, say

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.draft import Draft


@click.command()
@entry_options
@click.option("--dedup-key", default=None, help="Idempotency key: a second entry with it is not written.")
@click.option("--thread", default=None, help="Record into a thread: chains to the thread's head.")
@click.option(
    "--allow-secret",
    "allow_secret",
    metavar="REASON",
    default=None,
    help="Write even though the secret scan flags the text (a false positive); REASON is recorded in the entry.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the entry as JSON.")
@quiet_option
@line_option
@click.pass_context
def log(
    ctx: click.Context,
    draft: Draft,
    as_json: bool,
) -> None:
    """Append an entry to the line (a human's write: direct; with --agent, routed by the write policy)."""
    if draft.agent != "human":
        from .review import agent_log

        return agent_log(ctx, draft, as_json)
    out = open_ledger(ctx).log(draft)
    if as_json:
        echo_json({"entry": entry_dict(out.entry), "written": out.written, "commit": out.commit})
    elif out.written:
        info(f"recorded {out.entry.short} {out.entry.kind}: {out.entry.summary}")
    else:
        info(f"already recorded {out.entry.short} (same content); nothing written")


# How `show` paints each status (core/status.py).
_STATUS_STYLES = {
    "in force": "good",
    "open": "good",
    "superseded": "bad",
    "withdrawn": "bad",
    "closed": "bad",
    "expired": "bad",
}


@click.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def show(ctx: click.Context, ref: str, as_json: bool) -> None:
    """Show one entry by id or unique prefix: every field, the whole body, and where it
    stands (what superseded it, what it supersedes)."""
    from ..app.entry_view import view_entry
    from ..app.text import TRUST_WORDS, format_ts
    from ..app.text import why_line as one_line_why

    led, caught = open_reading(ctx)
    say_behind(caught)
    view = view_entry(led, ref)
    e = view.entry
    if as_json:
        doc = entry_dict(e)
        doc["status"] = view.status
        doc["trust"] = view.trust
        doc["superseded_by"] = [{"id": x.id, "how": x.how, "acts": x.acts} for x in view.superseded_by]
        doc["supersedes"] = [{"id": x.id, "how": x.how, "acts": x.acts} for x in view.supersedes if x.entry]
        doc["reaffirmed_by"] = [{"id": x.id, "ts": format_ts(x.ts), "author": x.author} for x in view.reaffirmed_by]
        echo_json(doc)
        return
    page(ctx)
    o = output()

    def field(name: str, value: str, style: str = "") -> None:
        shown = o.paint(value, style) if style else visible(value)
        label = name + ":"
        echo_painted(o.paint(label.ljust(max(10, len(label) + 1)), "field") + shown)

    field("id", e.id, "id")
    field("ts", format_ts(e.ts))
    field("kind", e.kind, "kind")
    field("summary", e.summary)
    field("author", e.author)
    field("agent", e.agent)
    field("provider", e.provider)
    field("model", e.model)
    field("parents", ", ".join(e.parents) if e.parents else "-")
    if e.dedup_key is not None:
        field("dedup", e.dedup_key)
    field("status", view.status, _STATUS_STYLES.get(view.status, ""))
    field("trust", TRUST_WORDS[view.trust])
    for link in view.supersedes:
        if link.entry is None:
            continue
        field(
            link.how,
            f"{short(link.id)} {link.entry.kind}: {link.entry.summary}"
            + ("" if link.acts else "  (no longer: this correction was reverted)"),
        )
    for missing in view.missing:
        field("names", f"{short(missing)} (not in this line)")
    for link in view.superseded_by:
        if link.entry is None:
            continue
        field(
            "reverted by" if link.how == "reverts" else "revised by",
            f"{short(link.id)} {link.entry.kind}: {link.entry.summary}"
            + ("" if link.acts else "  (itself reverted: it does not act)"),
        )
    for again in view.reaffirmed_by:
        field("re-affirmed", f"{format_ts(again.ts)} by {again.author} ({again.short}): {one_line_why(again.body)}")
    if e.body:
        echo_painted("\n" + "\n".join(body_lines(e.body)))


BODY_INDENT = "    "


def body_lines(body: str) -> list[str]:
    """An entry's body as `git log` shows a message: hidden characters made visible, every line
    indented, so no line of it (`status:   in force`, `revised by: ...`) passes for a field of
    show's own. Trailing blank lines are left out, as git does; --json keeps the body exact."""
    return [BODY_INDENT + line for line in visible(body, multiline=True).rstrip("\n").split("\n")]


@click.command("list")
@click.option("--kind", default=None, metavar="KIND", help="Only entries of this kind.", shell_complete=complete_kinds)
@click.option(
    "-n",
    "--max-count",
    "limit",
    type=int,
    default=None,
    metavar="N",
    help="Only the newest N (still listed oldest first).",
)
@click.option(
    "--since",
    "--after",
    "since",
    default=None,
    metavar="DATE",
    help="Only entries recorded since DATE (YYYY-MM-DD, an ISO time, or git's forms: '2 weeks ago', "
    "yesterday, 'last friday').",
)
@click.option(
    "--until",
    "--before",
    "until",
    default=None,
    metavar="DATE",
    help="Only entries recorded until DATE (a bare date includes the whole UTC day).",
)
@click.option(
    "--author",
    default=None,
    metavar="PATTERN",
    help="Only entries whose author, agent or model matches PATTERN (a regular expression, case-insensitive).",
)
@click.option("--oneline", is_flag=True, help=f"One short line per entry: --format='{ONELINE}'.")
@click.option(
    "--format",
    "--pretty",
    "fmt",
    default=None,
    metavar="FORMAT",
    help="Each entry through FORMAT: %H %h %s %b %k %an %ae %ad %ai %aI %as %ar %at %g %gp %gm "
    "%p %P %d %n %% and colours %Cred %Cgreen %Cblue %Cyellow %Creset %C(name); "
    "or 'oneline'.",
)
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def list_cmd(
    ctx: click.Context,
    kind: Optional[str],
    limit: Optional[int],
    since: Optional[str],
    until: Optional[str],
    author: Optional[str],
    oneline: bool,
    fmt: Optional[str],
    as_json: bool,
) -> None:
    """List the line's entries, oldest first (filters like git log's)."""
    from ..errors import InputError
    from .listing import check_format, default_line, now_utc, render

    if oneline and fmt:
        raise InputError("give --oneline or --format, not both")
    chosen = ONELINE if oneline else fmt
    template = check_format(chosen) if chosen else None
    from ..app.listing import select

    led, caught = open_reading(ctx)
    say_behind(caught)
    entries = select(led, kind=kind, since=since, until=until, author=author, limit=limit)
    if as_json:
        from ..app.provenance import provenance_of

        provenance = provenance_of(led)
        echo_json([{**entry_dict(e), "trust": provenance.tier(e)} for e in entries])
        return
    page(ctx)
    o, now = output(), now_utc()
    for e in entries:
        echo_painted(render(e, template, o, now) if template is not None else default_line(e, o))


@click.command()
@click.option(
    "--budget",
    type=int,
    default=None,
    metavar="CHARS",
    help="Hard limit on the output, in characters (default: git config lifeline.budget, else 16000).",
)
@click.option(
    "--budget-tokens",
    type=int,
    default=None,
    metavar="N",
    help="Hard limit in estimated tokens (git config lifeline.tokenizer: estimate|tiktoken).",
)
@click.option("--query", default=None, help="Add a Relevant section from recall.")
@click.option("--thread", default=None, help="The brief of one thread (its decisions pinned, its resume).")
@click.option("--as-of", "as_of", default=None, metavar="DATE|COMMIT", help="The context as the ledger stood then.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["generic", "anthropic", "openai", "gemini"]),
    default="generic",
    show_default=True,
    help="Wrap the markdown in a provider's system-message shape.",
)
@line_option
@click.pass_context
def context(
    ctx: click.Context,
    budget: Optional[int],
    budget_tokens: Optional[int],
    query: Optional[str],
    thread: Optional[str],
    as_of: Optional[str],
    fmt: str,
) -> None:
    """Print the context a fresh AI reads: what, decisions in force, open, resume, recent."""
    from ..app.context_run import delivered

    led, caught = open_reading(ctx)
    parts = led.context(
        budget=budget, budget_tokens=budget_tokens, query=query, thread=thread, as_of=as_of, notice=caught.notice()
    )
    if not parts.text:
        click.echo(
            f"git-lifeline: nothing fits in a budget of {budget if budget is not None else budget_tokens}", err=True
        )
    if parts.text or fmt != "generic":
        text = delivered(parts, fmt)
        if sys.stdout.isatty():  # a human reads it: hidden characters shown; piped to an AI: exact
            page(ctx, colour=False)
            say(text, nl=False)
        else:
            click.echo(text, nl=False)


@click.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def recall(ctx: click.Context, query: str, k: int, as_json: bool) -> None:
    """The entries a question is about (lexical, or semantic with a model); abstains when nothing is."""
    from ..app.recall import ask, strength_words
    from ..app.text import why_line

    led, caught = open_reading(ctx)
    say_behind(caught)
    recalled = ask(led, query, k=k)
    mode, detail = led.recall_mode
    if as_json:
        from ..app.recall_json import answer_json  # pydantic: only for --json

        echo_json(answer_json(recalled, led.recall_mode, why_chars=400).as_json())
        return
    page(ctx)
    o = output()
    if recalled.abstained:
        which = "recall" if mode == "semantic" else "lexical recall"
        say(f"no entry answers that ({which} abstained: {recalled.reason})")
        if mode != "semantic":
            say(f"recall was lexical: {detail}")
        if recalled.nearest:
            say("nearest entries, which do not answer it:")
    for f in recalled.hits or recalled.nearest:
        mark = "" if f.in_force else "  " + o.paint(f"({f.status})", "bad")
        echo_painted(
            f"{o.paint(short(f.entry.id), 'id')}  {o.paint(f'{f.entry.kind:<11}', 'kind')} "
            f"{visible(f.entry.summary)}{mark}"
        )
        echo_painted(f"          {strength_words(f)}")
        why = why_line(f.entry.body)
        if why:
            echo_painted(f"          {visible(why)}")


@click.command()
@click.option("--thread", default=None, help="Thread name or open item id (default: main).")
@click.option("--summary", default=None, help="Default: derived from the first next/goal item.")
@click.option("--goal", multiple=True)
@click.option("--done", multiple=True)
@click.option("--next", "next_", multiple=True)
@click.option("--blocked", multiple=True)
@click.option("--tried", multiple=True)
@click.option("--agent", default="human", show_default=True)
@click.option("--provider", default="none", show_default=True)
@click.option("--model", default="human", show_default=True)
@click.option(
    "--allow-secret",
    "allow_secret",
    metavar="REASON",
    default=None,
    help="Write even though the secret scan flags the text; REASON is recorded in the entry.",
)
@quiet_option
@line_option
@click.pass_context
def checkpoint(
    ctx: click.Context,
    thread: Optional[str],
    summary: Optional[str],
    goal: tuple[str, ...],
    done: tuple[str, ...],
    next_: tuple[str, ...],
    blocked: tuple[str, ...],
    tried: tuple[str, ...],
    agent: str,
    provider: str,
    model: str,
    allow_secret: Optional[str],
) -> None:
    """Record where work stopped on a thread (the next session resumes from it)."""
    from ..app.draft import CheckpointDraft, Writer

    writer = Writer(agent=agent, provider=provider, model=model)
    draft = CheckpointDraft.from_options(thread, goal, done, next_, blocked, tried, summary, writer, allow_secret)
    if agent != "human":
        from .review import agent_checkpoint

        return agent_checkpoint(ctx, draft)
    out = open_ledger(ctx).checkpoint(draft)
    if out.written:
        info(f"recorded {out.entry.short} checkpoint: {out.entry.summary}")
    else:
        info(f"unchanged: the live checkpoint {out.entry.short} already says this; nothing written")


@click.command()
@click.option("--thread", default=None)
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def resume(ctx: click.Context, thread: Optional[str], as_json: bool) -> None:
    """Where work stopped: the live checkpoint of each thread, newest first."""
    from ..app.text import format_ts

    led, caught = open_reading(ctx)
    say_behind(caught)
    cps = led.resume(thread)
    if as_json:
        echo_json(
            [
                {
                    "thread": c.thread,
                    "id": c.entry.id,
                    "summary": c.entry.summary,
                    "ts": format_ts(c.entry.ts),
                    **c.sections,
                }
                for c in cps
            ]
        )
        return
    page(ctx)
    if not cps:
        say("no checkpoint yet")
    for c in cps:
        say(
            f"{visible(c.thread if len(c.thread) != 64 else short(c.thread))}  {c.entry.short}  {visible(c.entry.summary)}"
        )
        for name, items in c.sections.items():
            for item in items:
                say(f"  {name}: {visible(item)}")


def _on_a_decision(func: Callable[[click.Context, str], None]) -> click.Command:
    """A command taking one decision (REF) on one line, and nothing else: pin, unpin."""
    return click.command()(click.argument("ref")(quiet_option(line_option(click.pass_context(func)))))


@_on_a_decision
def pin(ctx: click.Context, ref: str) -> None:
    """Pin a decision in force: always shown first in the context."""
    from ..app.edits import pin as pin_decision

    out = pin_decision(open_ledger(ctx, existing=True), ref)
    info(f"pinned {ref} ({out.entry.short})" if out.written else f"{ref} is already pinned")


@_on_a_decision
def unpin(ctx: click.Context, ref: str) -> None:
    """Unpin a decision (a correction of its pin entry)."""
    from ..app.edits import unpin as unpin_decision

    out = unpin_decision(open_ledger(ctx, existing=True), ref)
    info(f"unpinned {ref} ({out.entry.short})")


STALE_SHOWN = 20  # stale decisions listed before "and N more"


@click.command()
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only code commits after DATE (YYYY-MM-DD, an ISO time, or git's forms: '2 weeks ago').",
)
@click.option("--since-commit", "since_commit", default=None, metavar="REV", help="Only code commits after REV.")
@click.option("--all", "show_all", is_flag=True, help=f"Every stale decision (default: the {STALE_SHOWN} strongest).")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def stale(ctx: click.Context, since: Optional[str], since_commit: Optional[str], show_all: bool, as_json: bool) -> None:
    """Decisions in force whose code (their `paths:`) changed since they were made,
    strongest first: removed (its paths match no file now), rewritten (about half of its
    lines or more changed), touched (some lines). A `paths:` item may name lines or a
    symbol of one file (src/auth.py#L10-40, src/auth.py#login): only commits that touch
    those lines or that body count.

    \b
    To clear a mark, re-read the decision against the code, then either
      git lifeline reaffirm ID [--at COMMIT] [--body WHY]
    or name it in the trailer of the commit that changes its code:  Lifeline: ID
    (a human's re-affirmation counts; an agent's once a human approves it)."""
    led, caught = open_reading(ctx)
    say_behind(caught)
    findings = led.stale_since(since, since_commit)
    found = findings.stale
    if as_json:
        echo_json(
            [
                {
                    "id": s.decision,
                    "paths": s.paths,
                    "commits": s.commits,
                    "lines": s.lines,
                    "where": s.where,
                    "grade": s.grade,
                    "files_now": s.files_now,
                    "lines_now": s.lines_now,
                }
                for s in found
            ]
        )
        return
    page(ctx)
    note = findings.unknown_note()
    if note:
        say(note)
    if not found:
        say("no decision in force has seen its code change since it was made")
    st = led.state()
    for s in found if show_all else found[:STALE_SHOWN]:
        say(
            f"{short(s.decision)}  {visible(st.by_id[s.decision].summary)}\n  {visible(s.mark())} "
            f"({', '.join(short(c) for c in s.commits[:5])}{' …' if len(s.commits) > 5 else ''})"
        )
    if not show_all and len(found) > STALE_SHOWN:
        say(f"… and {len(found) - STALE_SHOWN} more, weaker (git lifeline stale --all)")
    if found:
        say(
            "clear a mark once you have re-read the decision against the code: git lifeline reaffirm <id> "
            "(or name it in a commit's 'Lifeline: <id>' trailer)"
        )


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--exit-code", "exit_code", is_flag=True, help="Exit 1 when there are conflicts, 0 when none (as git diff)."
)
@line_option
@click.pass_context
def conflicts(ctx: click.Context, as_json: bool, exit_code: bool) -> None:
    """Decisions in force about the same subject that disagree (no correction between them)."""
    led, caught = open_reading(ctx)
    say_behind(caught)
    st = led.state()
    groups = st.conflicts
    if as_json:
        echo_json(
            [{"subject": subj, "ids": ids, "summaries": [st.by_id[i].summary for i in ids]} for subj, ids in groups]
        )
    else:
        page(ctx)
        if not groups:
            say("no conflicting decisions in force")
        for subj, ids in groups:
            say(f"'{visible(subj)}': {len(ids)} decisions in force")
            for i in ids:
                say(f"  {short(i)}  {visible(st.by_id[i].summary)}")
        if groups:
            say(
                "resolve one: git lifeline resolve ID (keep ID, revert the others) "
                "or git lifeline resolve ID --summary TEXT --body WHY (one new decision for them all)"
            )
    if exit_code and groups:
        sys.exit(1)


@click.command()
@line_option
@click.pass_context
def render(ctx: click.Context) -> None:
    """Rewrite the projection (LIFELINE.md) from the ref."""
    path = open_ledger(ctx, existing=True).render()
    info(f"wrote {path}")
