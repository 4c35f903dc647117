"""The command line face: the `git lifeline` group, its commands, and the one place where
a failure becomes a message and an exit code (run). Commands parse, call app/, print.

Exit codes: 0 ok, 1 integrity failure, 2 usage or input error, 3 internal error,
4 the repository itself failed, 130 interrupted.
"""

from __future__ import annotations

import signal
import sys
from typing import Optional

import click

from .. import __version__
from ..errors import describe_failure
from . import entries, hooks, lines, links, model, review, setup, status, sync, verify, view
from .common import CONTEXT_SETTINGS, set_line


@click.group(context_settings=CONTEXT_SETTINGS)
@click.option("--line", "line", metavar="NAME", default=None, is_eager=True, callback=set_line,
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


# Every command, by module. A new command is written in the module of its concern
# (or a new one) with @line_option when it works on one line, and added here.
for command in (
    setup.init, setup.mcp, setup.agent_hook, status.status, status.doctor,
    entries.log, entries.show, entries.list_cmd, entries.context, entries.recall, entries.checkpoint,
    entries.resume, entries.pin, entries.unpin, entries.stale, entries.conflicts, entries.render,
    entries.migrate,
    verify.verify,
    lines.lines, lines.import_cmd, lines.export_cmd, lines.promote, lines.where, lines.graph,
    sync.fetch, sync.pull, sync.push, sync.sync_cmd, sync.clone, sync.remote_setup,
    hooks.hooks, hooks.hook,
    links.why,
    review.propose, review.review, review.approve, review.reject, review.audit, review.policy,
    view.view, model.model,
):
    main.add_command(command)


def run() -> None:
    """Console entry point: every failure becomes one message on stderr and an exit code."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly, like git
    try:
        main.main(prog_name="git-lifeline", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:  # a usage error, found while parsing
        exc.show()
        sys.exit(2 if exc.exit_code != 0 else 0)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # the one boundary: never a traceback for the user
        message, code = describe_failure(exc)
        click.echo(f"git-lifeline: {message}", err=True)
        sys.exit(code)
