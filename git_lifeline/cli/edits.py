"""Changing one's mind: revise, revert, close, resolve. Each appends corrections
(app/edits.py); nothing already written changes."""

from __future__ import annotations

import click

from .common import (
    echo_json,
    entry_dict,
    header_options,
    headers_from,
    line_option,
    open_ledger,
    quiet_option,
    read_text,
)
from .terminal import info


def who_options(func):
    """Who writes the correction (a human by default, as `log`)."""
    options = [
        click.option("--author", default=None, help="Default: git's user.name <user.email>."),
        click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _body(body, body_file):
    from ..errors import InputError

    if body is not None and body_file is not None:
        raise InputError("give --body or --body-file, not both")
    return read_text(body_file) if body_file is not None else body


def _replacing_options(func):
    """What revise and resolve take besides their id, summary and body: each replaces
    entries with a new text and may declare its headers."""
    for option in reversed((_BODY_FILE, header_options, who_options, quiet_option, line_option, click.pass_context)):
        func = option(func)
    return func


def _planned(ctx, plan_of, ref, summary, body, body_file, author, headers):
    """The plan `plan_of` (plan_revise, plan_resolve) makes of the command's words."""
    return plan_of(
        open_ledger(ctx, existing=True),
        ref,
        _body(body, body_file),
        summary=summary,
        headers=headers_from(**headers),
        author=author,
    )


def _finish(ctx, edit_plan, as_json: bool, done: str) -> None:
    from ..app.edits import apply

    led = open_ledger(ctx, existing=True)
    out = apply(led, edit_plan)
    if as_json:
        echo_json({"written": out.written, "commit": out.commit, "entries": [entry_dict(e) for e in edit_plan.entries]})
        return
    if not out.written:
        info("already recorded: the line holds these exact corrections; nothing written")
        return
    for e in edit_plan.entries:
        info(f"recorded {e.short} {e.kind}: {e.summary}")
    info(done)


_BODY_FILE = click.option(
    "--body-file",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Read the body from a file ('-' for stdin).",
)


@click.command()
@click.argument("ref", metavar="ID")
@click.option("--summary", default=None, help="What holds now (default: the same summary).")
@click.option("--body", default=None, help="Why it changed (required): the why of the decision as it now stands.")
@_replacing_options
def revise(ctx, ref, summary, body, body_file, author, as_json, **headers):
    """Replace an entry with a revision (a correction): a revised decision stays a decision in force."""
    from ..app.edits import plan_revise

    plan = _planned(ctx, plan_revise, ref, summary, body, body_file, author, headers)
    _finish(
        ctx, plan, as_json, f"{plan.correction.parents[0][:12]} is superseded; in force now: {plan.correction.short}"
    )


@click.command()
@click.argument("ref", metavar="ID")
@click.option("--body", default=None, help="Why (default: 'Reverts ID (...)').")
@_BODY_FILE
@who_options
@quiet_option
@line_option
@click.pass_context
def revert(ctx, ref, body, body_file, author, as_json):
    """Withdraw an entry (a correction with `action: revert`); reverting a revert puts back what it withdrew."""
    from ..app.edits import plan_revert

    led = open_ledger(ctx, existing=True)
    plan = plan_revert(led, ref, _body(body, body_file), author=author)
    _finish(ctx, plan, as_json, f"{plan.correction.parents[0][:12]} is withdrawn")


@click.command()
@click.argument("ref", metavar="OPEN")
@click.option("--answer", default=None, help="The answer: what was found or decided (required).")
@click.option(
    "--answer-file",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Read the answer from a file ('-' for stdin).",
)
@click.option(
    "--decision",
    is_flag=True,
    help="The answer decides something: also record it as a decision in force (parent: the open).",
)
@click.option(
    "--summary", default=None, help="With --decision: the decision's summary (default: the answer's first line)."
)
@header_options
@who_options
@quiet_option
@line_option
@click.pass_context
def close(ctx, ref, answer, answer_file, decision, summary, author, as_json, **headers):
    """Close an open item with its answer (kept in the closing correction, and with --decision
    also as a decision in force)."""
    from ..app.edits import plan_close
    from ..errors import InputError

    if answer is not None and answer_file is not None:
        raise InputError("give --answer or --answer-file, not both")
    text = read_text(answer_file) if answer_file is not None else answer
    led = open_ledger(ctx, existing=True)
    plan = plan_close(
        led, ref, text or "", decision=decision, summary=summary, headers=headers_from(**headers), author=author
    )
    target = plan.correction.parents[0][:12]
    _finish(
        ctx,
        plan,
        as_json,
        f"{target} is closed" + (f"; decision in force: {plan.decision.short}" if plan.decision is not None else ""),
    )


@click.command()
@click.argument("ref", metavar="ID")
@click.option(
    "--summary", default=None, help="Replace every decision of the conflict with one new decision saying this."
)
@click.option("--body", default=None, help="Why (required with --summary).")
@_replacing_options
def resolve(ctx, ref, summary, body, body_file, author, as_json, **headers):
    """Resolve a conflict: keep ID and revert the others, or with --summary replace them all."""
    from ..app.edits import plan_resolve

    plan = _planned(ctx, plan_resolve, ref, summary, body, body_file, author, headers)
    e = plan.correction
    done = (
        f"kept {(plan.kept or '')[:12]}; withdrawn: {', '.join(p[:12] for p in e.parents)}"
        if summary is None
        else f"in force now: {e.short}; replaced: {', '.join(p[:12] for p in e.parents)}"
    )
    _finish(ctx, plan, as_json, done)
