"""The command line face: parses arguments, calls the service, prints. No logic here.

Exit codes: 0 ok, 1 integrity failure, 2 usage or input error, 3 internal error.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Optional

import click

from .. import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
KIND_HELP = ("bootstrap decision feature fix incident milestone release note open correction "
             "service api test requirement debt relation checkpoint")


def _ledger(ctx: click.Context, line: Optional[str] = None):
    from ..app.service import Ledger
    led = Ledger.open(line=line or ctx.obj.get("line"))
    ctx.call_on_close(lambda: [click.echo(f"git-lifeline: warning: {w}", err=True) for w in led.warnings])
    return led


def _echo_json(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))


def _entry_dict(e) -> dict:
    return json.loads(e.to_json())


@click.group(context_settings=CONTEXT_SETTINGS)
@click.option("--line", "line", metavar="NAME", default=None,
              help="The line (ledger) to work on; default: main (git config lifeline.defaultLine).")
@click.version_option(__version__, "--version", prog_name="git-lifeline")
@click.pass_context
def main(ctx: click.Context, line: Optional[str]) -> None:
    """git lifeline: the project's reasoning ledger, kept in git.

    Decisions and their why, reversals, open questions, incidents and checkpoints
    are stored as content-addressed entries under refs/lifeline/<line>. Run
    `git help lifeline` for the manual.
    """
    ctx.ensure_object(dict)
    if line is not None:
        from ..git.store import validate_line
        validate_line(line)
    ctx.obj["line"] = line


@main.command()
@click.option("--no-mcp", is_flag=True, help="Do not add the MCP server to .mcp.json.")
@click.pass_context
def init(ctx: click.Context, no_mcp: bool) -> None:
    """Check the repository, register the MCP server in .mcp.json, and show how to start."""
    led = _ledger(ctx)
    head = led.head()
    state = "exists" if head else "is empty (its ref is created by the first entry)"
    click.echo(f"git-lifeline {__version__}: line '{led.line}' {state} in {led.gr.common_dir}")
    path = led.projection_path()
    click.echo(f"projection: {path if path else 'disabled'}")
    if not no_mcp:
        from .review import print_mcp_setup
        print_mcp_setup(led)
    if not head:
        click.echo("start with:\n  git lifeline log --kind bootstrap --summary \"What this project is\" "
                   "--body \"Why it exists\"")


def entry_options(func):
    """The options that describe an entry, shared by `log` and `propose`."""
    options = [
        click.option("--kind", required=True, metavar="KIND", help=f"One of: {KIND_HELP}."),
        click.option("--summary", required=True, help="One line: the what."),
        click.option("--body", default=None, help="The why (required except for checkpoints)."),
        click.option("--body-file", type=click.Path(dir_okay=False, allow_dash=True), default=None,
                     help="Read the body from a file ('-' for stdin)."),
        click.option("--parents", multiple=True, metavar="ID[,ID]",
                     help="Parent entries: full ids, unique prefixes (>= 6 hex) or LINE:PREFIX; "
                          "repeatable or comma-separated."),
        click.option("--author", default=None, help="Default: git's user.name <user.email>."),
        click.option("--agent", default="human", show_default=True),
        click.option("--provider", default="none", show_default=True),
        click.option("--model", default="human", show_default=True),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def entry_fields(kind, summary, body, body_file, parents, author, agent, provider, model) -> dict:
    """The service's fields from the shared options (the body read from its file)."""
    from ..errors import InputError
    if body is not None and body_file is not None:
        raise InputError("give --body or --body-file, not both")
    if body_file is not None:
        body = _read_text(body_file)
    return dict(kind=kind, summary=summary, body=body or "", parents=_split(parents), author=author,
                agent=agent, provider=provider, model=model)


@main.command()
@entry_options
@click.option("--dedup-key", default=None, help="Idempotency key: a second entry with it is not written.")
@click.option("--thread", default=None, help="Record into a thread: chains to the thread's head.")
@click.option("--allow-secret", "allow_secret", metavar="REASON", default=None,
              help="Write even though the secret scan flags the text (a false positive); "
                   "REASON is recorded in the entry.")
@click.option("--json", "as_json", is_flag=True, help="Print the entry as JSON.")
@click.pass_context
def log(ctx, kind, summary, body, body_file, parents, author, agent, provider, model, dedup_key, thread,
        allow_secret, as_json):
    """Append an entry to the line (a human's write: direct)."""
    fields = entry_fields(kind, summary, body, body_file, parents, author, agent, provider, model)
    fields.update(dedup_key=dedup_key, allow_secret=allow_secret)
    led = _ledger(ctx)
    out = led.log_in_thread(thread, fields) if thread else led.log(**fields)
    if as_json:
        _echo_json({"entry": _entry_dict(out.entry), "written": out.written, "commit": out.commit})
    elif out.written:
        click.echo(f"recorded {out.entry.short} {out.entry.kind}: {out.entry.summary}")
    else:
        click.echo(f"already recorded {out.entry.short} (same content or dedup key); nothing written")


def _split(values) -> list:
    out = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def _read_text(path: str) -> str:
    from ..errors import InputError
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


@main.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(ctx, ref, as_json):
    """Show one entry by id or unique prefix."""
    e = _ledger(ctx).show(ref)
    if as_json:
        _echo_json(_entry_dict(e))
        return
    click.echo(f"id:       {e.id}\nts:       {e.ts:%Y-%m-%dT%H:%M:%S.%fZ}\nkind:     {e.kind}\n"
               f"summary:  {e.summary}\nauthor:   {e.author}\nagent:    {e.agent}\nprovider: {e.provider}\n"
               f"model:    {e.model}\nparents:  {', '.join(e.parents) if e.parents else '-'}")
    if e.dedup_key is not None:
        click.echo(f"dedup:    {e.dedup_key}")
    if e.body:
        click.echo("\n" + e.body)


@main.command("list")
@click.option("--kind", default=None, metavar="KIND", help="Only entries of this kind.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_cmd(ctx, kind, as_json):
    """List the line's entries, oldest first."""
    from ..core.model import KINDS
    from ..errors import InputError
    if kind is not None and kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    entries = [e for e in _ledger(ctx).entries() if kind is None or e.kind == kind]
    if as_json:
        _echo_json([_entry_dict(e) for e in entries])
        return
    for e in entries:
        click.echo(f"{e.short}  {e.ts:%Y-%m-%d %H:%M}  {e.kind:<11} {e.summary}")


@main.command()
@click.option("--budget", type=int, default=None, metavar="CHARS",
              help="Hard limit on the output, in characters (default: git config lifeline.budget, else 8000).")
@click.option("--budget-tokens", type=int, default=None, metavar="N",
              help="Hard limit in estimated tokens (git config lifeline.tokenizer: estimate|tiktoken).")
@click.option("--query", default=None, help="Add a Relevant section from recall.")
@click.option("--thread", default=None, help="The brief of one thread (its decisions pinned, its resume).")
@click.option("--as-of", "as_of", default=None, metavar="DATE|COMMIT", help="The context as the ledger stood then.")
@click.option("--format", "fmt", type=click.Choice(["generic", "anthropic", "openai", "gemini"]),
              default="generic", show_default=True, help="Wrap the markdown in a provider's system-message shape.")
@click.pass_context
def context(ctx, budget, budget_tokens, query, thread, as_of, fmt):
    """Print the context a fresh AI reads: what, decisions in force, open, resume, recent."""
    from ..views.delivery import deliver
    parts = _ledger(ctx).context(budget=budget, budget_tokens=budget_tokens, query=query, thread=thread,
                                 as_of=as_of)
    if not parts.text:
        click.echo(f"git-lifeline: nothing fits in a budget of {budget if budget is not None else budget_tokens}",
                   err=True)
    if parts.text or fmt != "generic":
        click.echo(deliver(parts.stable, parts.volatile, fmt), nl=False)


@main.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def recall(ctx, query, k, as_json):
    """Full-text search (BM25); abstains when nothing is really about the query."""
    led = _ledger(ctx)
    hits = led.recall(query, k=k)
    st = led.state()
    rows = [{"id": h.id, "score": round(h.score, 4), "coverage": round(h.coverage, 3),
             "in_force": h.id not in st.superseded, "kind": st.by_id[h.id].kind,
             "summary": st.by_id[h.id].summary} for h in hits if h.id in st.by_id]
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo("no entry is about that (recall abstained)")
    for r in rows:
        mark = "" if r["in_force"] else "  (superseded)"
        click.echo(f"{r['id'][:8]}  {r['kind']:<11} {r['summary']}{mark}")


@main.command()
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
@click.pass_context
def checkpoint(ctx, thread, summary, goal, done, next_, blocked, tried, agent, provider, model, allow_secret):
    """Record where work stopped on a thread (the next session resumes from it)."""
    sections = {"goal": list(goal), "done": list(done), "next": list(next_), "blocked": list(blocked),
                "tried": list(tried)}
    out = _ledger(ctx).checkpoint(thread, sections, summary, agent=agent, provider=provider, model=model,
                                  allow_secret=allow_secret)
    if out.written:
        click.echo(f"recorded {out.entry.short} checkpoint: {out.entry.summary}")
    else:
        click.echo(f"unchanged: the live checkpoint {out.entry.short} already says this; nothing written")


@main.command()
@click.option("--thread", default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def resume(ctx, thread, as_json):
    """Where work stopped: the live checkpoint of each thread, newest first."""
    cps = _ledger(ctx).resume(thread)
    if as_json:
        _echo_json([{"thread": c.thread, "id": c.entry.id, "summary": c.entry.summary,
                     "ts": c.entry.ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), **c.sections} for c in cps])
        return
    if not cps:
        click.echo("no checkpoint yet")
    for c in cps:
        click.echo(f"{c.thread if len(c.thread) != 64 else c.thread[:8]}  {c.entry.short}  {c.entry.summary}")
        for name, items in c.sections.items():
            for item in items:
                click.echo(f"  {name}: {item}")


@main.command()
@click.argument("ref")
@click.pass_context
def pin(ctx, ref):
    """Pin a decision in force: always shown first in the context."""
    out = _ledger(ctx).pin(ref)
    click.echo(f"pinned {ref} ({out.entry.short})" if out.written else f"{ref} is already pinned")


@main.command()
@click.argument("ref")
@click.pass_context
def unpin(ctx, ref):
    """Unpin a decision (a correction of its pin entry)."""
    out = _ledger(ctx).unpin(ref)
    click.echo(f"unpinned {ref} ({out.entry.short})")


@main.command()
@click.option("--since", default=None, metavar="REV", help="Only code commits after REV.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def stale(ctx, since, as_json):
    """Decisions in force whose code (their `paths:`) changed since they were made."""
    led = _ledger(ctx)
    found = led.stale(since=since)
    if as_json:
        _echo_json([{"id": s.decision, "paths": s.paths, "commits": s.commits, "lines": s.lines,
                     "where": s.where} for s in found])
        return
    if not found:
        click.echo("no decision in force has seen its code change since it was made")
    st = led.state()
    for s in found:
        click.echo(f"{s.decision[:8]}  {st.get(s.decision).summary}\n  {s.mark()} "
                   f"({', '.join(c[:8] for c in s.commits[:5])}{' …' if len(s.commits) > 5 else ''})")


@main.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def conflicts(ctx, as_json):
    """Decisions in force about the same subject that disagree (no correction between them)."""
    st = _ledger(ctx).state()
    groups = st.conflicts
    if as_json:
        _echo_json([{"subject": subj, "ids": ids, "summaries": [st.get(i).summary for i in ids]}
                    for subj, ids in groups])
        return
    if not groups:
        click.echo("no conflicting decisions in force")
    for subj, ids in groups:
        click.echo(f"'{subj}': {len(ids)} decisions in force")
        for i in ids:
            click.echo(f"  {i[:8]}  {st.get(i).summary}")


@main.command()
@click.option("--lint", is_flag=True, help="Also warn about conflicting decisions (warnings never fail).")
@click.option("--signatures", is_flag=True,
              help="Also check that every commit of the line has a good signature by a trusted key.")
@click.pass_context
def verify(ctx, lint, signatures):
    """Verify the ledger: ids, history (append-only), parents, refs. Exit 1 on failure."""
    from ..git.repo import open_repo
    from ..git.store import LineStore, list_lines
    from ..git.verify import signature_problems, verify_line
    gr = open_repo()
    names = [ctx.obj["line"]] if ctx.obj.get("line") else (list_lines(gr) or ["main"])
    failed = False
    for name in names:
        store = LineStore(gr, name)
        report = verify_line(store)
        signed = ""
        if signatures:
            checked, problems = signature_problems(store, report.head)
            report.problems.extend(problems)
            signed = f", {checked} signatures good"
        if report.ok:
            ext = f", {len(report.external)} external anchor(s)" if report.external else ""
            click.echo(f"ok: line {name}: {report.entries} entries, {report.commits} commits verified{ext}{signed}")
        else:
            failed = True
            click.echo(f"FAILED: line {name}: {len(report.problems)} problem(s)")
            for p in report.problems:
                where = f" (commit {p.commit[:12]})" if p.commit else ""
                click.echo(f"  {p.code}: {p.message}{where}")
        if lint and report.head:
            from ..app.service import Ledger
            for subj, ids in Ledger(gr, name).state().conflicts:
                click.echo(f"  warning: conflict on '{subj}': {', '.join(i[:8] for i in ids)} are all in force")
    from ..git.review import list_trails, verify_trail
    for name in [n for n in list_trails(gr) if n in names or not ctx.obj.get("line")]:
        trail = verify_trail(gr, name)
        if trail.ok:
            click.echo(f"ok: review trail {name}: {trail.records} records, {trail.commits} commits verified")
        else:
            failed = True
            click.echo(f"FAILED: review trail {name}: {len(trail.problems)} problem(s)")
            for p in trail.problems:
                click.echo(f"  {p.code}: {p.message}" + (f" (commit {p.commit[:12]})" if p.commit else ""))
        for w in trail.warnings:
            click.echo(f"  warning: {w}")
    if failed:
        sys.exit(1)


@main.command()
@click.pass_context
def render(ctx):
    """Rewrite the projection (LIFELINE.md) from the ref."""
    path = _ledger(ctx).render()
    click.echo(f"wrote {path}")


@main.command()
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False), help="A LIFELINE.md projection.")
@click.option("--strict", is_flag=True, help="Abort, writing nothing, if any recorded id does not match.")
@click.pass_context
def migrate(ctx, source, strict):
    """Rebuild the line from a LIFELINE.md projection (ids are checked)."""
    result = _ledger(ctx).migrate(Path(source), strict=strict)
    click.echo(f"read {result['read']} entries: {result['added']} added, {result['existing']} already present")
    for m in result["mismatched"]:
        click.echo(f"skipped {m[:12]}: content does not match its recorded id", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def lines(ctx, as_json):
    """List the repository's lines with entry counts and heads."""
    from ..app.service import Ledger
    from ..git.repo import open_repo
    rows = Ledger(open_repo()).lines()
    if as_json:
        _echo_json(rows)
        return
    for r in rows:
        click.echo(f"{r['line']:<20} {r['entries']:>7} entries  head {r['head'][:12]}")


def run() -> None:
    """Console entry point: turns every failure into a message and an exit code."""
    from ..errors import LifelineError
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly, like git
    try:
        main.main(prog_name="git-lifeline", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code != 0 else 0)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except LifelineError as exc:
        click.echo(f"git-lifeline: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # last resort: never a traceback for the user
        from ..git.repo import repository_failure
        known = repository_failure(exc)
        if known is not None:
            click.echo(f"git-lifeline: {known}", err=True)
            sys.exit(known.exit_code)
        click.echo(f"git-lifeline: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(3)


from . import lines as cli_lines  # noqa: E402,F401
from . import review as cli_review  # noqa: E402,F401
from . import sync as cli_sync  # noqa: E402,F401
