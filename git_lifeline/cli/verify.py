"""`git lifeline verify`: every line and review trail, or the one chosen with --line."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..app.visible import visible
from .common import chosen_line, echo_json, line_option, open_ledger, open_workspace, short
from .terminal import say_lines

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.text import JSON, JSONObject
    from ..app.workspace import Problem, VerifyRun


def _problem_rows(problems: list[Problem]) -> list[JSON]:
    return [{"code": p.code, "message": p.message, "commit": p.commit} for p in problems]


def _as_json(run: VerifyRun) -> JSONObject:
    """The verdict for machines (CI): one object, the same facts as the text."""
    lines: list[JSON] = []
    for check in run.lines:
        r = check.report
        lines.append(
            {
                "line": check.name,
                "ok": r.ok,
                "head": r.head,
                "entries": r.entries,
                "commits": r.commits,
                "external": [{"entry": e, "parent": p, "line": ln} for e, p, ln in r.external],
                "signatures": check.signatures,
                "problems": _problem_rows(r.problems),
                "conflicts": [{"subject": subj, "ids": list(ids)} for subj, ids in check.conflicts],
            }
        )
    trails: list[JSON] = [
        {
            "line": check.name,
            "ok": check.report.ok,
            "head": check.report.head,
            "records": check.report.records,
            "commits": check.report.commits,
            "problems": _problem_rows(check.report.problems),
            "warnings": list(check.report.warnings),
        }
        for check in run.trails
    ]
    return {"ok": run.ok, "lines": lines, "trails": trails}


def _problems(problems: list[Problem]) -> None:
    say_lines(f"  {p.describe()}" for p in problems)  # a name in a message: shown, its line breaks escaped


@click.command()
@click.option("--lint", is_flag=True, help="Also warn about conflicting decisions (warnings never fail).")
@click.option(
    "--signatures", is_flag=True, help="Also check that every commit of the line has a good signature by a trusted key."
)
@click.option("--json", "as_json", is_flag=True, help="The verdict as one JSON object (same exit codes).")
@line_option
@click.pass_context
def verify(ctx: click.Context, lint: bool, signatures: bool, as_json: bool) -> None:
    """Verify the ledger: ids, history (append-only), parents, refs. Exit 1 on failure.

    A shallow code checkout is fine when the ledger's own history is whole (CI: fetch
    refs/lifeline/* without --depth); a ledger history cut by a shallow fetch is not."""
    if chosen_line(ctx):
        open_ledger(ctx, existing=True)  # a mistyped --line is an error, not "ok: 0 entries"
    run = open_workspace(ctx).verify(chosen_line(ctx), signatures=signatures, lint=lint)
    if as_json:
        echo_json(_as_json(run))
        if not run.ok:
            sys.exit(1)
        return
    for check in run.lines:
        report = check.report
        if report.ok:
            ext = f", {len(report.external)} external anchor(s)" if report.external else ""
            signed = f", {check.signatures} signatures good" if check.signatures is not None else ""
            click.echo(
                f"ok: line {check.name}: {report.entries} entries, {report.commits} commits verified{ext}{signed}"
            )
        else:
            click.echo(f"FAILED: line {check.name}: {len(report.problems)} problem(s)")
            _problems(report.problems)
        for subj, ids in check.conflicts:
            click.echo(f"  warning: conflict on '{visible(subj)}': {', '.join(short(i) for i in ids)} are all in force")
        for entry_id, why in check.headers:
            click.echo(f"  warning: entry {short(entry_id)}: {visible(why)}")
    for trail_check in run.trails:
        trail = trail_check.report
        if trail.ok:
            click.echo(
                f"ok: review trail {trail_check.name}: {trail.records} records, {trail.commits} commits verified"
            )
        else:
            click.echo(f"FAILED: review trail {trail_check.name}: {len(trail.problems)} problem(s)")
            _problems(trail.problems)
        for w in trail.warnings:
            click.echo(f"  warning: {visible(str(w))}")
    if not run.ok:
        sys.exit(1)
