"""`git lifeline why`: the ledger entries linked to the code by `Lifeline:` trailers."""

from __future__ import annotations

import click

from ..app.visible import visible
from .common import echo_json, line_option, open_ledger


@click.command()
@click.argument("target", metavar="PATH|COMMIT")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def why(ctx: click.Context, target: str, as_json: bool) -> None:
    """The entries linked (Lifeline: trailers) to the commits that touched PATH, newest first."""
    from ..app.links import linked_entries
    from ..app.text import format_ts

    rows = linked_entries(open_ledger(ctx, existing=True), target)
    if as_json:
        echo_json(
            [
                {
                    "entry": None
                    if e is None
                    else {"id": e.id, "kind": e.kind, "summary": e.summary, "ts": format_ts(e.ts)},
                    "trailer": link.value,
                    "line": link.line,
                    "commit": link.commit,
                    "subject": link.subject,
                }
                for e, link in rows
            ]
        )
        return
    if not rows:
        click.echo(f"no commit touching {visible(target)} links to a ledger entry (add a 'Lifeline: <id>' trailer)")
        return
    for e, link in rows:
        where = f"(commit {link.commit[:10]} {visible(link.subject)})"
        if e is None:
            click.echo(
                f"{visible(link.value[:12]):<8}  unknown entry: not in this clone's ledger (git lifeline pull?)  "
                f"{where}"
            )
        else:
            click.echo(f"{e.short}  {e.ts:%Y-%m-%d}  {e.kind}: {visible(e.summary)}  {where}")
