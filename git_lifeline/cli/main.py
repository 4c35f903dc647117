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
from . import completion, edits, entries, hooks, lines, links, model, pr, review, setup, status, sync, verify, view
from .common import CONTEXT_SETTINGS, set_line, set_quiet
from .terminal import output, say_failure


@click.group(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--line",
    "line",
    metavar="NAME",
    default=None,
    is_eager=True,
    callback=set_line,
    help="The line (ledger) to work on; default: main (git config lifeline.defaultLine).",
)
@click.option("--no-pager", "no_pager", is_flag=True, help="Never page the output (as `git --no-pager`).")
@click.option("-p", "--paginate", is_flag=True, help="Page the output on a terminal whatever the command.")
@click.option(
    "--color",
    "color",
    type=click.Choice(["auto", "always", "never"]),
    default=None,
    metavar="[=WHEN]",
    help="Colour: auto (a terminal), always or never; default: git config color.lifeline, "
    "else color.ui, else auto. --color alone is always.",
)
@click.option("--no-color", "no_color", is_flag=True, help="Same as --color=never.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    expose_value=False,
    callback=set_quiet,
    help="Say nothing on success; errors and warnings still go to stderr.",
)
@click.version_option(__version__, "--version", prog_name="git-lifeline")
@click.pass_context
def main(
    ctx: click.Context, line: Optional[str], no_pager: bool, paginate: bool, color: Optional[str], no_color: bool
) -> None:
    """git lifeline: the project's reasoning ledger, kept in git.

    Decisions and their why, reversals, open questions, incidents and checkpoints
    are stored as content-addressed entries under refs/lifeline/<line>. Run
    `git help lifeline` for the manual.
    """
    ctx.ensure_object(dict)
    out = output()
    out.no_pager = no_pager
    out.paginate = paginate and not no_pager
    out.color_option = "never" if no_color else color
    if out.paginate and ctx.invoked_subcommand is not None:
        from .common import config_reader

        out.start_pager(config_reader(ctx), by_default=True)


# Every command, by module. A new command is written in the module of its concern
# (or a new one) with @line_option when it works on one line, and added here.
for command in (
    setup.init,
    setup.mcp,
    setup.agent_hook,
    status.status,
    status.doctor,
    entries.log,
    entries.show,
    entries.list_cmd,
    entries.context,
    entries.recall,
    entries.checkpoint,
    entries.resume,
    entries.pin,
    entries.unpin,
    entries.stale,
    entries.conflicts,
    entries.render,
    lines.migrate,
    edits.revise,
    edits.revert,
    edits.close,
    edits.resolve,
    edits.reaffirm,
    verify.verify,
    lines.lines,
    lines.import_cmd,
    lines.export_cmd,
    lines.promote,
    lines.where,
    lines.graph,
    sync.fetch,
    sync.pull,
    sync.push,
    sync.sync_cmd,
    sync.clone,
    sync.remote_setup,
    hooks.hooks,
    hooks.hook,
    links.why,
    pr.pr,
    review.propose,
    review.review,
    review.approve,
    review.reject,
    review.audit,
    review.policy,
    view.view,
    model.model,
    completion.completion,
):
    main.add_command(command)


def _argv(args: list) -> list:
    """git's `--color` without a value means always (click's options take one)."""
    out: list = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        out.append("--color=always" if arg == "--color" else arg)
    return out


def run() -> None:
    """Console entry point: every failure becomes one message on stderr (its lines, each
    visible) and an exit code."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly, like git
    args = sys.argv[1:]
    if args[:1] == [completion.COMPLETE_COMMAND]:  # the shells' hidden entry point
        sys.exit(completion.answer(args[1:], main))
    code = 0
    try:
        main.main(args=_argv(args), prog_name="git-lifeline", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        code = 130
    except click.ClickException as exc:  # a usage error, found while parsing
        exc.show()
        code = 2 if exc.exit_code != 0 else 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # the one boundary: never a traceback for the user
        code = say_failure(exc)
    finally:
        output().finish()  # after every message: the pager shows them too
    sys.exit(code)
