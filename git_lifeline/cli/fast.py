"""The warm `context`, answered before click or pygit2 is imported (about half the start-up
of a CLI process: docs/PERFORMANCE.md).

`answer` is the one place that decides. It recognises only these argument shapes, each
option at most once, and hands everything else to the click group (main.py):

    [--line NAME] context [--line NAME] [--budget N] [--budget-tokens N] [--format FORMAT]

(`--opt VALUE` or `--opt=VALUE`; N as ASCII digits, FORMAT one of the provider shapes),
with standard output a pipe or a file that takes UTF-8 (a terminal gets the pager and
the visible characters of terminal.py). The answer is app/warm_context.py's, which is
None unless the cache is current for exactly the line's head; then, or when the text
holds anything click's echo would alter (an escape sequence), main.py runs as usual and
says what it says. What is printed is byte for byte what main.py prints, with exit 0.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from typing import NamedTuple, Optional

_DIGITS = re.compile(r"[0-9]+")
_AFTER = {"--line": "line", "--budget": "budget", "--budget-tokens": "budget_tokens", "--format": "fmt"}
_BEFORE = {"--line": "line"}


class Shape(NamedTuple):
    """A `context` call the warm path can answer: what it asks for."""

    line: Optional[str]
    budget: Optional[int]
    budget_tokens: Optional[int]
    fmt: str


def parse(args: list[str]) -> Optional[Shape]:
    """The Shape of a call recognised above, else None."""
    got: dict[str, str] = {}
    rest = _options(args, _BEFORE, got, stop="context")
    if rest is None or rest[:1] != ["context"]:
        return None
    if _options(rest[1:], _AFTER, got) != []:
        return None
    if any(key in got and not _DIGITS.fullmatch(got[key]) for key in ("budget", "budget_tokens")):
        return None
    from ..app.context_run import FORMATS  # the shapes --format takes (views/delivery.py)

    fmt = got.get("fmt", "generic")
    if fmt not in FORMATS:
        return None
    budget, tokens = got.get("budget"), got.get("budget_tokens")
    return Shape(got.get("line"), int(budget) if budget else None, int(tokens) if tokens else None, fmt)


def _options(
    args: list[str], known: dict[str, str], got: dict[str, str], stop: Optional[str] = None
) -> Optional[list[str]]:
    """Take `--opt VALUE` / `--opt=VALUE` of `known` into `got` up to `stop` (or the end);
    the rest, or None for anything else (an unknown or repeated option, a missing value)."""
    i = 0
    while i < len(args) and args[i] != stop:
        name, eq, value = args[i].partition("=")
        if name not in known or known[name] in got:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        got[known[name]] = value
        i += 1
    return args[i:]


def answer(args: list[str]) -> Optional[int]:
    """The exit code when the warm `context` was answered here; None: run main.py."""
    shape = parse(args)
    out = sys.stdout
    if shape is None or out is None or out.isatty():
        return None
    try:
        if codecs.lookup(out.encoding or "ascii").name != "utf-8":
            return None  # click would re-wrap such a stream
        from ..app.warm_context import warm_context

        text = warm_context(shape.line, shape.budget, shape.budget_tokens, shape.fmt, os.getcwd(), dict(os.environ))
        if text is None or "\x1b" in text:
            return None  # click's echo strips escape sequences from a pipe: let it
        text.encode("utf-8")  # a lone surrogate: whatever the normal path does with it
    except KeyboardInterrupt:
        return 130
    except Exception:  # whatever went wrong here, the normal path says it properly
        return None
    out.write(text)
    out.flush()
    return 0
