"""What reaches a human's terminal: visible text, colour and the pager, by git's rules.

* `visible(text)` (app/visible.py, shared with the MCP face): every character a terminal would act on or hide instead of showing —
  control characters (a carriage return that rewrites the line, escape sequences), bidi
  overrides, zero-width and other invisible format characters, line separators, lone
  surrogates — is written visibly (`\\r`, `<U+202E>`), as git quotes an odd path. So a
  human sees the text the AI reads. JSON output is never passed through it: it stays exact.
* `say_lines(lines)`, `say_failure(exc)`: our own messages of several lines (a refusal, an
  error that lists problems) keep their lines apart until here; each is made visible on
  its own and they are joined with real line breaks, so a line break inside one (a hostile
  name's) stays escaped and can never forge a line of ours.
* colour: `--color[=WHEN]` / `--no-color`, else git config color.lifeline, else color.ui,
  else auto (on for a terminal or the pager, off for TERM=dumb), as git decides.
* pager: on a terminal only, for the commands that print a listing; `--no-pager`,
  `pager.lifeline` (false: never; a command: that pager), then GIT_PAGER, core.pager,
  PAGER, `less`; LESS=FRX and LV=-c unless set, as git sets them; nothing when git
  already pages us (GIT_PAGER_IN_USE).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Iterable, Optional

import click

from ..app.visible import shown_lines, visible
from ..errors import as_failure

if TYPE_CHECKING:  # annotations only: paging is decided where output starts
    from ..app.terminal import ConfigReader

# ---- colour ----------------------------------------------------------------------------
STYLES = {
    "id": "yellow",
    "kind": "cyan",
    "field": "bold",
    "bad": "red",
    "good": "green",
    "dim": "bright_black",
    "warn": "yellow",
}
_ANSI = {
    "black": 30,
    "red": 31,
    "green": 32,
    "yellow": 33,
    "blue": 34,
    "magenta": 35,
    "cyan": 36,
    "white": 37,
    "bright_black": 90,
    "bold": 1,
    "dim": 2,
    "ul": 4,
    "reverse": 7,
}


def _want_colour(setting: Optional[str], to_terminal: bool) -> bool:
    value = (setting or "auto").strip().lower()
    if value in ("always",):
        return True
    if value in ("never", "false", "no", "off", "0"):
        return False
    if value not in ("auto", "true", "yes", "on", "1"):
        return False
    return to_terminal and os.environ.get("TERM", "") != "dumb"


class Output:
    """One invocation's terminal: whether to colour, the pager, quiet."""

    def __init__(self) -> None:
        self.colour = False
        self.quiet = False
        self.pager: Optional[Any] = None  # the pager's process while it runs
        self.color_option: Optional[str] = None
        self.no_pager = False
        self.paginate = False

    def paint(self, text: str, style: str, multiline: bool = False) -> str:
        shown = visible(text, multiline)
        if not self.colour or not shown:
            return shown
        codes = ";".join(str(_ANSI[s]) for s in STYLES.get(style, style).split("+") if s in _ANSI)
        return f"\x1b[{codes}m{shown}\x1b[m" if codes else shown

    def raw(self, code: str) -> str:
        """A colour code for `--format`'s %C placeholders ('' when colour is off)."""
        if not self.colour:
            return ""
        if code == "reset":
            return "\x1b[m"
        codes = ";".join(str(_ANSI[s]) for s in code.split() if s in _ANSI)
        return f"\x1b[{codes}m" if codes else ""

    def settle_colour(self, config: Optional[ConfigReader]) -> None:
        """Decide colour: the option, else color.lifeline, else color.ui (git's fallback)."""
        setting = self.color_option
        if setting is None and config is not None:
            setting = config("color.lifeline") or config("color.ui")
            if self.pager is not None or os.environ.get("GIT_PAGER_IN_USE"):
                if (config("color.pager") or "true").lower() in ("false", "no", "off", "0"):
                    setting = "never"
        to_terminal = sys.stdout.isatty() or self.pager is not None or bool(os.environ.get("GIT_PAGER_IN_USE"))
        self.colour = _want_colour(setting, to_terminal)

    # ---- pager ------------------------------------------------------------------------
    def start_pager(self, config: Optional[ConfigReader], by_default: bool) -> None:
        """Pipe stdout (and stderr, when it is a terminal) into the pager, by git's rules."""
        from ..app.terminal import choose_pager, spawn

        if self.no_pager or self.pager is not None:
            return
        command = choose_pager(config, by_default, self.paginate, sys.stdout.isatty())
        if command is None:
            return
        sys.stdout.flush()
        proc = spawn(command)
        if proc is None or proc.stdin is None:
            return
        os.dup2(proc.stdin.fileno(), sys.stdout.fileno())
        if sys.stderr.isatty():
            sys.stderr.flush()
            os.dup2(proc.stdin.fileno(), sys.stderr.fileno())
        proc.stdin.close()
        os.environ["GIT_PAGER_IN_USE"] = "true"
        self.pager = proc

    def finish(self) -> None:
        """Close our end of the pager's pipe and wait for the human to quit it."""
        proc, self.pager = self.pager, None
        if proc is None:
            return
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
            os.dup2(devnull, sys.stderr.fileno())
        finally:
            os.close(devnull)
        try:
            proc.wait()
        except KeyboardInterrupt:
            proc.wait()


_OUTPUT = Output()


def output() -> Output:
    """The invocation's terminal settings (one process, one invocation)."""
    return _OUTPUT


def say(text: str = "", err: bool = False, nl: bool = True) -> None:
    """Print text for a human: every hidden character made visible (line breaks kept)."""
    click.echo(visible(text, multiline=True), err=err, nl=nl, color=_OUTPUT.colour or None)


def say_lines(lines: Iterable[str], err: bool = False) -> None:
    """Print lines of ours, one per line, each made visible on its own: a line break inside
    one (a hostile name's, a remote's) is shown escaped, never a line that passes for ours."""
    shown = shown_lines(lines)
    if shown:
        click.echo(shown, err=err, color=_OUTPUT.colour or None)


def say_line(text: str, err: bool = False) -> None:
    """Print one line of ours that quotes names, paths or a remote's words: made visible
    whole, a line break inside shown escaped (say_lines)."""
    say_lines([text], err=err)


def say_failure(exc: BaseException, head: str = "git-lifeline: ") -> int:
    """Print a failure on stderr, `head` before its first line (say_lines); its exit code."""
    failure = as_failure(exc)
    say_lines(failure.lines_after(head), err=True)
    return failure.exit_code


def info(text: str) -> None:
    """What a command says when it succeeded; nothing with -q."""
    if not _OUTPUT.quiet:
        say(text)


def echo_painted(text: str) -> None:
    """Print a line built with Output.paint (already visible)."""
    click.echo(text, color=_OUTPUT.colour or None)
