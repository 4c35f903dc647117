"""Changing one's mind: revise, revert, close, resolve. Each appends corrections
(app/edits.py); nothing already written changes."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

import click

from .common import (
    Command,
    echo_json,
    entry_dict,
    header_options,
    line_option,
    open_ledger,
    quiet_option,
    read_text,
    short,
)
from .terminal import info

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.draft import Headers
    from ..app.edits import Edit


def who_options(func: Command) -> Command:
    """Who writes the correction (a human by default, as `log`)."""
    options = [
        click.option("--author", default=None, help="Default: git's user.name <user.email>."),
        click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _body(body: Optional[str], body_file: Optional[str]) -> Optional[str]:
    from ..errors import InputError

    if body is not None and body_file is not None:
        raise InputError("give --body or --body-file, not both")
    return read_text(body_file) if body_file is not None else body


@dataclass(frozen=True)
class _Replacement:
    """What revise and resolve are told besides the id: the new text (its body read from
    --body-file once the ledger is open), its headers and who writes it."""

    summary: Optional[str]
    body: Optional[str]
    body_file: Optional[str]
    author: Optional[str]
    headers: Headers


def _replacing_options(func: Command) -> Command:
    """What revise and resolve take besides their id, summary and body: each replaces
    entries with a new text and may declare its headers. The command takes them as one
    `replacement: _Replacement`."""

    @functools.wraps(func)
    def with_replacement(
        ctx: click.Context,
        summary: Optional[str],
        body: Optional[str],
        body_file: Optional[str],
        author: Optional[str],
        headers: Headers,
        **rest: object,
    ) -> None:
        func(ctx, replacement=_Replacement(summary, body, body_file, author, headers), **rest)

    decorated: Command = with_replacement
    for option in reversed((_BODY_FILE, header_options, who_options, quiet_option, line_option, click.pass_context)):
        decorated = option(decorated)
    return decorated


def _planned(ctx: click.Context, plan_of: Callable[..., Edit], ref: str, replacement: _Replacement) -> Edit:
    """The plan `plan_of` (plan_revise, plan_resolve) makes of the command's words."""
    from ..app.draft import Writer

    return plan_of(
        open_ledger(ctx, existing=True),
        ref,
        _body(replacement.body, replacement.body_file),
        summary=replacement.summary,
        headers=replacement.headers,
        writer=Writer(author=replacement.author),
    )


def _finish(ctx: click.Context, edit_plan: Edit, as_json: bool, done: str) -> None:
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
def revise(ctx: click.Context, ref: str, replacement: _Replacement, as_json: bool) -> None:
    """Replace an entry with a revision (a correction): a revised decision stays a decision in force."""
    from ..app.edits import plan_revise

    plan = _planned(ctx, plan_revise, ref, replacement)
    _finish(
        ctx, plan, as_json, f"{short(plan.correction.parents[0])} is superseded; in force now: {plan.correction.short}"
    )


@click.command()
@click.argument("ref", metavar="ID")
@click.option("--body", default=None, help="Why (default: 'Reverts ID (...)').")
@_BODY_FILE
@who_options
@quiet_option
@line_option
@click.pass_context
def revert(
    ctx: click.Context, ref: str, body: Optional[str], body_file: Optional[str], author: Optional[str], as_json: bool
) -> None:
    """Withdraw an entry (a correction with `action: revert`); reverting a revert puts back what it withdrew."""
    from ..app.draft import Writer
    from ..app.edits import plan_revert

    led = open_ledger(ctx, existing=True)
    plan = plan_revert(led, ref, _body(body, body_file), writer=Writer(author=author))
    _finish(ctx, plan, as_json, f"{short(plan.correction.parents[0])} is withdrawn")


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
def close(
    ctx: click.Context,
    ref: str,
    answer: Optional[str],
    answer_file: Optional[str],
    decision: bool,
    summary: Optional[str],
    author: Optional[str],
    as_json: bool,
    headers: Headers,
) -> None:
    """Close an open item with its answer (kept in the closing correction, and with --decision
    also as a decision in force)."""
    from ..app.draft import Writer
    from ..app.edits import plan_close
    from ..errors import InputError

    if answer is not None and answer_file is not None:
        raise InputError("give --answer or --answer-file, not both")
    text = read_text(answer_file) if answer_file is not None else answer
    led = open_ledger(ctx, existing=True)
    plan = plan_close(
        led,
        ref,
        text or "",
        decision=decision,
        summary=summary,
        headers=headers,
        writer=Writer(author=author),
    )
    target = short(plan.correction.parents[0])
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
def resolve(ctx: click.Context, ref: str, replacement: _Replacement, as_json: bool) -> None:
    """Resolve a conflict: keep ID and revert the others, or with --summary replace them all."""
    from ..app.edits import plan_resolve

    plan = _planned(ctx, plan_resolve, ref, replacement)
    e = plan.correction
    done = (
        f"kept {short(plan.kept or '')}; withdrawn: {', '.join(short(p) for p in e.parents)}"
        if replacement.summary is None
        else f"in force now: {e.short}; replaced: {', '.join(short(p) for p in e.parents)}"
    )
    _finish(ctx, plan, as_json, done)


@click.command()
@click.argument("ref", metavar="ID")
@click.option("--at", "at", default=None, metavar="COMMIT", help="The code it was re-read against (default: HEAD).")
@click.option("--body", default=None, help="Why it still holds (default: 'Re-read against the code at ...').")
@_BODY_FILE
@who_options
@quiet_option
@line_option
@click.pass_context
def reaffirm(
    ctx: click.Context,
    ref: str,
    at: Optional[str],
    body: Optional[str],
    body_file: Optional[str],
    author: Optional[str],
    as_json: bool,
) -> None:
    """Record that you re-read the decision ID against the code at COMMIT and it still
    holds: its stale mark clears (until its code changes again); its why is unchanged."""
    from ..app.draft import Writer
    from ..app.edits import reaffirm as reaffirm_decision

    out = reaffirm_decision(
        open_ledger(ctx, existing=True), ref, at, _body(body, body_file), writer=Writer(author=author)
    )
    if as_json:
        echo_json({"entry": entry_dict(out.entry)})
        return
    info(f"re-affirmed {out.entry.parents[0][:12]} ({out.entry.short}): its stale mark is cleared")
