"""The git hooks: `hooks install|uninstall|status`, and `hook`, what the installed scripts run."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .common import echo_json, open_workspace
from .terminal import say_failure, say_lines

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from pathlib import Path

    from ..app.hook_files import HookChange


@click.group()
def hooks() -> None:
    """Install, remove or inspect the git hooks (pre-push, post-commit, commit-msg, pre-receive)."""


def echo_changes(changes: list[HookChange], where: Path) -> None:
    """What `hooks install|uninstall` (and `init --hooks`) did, hook by hook."""
    click.echo(f"hooks directory: {where}")
    for c in changes:
        chained = f" (runs your previous hook first: {c.chained.name})" if c.chained else ""
        if c.action in ("installed", "updated"):
            click.echo(f"{c.action} {c.name}{chained}")
            if c.kept:
                click.echo(f"  an older, different hook was kept aside as {c.kept.name} (it no longer runs)")
        elif c.action == "unchanged":
            click.echo(f"{c.name} already installed{chained}")
        elif c.action == "restored":
            click.echo(f"removed {c.name}; restored your previous hook")
        elif c.action == "removed":
            click.echo(f"removed {c.name}")
        elif c.action == "left":
            click.echo(f"{c.name} is not git-lifeline's; left alone")
        elif c.action == "tracked":
            tail = " || exit $?" if c.name != "post-commit" else ""
            click.echo(
                f"{c.name} is tracked by the repository ({c.path}); left as it is. To run git-lifeline's "
                f'check from it, add the line: git lifeline hook {c.name} "$@"{tail}'
            )
        else:
            click.echo(f"{c.name} was not installed")


@hooks.command("install")
@click.argument("names", nargs=-1, metavar="[HOOK]...")
@click.pass_context
def hooks_install(ctx: click.Context, names: str) -> None:
    """Install hooks (default: pre-push and post-commit; in a bare repo: pre-receive).

    commit-msg is opt-in: git lifeline hooks install commit-msg. An existing hook is
    never overwritten: it is kept, byte for byte, as <hook>.lifeline-chained and run
    first; a hook tracked by the repository is left as it is."""
    from ..app import setup

    ws = open_workspace(ctx)
    echo_changes(setup.install_hooks(ws, list(names) or None), setup.hooks_dir(ws))


@hooks.command("uninstall")
@click.argument("names", nargs=-1, metavar="[HOOK]...")
@click.pass_context
def hooks_uninstall(ctx: click.Context, names: str) -> None:
    """Remove git-lifeline's hooks (default: all), restoring the hooks they replaced byte for byte."""
    from ..app import setup

    ws = open_workspace(ctx)
    echo_changes(setup.uninstall_hooks(ws, list(names) or None), setup.hooks_dir(ws))


@hooks.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def hooks_status(ctx: click.Context, as_json: bool) -> None:
    """Show which hooks are installed and what they chain to."""
    from ..app import setup

    ws = open_workspace(ctx)
    rows = setup.hook_status(ws)
    if as_json:
        echo_json(
            [
                {
                    "hook": r.name,
                    "path": str(r.path),
                    "state": r.state,
                    "chained": str(r.chained) if r.chained else None,
                }
                for r in rows
            ]
        )
        return
    click.echo(f"hooks directory: {setup.hooks_dir(ws)}")
    for r in rows:
        state = {
            "installed": "installed",
            "absent": "not installed",
            "foreign": "not installed (another hook is there)",
            "tracked": "not installed (a hook tracked by the repository is there)",
        }[r.state]
        chained = f", chains to {r.chained.name}" if r.chained and r.state == "installed" else ""
        click.echo(f"{r.name:<12} {state}{chained}")


@click.command("hook", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook(ctx: click.Context, name: str, args: str) -> None:
    """Entry point of the installed hook scripts (not for direct use).

    Its own error boundary: post-commit never fails a commit; the other hooks fail
    with a message that names the hook."""
    from ..app import setup
    from .common import chosen_line

    stdin = b""
    if name in ("pre-push", "pre-receive") and sys.stdin is not None and not sys.stdin.isatty():
        stdin = sys.stdin.buffer.read()
    try:
        outcome = setup.run_hook(open_workspace(ctx), name, list(args), stdin, chosen_line(ctx))
    except Exception as exc:  # noqa: BLE001 - a hook fails with a message, never a traceback
        if name == "post-commit":  # never blocks a commit, never fails it
            say_failure(exc, "git-lifeline: post-commit: ")
            sys.exit(0)
        sys.exit(say_failure(exc, f"git-lifeline: {name} hook: "))
    say_lines(outcome.messages, err=True)  # names from pushed trees and records: shown, never acted on
    sys.exit(outcome.code)
