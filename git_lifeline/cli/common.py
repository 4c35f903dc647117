"""What every command module of the CLI shares: opening the workspace, the --line option,
the entry options, JSON output. Commands import the app/ modules they call inside
their functions, so that `git lifeline --help` and the hooks start fast.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Optional

import click

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.catch_up import CatchUp
    from ..app.draft import Headers
    from ..app.ledger import Entry, Ledger
    from ..app.terminal import ConfigReader
    from ..app.text import JSON, JSONObject
    from ..app.workspace import Workspace

# the hidden entry point the completion scripts of cli/completion.py call
COMPLETE_COMMAND = "__complete"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
KIND_HELP = (
    "bootstrap decision feature fix incident milestone release note open correction "
    "service api test requirement debt relation checkpoint"
)
WARNING_PREFIX = "git-lifeline: warning: "
Command = Callable[..., None]  # a click command's function, before the decorators make it a command


# ---- the workspace of this invocation ------------------------------------------------
def open_workspace(ctx: click.Context) -> Workspace:
    """The invocation's Workspace (one per run). Its warnings are printed on stderr when
    the command ends, whether it succeeded or not."""
    root = ctx.find_root()
    root.ensure_object(dict)
    ws = root.obj.get("workspace")
    if ws is None:
        from ..app.workspace import Workspace

        ws = Workspace.open()
        root.obj["workspace"] = ws
        root.call_on_close(lambda: print_warnings(ws.take_warnings()))
    return ws


def print_warnings(warnings: list[str]) -> None:
    from ..app.visible import visible

    for w in warnings:
        click.echo(f"{WARNING_PREFIX}{visible(str(w))}", err=True)


def config_reader(ctx: click.Context) -> Optional[ConfigReader]:
    """`key -> value or None` from the repository's git config (None outside a repository)."""
    try:
        ws = open_workspace(ctx)
    except Exception:  # outside a repository: git's defaults and the environment
        return None
    return ws.gr.config_get


def page(ctx: click.Context, colour: bool = True) -> None:
    """A listing command's start: the pager by git's rules, then colour (which the pager allows)."""
    from .terminal import output

    config = config_reader(ctx)
    out = output()
    out.start_pager(config, by_default=True)
    if colour:
        out.settle_colour(config)


def quiet_option(func: Command) -> Command:
    """`-q/--quiet` after a command's name, the same as `git lifeline -q <command>`."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=set_quiet,
        help="Say nothing on success (errors and warnings still go to stderr).",
    )(func)


def set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        from .terminal import output

        output().quiet = True
    return value


def chosen_line(ctx: click.Context) -> Optional[str]:
    """The line named with --line (before or after the command's name), or None."""
    obj = ctx.find_root().obj or {}
    return obj.get("line")


def open_ledger(ctx: click.Context, line: Optional[str] = None, existing: bool = False) -> Ledger:
    """The Ledger of `line`, else of the line chosen with --line, else the default line.
    With `existing` (a command that only reads), a line named with --line that does not
    exist is an error: a typo would otherwise read as an empty ledger. The default line
    may be empty (a fresh repository)."""
    ws = open_workspace(ctx)
    led = ws.ledger(line or chosen_line(ctx))
    if existing and (line or chosen_line(ctx)) and led.line != ws.default_line:
        led.require()
    return led


def open_reading(ctx: click.Context) -> tuple[Ledger, CatchUp]:
    """open_ledger(existing=True) for a command that reads, once the line has caught up with
    what a plain `git fetch` brought (app/catch_up.py), and what that catch-up could not do."""
    from ..app.catch_up import catch_up

    caught = catch_up(open_workspace(ctx), chosen_line(ctx))
    return open_ledger(ctx, existing=True), caught


def say_behind(caught: CatchUp) -> None:
    """On stderr, before the answer: how far behind the fetched heads the line stays."""
    print_warnings(caught.sentences())


def chosen_lines(ctx: click.Context) -> Optional[list[str]]:
    """[the line chosen with --line], or None for every line."""
    line = chosen_line(ctx)
    return [line] if line else None


# ---- --line ------------------------------------------------------------------------------
def set_line(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """Record --line for the whole invocation (checked before anything runs)."""
    if value is not None:
        from ..app.workspace import validate_name

        validate_name(value)
        ctx.find_root().ensure_object(dict)["line"] = value
    return value


def line_option(func: Command) -> Command:
    """`--line NAME` after a command's name, the same as `git lifeline --line NAME <command>`.
    Applied to every command that works on one line (or limits itself to one)."""
    return click.option(
        "--line",
        "line",
        metavar="NAME",
        default=None,
        expose_value=False,
        is_eager=True,
        callback=set_line,
        help="The line to work on (same as `git lifeline --line NAME <command>`).",
    )(func)


# ---- entries -------------------------------------------------------------------------------
def header_options(func: Command) -> Command:
    """The header fields an entry can carry, as options (written on top of its body); the
    command takes them as one `headers: Headers`."""

    @functools.wraps(func)
    def with_headers(
        *args: object,
        paths: tuple[str, ...],
        subject: Optional[str],
        valid_from: Optional[str],
        valid_until: Optional[str],
        **rest: object,
    ) -> None:
        from ..app.draft import Headers

        func(
            *args, headers=Headers(paths=paths, subject=subject, valid_from=valid_from, valid_until=valid_until), **rest
        )

    options = [
        click.option(
            "--paths",
            "paths",
            multiple=True,
            metavar="PATHSPEC",
            help="The code this is about (a git pathspec, e.g. 'src/db/**', or lines or a symbol of "
            "one file: 'src/auth.py#L10-40', 'src/auth.py#login'); repeatable. "
            "Written as the body's `paths:` header (staleness).",
        ),
        click.option(
            "--subject",
            default=None,
            metavar="TEXT",
            help="What it is about: decisions in force on one subject that disagree are a conflict.",
        ),
        click.option(
            "--valid-from",
            "valid_from",
            default=None,
            metavar="DATE",
            help="In force from DATE (YYYY-MM-DD, an ISO time, or git's forms: 'next monday', "
            "'in 2 weeks'); stored as a UTC date or time.",
        ),
        click.option(
            "--valid-until",
            "valid_until",
            default=None,
            metavar="DATE",
            help="In force until DATE (same forms); a bare date covers the whole UTC day.",
        ),
    ]
    decorated: Command = with_headers
    for option in reversed(options):
        decorated = option(decorated)
    return decorated


def entry_options(func: Command) -> Command:
    """The options that describe an entry, shared by `log` and `propose`; the command takes
    them as one `draft: Draft`, with the --thread, --dedup-key and --allow-secret it
    declares besides."""

    @functools.wraps(func)
    def with_draft(
        *args: object,
        kind: str,
        summary: str,
        body: Optional[str],
        body_file: Optional[str],
        parents: tuple[str, ...],
        author: Optional[str],
        agent: str,
        provider: str,
        model: str,
        headers: Headers,
        thread: Optional[str] = None,
        dedup_key: Optional[str] = None,
        allow_secret: Optional[str] = None,
        **rest: object,
    ) -> None:
        from ..app.draft import Draft
        from ..errors import InputError

        if body is not None and body_file is not None:
            raise InputError("give --body or --body-file, not both")
        if body_file is not None:
            body = read_text(body_file)
        draft = Draft(
            kind=kind,
            summary=summary,
            body=body or "",
            parents=tuple(split_ids(parents)),
            author=author,
            agent=agent,
            provider=provider,
            model=model,
            headers=headers,
            thread=thread,
            dedup_key=dedup_key,
            allow_secret=allow_secret,
        )
        func(*args, draft=draft, **rest)

    options = [
        click.option(
            "--kind", required=True, metavar="KIND", help=f"One of: {KIND_HELP}.", shell_complete=complete_kinds
        ),
        click.option("--summary", required=True, help="One line: the what."),
        click.option("--body", default=None, help="The why (required except for checkpoints)."),
        click.option(
            "--body-file",
            type=click.Path(dir_okay=False, allow_dash=True),
            default=None,
            help="Read the body from a file ('-' for stdin).",
        ),
        click.option(
            "--parents",
            multiple=True,
            metavar="ID[,ID]",
            help="Parent entries: full ids, unique prefixes (>= 6 hex) or LINE:PREFIX; repeatable or comma-separated.",
        ),
        click.option("--author", default=None, help="Default: git's user.name <user.email>."),
        click.option("--agent", default="human", show_default=True),
        click.option("--provider", default="none", show_default=True),
        click.option("--model", default="human", show_default=True),
    ]
    decorated: Command = with_draft
    for option in reversed(options):
        decorated = option(decorated)
    return header_options(decorated)


def complete_kinds(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [k for k in KIND_HELP.split() if k.startswith(incomplete)]


def split_ids(values: Iterable[str]) -> list[str]:
    """Repeatable, comma-separated ids: `--id a,b --id c` -> [a, b, c]."""
    out: list[str] = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def read_text(path: str) -> str:
    """A UTF-8 file ('-': stdin), read exactly; a clear error when it cannot be."""
    from ..errors import InputError

    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


# ---- output ---------------------------------------------------------------------------------
# Written as JSON escapes, not raw (json.dumps escapes only C0): a lone surrogate (a byte
# of a name that is not UTF-8, as Python decodes it: raw, the output would not be UTF-8),
# C1 controls (U+009B is a terminal's CSI) and the bidi overrides, isolates and line
# separators (they reorder or break what a human running --json on a terminal reads).
_ESCAPED_IN_JSON = re.compile("[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def echo_json(data: JSON) -> None:
    """JSON, exact and UTF-8: what _ESCAPED_IN_JSON names is written as its escape
    (`\\u202e`), which any reader decodes back to the same string."""
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)
    click.echo(_ESCAPED_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def entry_dict(e: Entry) -> JSONObject:
    return json.loads(e.to_json())


def short(sha: Optional[str]) -> str:
    """An id as a human is shown it (app.text.abbrev), or "-" for none."""
    from ..app.text import abbrev

    return abbrev(sha) if sha else "-"


def plural(k: int, one: str = "entry", many: str = "entries") -> str:
    return f"{k} {one if k == 1 else many}"


def write_output(output: str, text: str) -> None:
    """Standard output for '-', else the file (atomically), saying so on stderr. Exact in
    a file or a pipe (it is data); on a terminal a human reads it, so hidden characters
    are shown (as `context` does)."""
    from .terminal import say, say_line

    if output == "-":
        if sys.stdout.isatty():
            say(text, nl=False)
        else:
            click.echo(text, nl=False)
        return
    from ..app.interop import write_atomic

    write_atomic(Path(output), text)
    say_line(f"wrote {output}", err=True)


def all_commands(group: click.Group) -> dict[str, click.Command]:
    """Every command of `group` by name, loading those not loaded yet (completion, tests)."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}
