"""The command line face: the `git lifeline` group, its commands, and the one place where
a failure becomes a message and an exit code (run). Commands parse, call app/, print.

Exit codes: 0 ok, 1 integrity failure, 2 usage or input error, 3 internal error,
4 the repository itself failed, 130 interrupted.
"""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Optional

import click

from .. import __version__
from .common import COMPLETE_COMMAND, CONTEXT_SETTINGS, set_line, set_quiet
from .terminal import output, say_failure

# Every command: its name -> (the module of cli/ it is written in, its attribute there). A
# new command is written in the module of its concern (or a new one) with @line_option when
# it works on one line, and added here. A module is imported when one of its commands is
# looked up (to run it, or when `--help` and completion list them all), so a process pays
# the start-up of the command it runs, not of all of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("setup", "init"),
    "mcp": ("setup", "mcp"),
    "agent-hook": ("setup", "agent_hook"),
    "status": ("status", "status"),
    "doctor": ("status", "doctor"),
    "log": ("entries", "log"),
    "show": ("entries", "show"),
    "list": ("entries", "list_cmd"),
    "context": ("entries", "context"),
    "recall": ("entries", "recall"),
    "checkpoint": ("entries", "checkpoint"),
    "resume": ("entries", "resume"),
    "pin": ("entries", "pin"),
    "unpin": ("entries", "unpin"),
    "stale": ("entries", "stale"),
    "conflicts": ("entries", "conflicts"),
    "render": ("entries", "render"),
    "migrate": ("lines", "migrate"),
    "revise": ("edits", "revise"),
    "revert": ("edits", "revert"),
    "close": ("edits", "close"),
    "resolve": ("edits", "resolve"),
    "reaffirm": ("edits", "reaffirm"),
    "verify": ("verify", "verify"),
    "lines": ("lines", "lines"),
    "import": ("lines", "import_cmd"),
    "export": ("lines", "export_cmd"),
    "promote": ("lines", "promote"),
    "where": ("lines", "where"),
    "graph": ("lines", "graph"),
    "fetch": ("sync", "fetch"),
    "pull": ("sync", "pull"),
    "push": ("sync", "push"),
    "sync": ("sync", "sync_cmd"),
    "clone": ("sync", "clone"),
    "remote-setup": ("sync", "remote_setup"),
    "hooks": ("hooks", "hooks"),
    "hook": ("hooks", "hook"),
    "why": ("links", "why"),
    "pr": ("pr", "pr"),
    "propose": ("review", "propose"),
    "review": ("review", "review"),
    "approve": ("review", "approve"),
    "reject": ("review", "reject"),
    "audit": ("review", "audit"),
    "policy": ("review", "policy"),
    "view": ("view", "view"),
    "model": ("model", "model"),
    "completion": ("completion", "completion"),
}


class LazyGroup(click.Group):
    """The group of COMMANDS, each command's module imported when it is first looked up
    (click's documented lazy-loading pattern: list_commands and get_command)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            if command.name != cmd_name:  # a renamed command must be renamed here too
                raise RuntimeError(f"cli/{module}.py's {attribute} is named {command.name!r}, not {cmd_name!r}")
            self.add_command(command)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
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


def _argv(args: list[str]) -> list[str]:
    """git's `--color` without a value means always (click's options take one)."""
    out: list[str] = []
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
    if args[:1] == [COMPLETE_COMMAND]:  # the shells' hidden entry point
        from . import completion

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
