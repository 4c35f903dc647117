"""Commands on one line's entries: write (log, checkpoint, pin, unpin), read (show, list,
context, recall, resume, stale, conflicts), and its projection file (render, migrate)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import echo_json, entry_dict, entry_fields, entry_options, line_option, open_ledger


@click.command()
@entry_options
@click.option("--dedup-key", default=None, help="Idempotency key: a second entry with it is not written.")
@click.option("--thread", default=None, help="Record into a thread: chains to the thread's head.")
@click.option("--allow-secret", "allow_secret", metavar="REASON", default=None,
              help="Write even though the secret scan flags the text (a false positive); "
                   "REASON is recorded in the entry.")
@click.option("--json", "as_json", is_flag=True, help="Print the entry as JSON.")
@line_option
@click.pass_context
def log(ctx, kind, summary, body, body_file, parents, author, agent, provider, model, dedup_key, thread,
        allow_secret, as_json):
    """Append an entry to the line (a human's write: direct; with --agent, routed by the write policy)."""
    fields = entry_fields(kind, summary, body, body_file, parents, author, agent, provider, model)
    fields.update(dedup_key=dedup_key, allow_secret=allow_secret)
    if agent != "human":
        from .review import agent_log
        return agent_log(ctx, fields, thread, as_json)
    led = open_ledger(ctx)
    out = led.log_in_thread(thread, fields) if thread else led.log(**fields)
    if as_json:
        echo_json({"entry": entry_dict(out.entry), "written": out.written, "commit": out.commit})
    elif out.written:
        click.echo(f"recorded {out.entry.short} {out.entry.kind}: {out.entry.summary}")
    else:
        click.echo(f"already recorded {out.entry.short} (same content or dedup key); nothing written")


@click.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def show(ctx, ref, as_json):
    """Show one entry by id or unique prefix."""
    e = open_ledger(ctx).show(ref)
    if as_json:
        echo_json(entry_dict(e))
        return
    click.echo(f"id:       {e.id}\nts:       {e.ts:%Y-%m-%dT%H:%M:%S.%fZ}\nkind:     {e.kind}\n"
               f"summary:  {e.summary}\nauthor:   {e.author}\nagent:    {e.agent}\nprovider: {e.provider}\n"
               f"model:    {e.model}\nparents:  {', '.join(e.parents) if e.parents else '-'}")
    if e.dedup_key is not None:
        click.echo(f"dedup:    {e.dedup_key}")
    if e.body:
        click.echo("\n" + e.body)


@click.command("list")
@click.option("--kind", default=None, metavar="KIND", help="Only entries of this kind.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def list_cmd(ctx, kind, as_json):
    """List the line's entries, oldest first."""
    entries = open_ledger(ctx).entries(kind=kind)
    if as_json:
        echo_json([entry_dict(e) for e in entries])
        return
    for e in entries:
        click.echo(f"{e.short}  {e.ts:%Y-%m-%d %H:%M}  {e.kind:<11} {e.summary}")


@click.command()
@click.option("--budget", type=int, default=None, metavar="CHARS",
              help="Hard limit on the output, in characters (default: git config lifeline.budget, else 16000).")
@click.option("--budget-tokens", type=int, default=None, metavar="N",
              help="Hard limit in estimated tokens (git config lifeline.tokenizer: estimate|tiktoken).")
@click.option("--query", default=None, help="Add a Relevant section from recall.")
@click.option("--thread", default=None, help="The brief of one thread (its decisions pinned, its resume).")
@click.option("--as-of", "as_of", default=None, metavar="DATE|COMMIT", help="The context as the ledger stood then.")
@click.option("--format", "fmt", type=click.Choice(["generic", "anthropic", "openai", "gemini"]),
              default="generic", show_default=True, help="Wrap the markdown in a provider's system-message shape.")
@line_option
@click.pass_context
def context(ctx, budget, budget_tokens, query, thread, as_of, fmt):
    """Print the context a fresh AI reads: what, decisions in force, open, resume, recent."""
    from ..app.ledger import delivered
    parts = open_ledger(ctx).context(budget=budget, budget_tokens=budget_tokens, query=query, thread=thread,
                                     as_of=as_of)
    if not parts.text:
        click.echo(f"git-lifeline: nothing fits in a budget of {budget if budget is not None else budget_tokens}",
                   err=True)
    if parts.text or fmt != "generic":
        click.echo(delivered(parts, fmt), nl=False)


@click.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def recall(ctx, query, k, as_json):
    """Full-text search (BM25); abstains when nothing is really about the query."""
    found = open_ledger(ctx).find(query, k=k)
    if as_json:
        echo_json([{"id": f.entry.id, "score": round(f.score, 4), "coverage": round(f.coverage, 3),
                    "in_force": f.in_force, "kind": f.entry.kind, "summary": f.entry.summary} for f in found])
        return
    if not found:
        click.echo("no entry is about that (recall abstained)")
    for f in found:
        mark = "" if f.in_force else "  (superseded)"
        click.echo(f"{f.entry.id[:8]}  {f.entry.kind:<11} {f.entry.summary}{mark}")


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
@click.option("--allow-secret", "allow_secret", metavar="REASON", default=None,
              help="Write even though the secret scan flags the text; REASON is recorded in the entry.")
@line_option
@click.pass_context
def checkpoint(ctx, thread, summary, goal, done, next_, blocked, tried, agent, provider, model, allow_secret):
    """Record where work stopped on a thread (the next session resumes from it)."""
    sections = {"goal": list(goal), "done": list(done), "next": list(next_), "blocked": list(blocked),
                "tried": list(tried)}
    if agent != "human":
        from .review import agent_checkpoint
        return agent_checkpoint(ctx, thread, sections, summary, dict(agent=agent, provider=provider, model=model,
                                                                     allow_secret=allow_secret))
    out = open_ledger(ctx).checkpoint(thread, sections, summary, agent=agent, provider=provider, model=model,
                                      allow_secret=allow_secret)
    if out.written:
        click.echo(f"recorded {out.entry.short} checkpoint: {out.entry.summary}")
    else:
        click.echo(f"unchanged: the live checkpoint {out.entry.short} already says this; nothing written")


@click.command()
@click.option("--thread", default=None)
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def resume(ctx, thread, as_json):
    """Where work stopped: the live checkpoint of each thread, newest first."""
    cps = open_ledger(ctx).resume(thread)
    if as_json:
        echo_json([{"thread": c.thread, "id": c.entry.id, "summary": c.entry.summary,
                    "ts": c.entry.ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), **c.sections} for c in cps])
        return
    if not cps:
        click.echo("no checkpoint yet")
    for c in cps:
        click.echo(f"{c.thread if len(c.thread) != 64 else c.thread[:8]}  {c.entry.short}  {c.entry.summary}")
        for name, items in c.sections.items():
            for item in items:
                click.echo(f"  {name}: {item}")


@click.command()
@click.argument("ref")
@line_option
@click.pass_context
def pin(ctx, ref):
    """Pin a decision in force: always shown first in the context."""
    out = open_ledger(ctx).pin(ref)
    click.echo(f"pinned {ref} ({out.entry.short})" if out.written else f"{ref} is already pinned")


@click.command()
@click.argument("ref")
@line_option
@click.pass_context
def unpin(ctx, ref):
    """Unpin a decision (a correction of its pin entry)."""
    out = open_ledger(ctx).unpin(ref)
    click.echo(f"unpinned {ref} ({out.entry.short})")


@click.command()
@click.option("--since", default=None, metavar="REV", help="Only code commits after REV.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def stale(ctx, since, as_json):
    """Decisions in force whose code (their `paths:`) changed since they were made."""
    led = open_ledger(ctx)
    found = led.stale(since=since)
    if as_json:
        echo_json([{"id": s.decision, "paths": s.paths, "commits": s.commits, "lines": s.lines,
                    "where": s.where} for s in found])
        return
    if not found:
        click.echo("no decision in force has seen its code change since it was made")
    st = led.state()
    for s in found:
        click.echo(f"{s.decision[:8]}  {st.get(s.decision).summary}\n  {s.mark()} "
                   f"({', '.join(c[:8] for c in s.commits[:5])}{' …' if len(s.commits) > 5 else ''})")


@click.command()
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def conflicts(ctx, as_json):
    """Decisions in force about the same subject that disagree (no correction between them)."""
    st = open_ledger(ctx).state()
    groups = st.conflicts
    if as_json:
        echo_json([{"subject": subj, "ids": ids, "summaries": [st.get(i).summary for i in ids]}
                   for subj, ids in groups])
        return
    if not groups:
        click.echo("no conflicting decisions in force")
    for subj, ids in groups:
        click.echo(f"'{subj}': {len(ids)} decisions in force")
        for i in ids:
            click.echo(f"  {i[:8]}  {st.get(i).summary}")


@click.command()
@line_option
@click.pass_context
def render(ctx):
    """Rewrite the projection (LIFELINE.md) from the ref."""
    path = open_ledger(ctx).render()
    click.echo(f"wrote {path}")


@click.command()
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False), help="A LIFELINE.md projection.")
@click.option("--strict", is_flag=True, help="Abort, writing nothing, if any recorded id does not match.")
@line_option
@click.pass_context
def migrate(ctx, source, strict):
    """Rebuild the line from a LIFELINE.md projection (ids are checked)."""
    from ..app.interop import migrate as migrate_file
    report = migrate_file(open_ledger(ctx), Path(source), strict=strict)
    click.echo(f"read {report.read} entries: {report.added} added, {report.existing} already present")
    for m in report.mismatched:
        click.echo(f"skipped {m[:12]}: content does not match its recorded id", err=True)
