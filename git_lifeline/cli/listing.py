"""How entries are written for a human in a listing: the default line, `--oneline`, and
`--format` with git-like placeholders. Every value taken from an entry is made visible
(cli/terminal.py); the format string itself is the user's own text."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..app.visible import visible
from ..errors import InputError
from .common import short
from .terminal import Output

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.ledger import Entry

ONELINE = "%h %k: %s"
PLACEHOLDERS = {
    "H": "full id",
    "h": "short id (8 hex)",
    "s": "summary",
    "b": "body",
    "k": "kind",
    "an": "author name",
    "ae": "author email",
    "aN": "author as recorded (Name <email>)",
    "ad": "date (git's default format, UTC)",
    "ai": "date, ISO-like",
    "aI": "date, strict ISO 8601",
    "as": "date, YYYY-MM-DD",
    "ar": "date, relative",
    "at": "date, UNIX time",
    "g": "agent",
    "gp": "provider",
    "gm": "model",
    "p": "short parent ids",
    "P": "full parent ids",
    "d": "dedup key",
    "n": "newline",
    "%": "a literal %",
    "Cred": "red",
    "Cgreen": "green",
    "Cblue": "blue",
    "Cyellow": "yellow",
    "Creset": "reset colour",
    "C(...)": "a colour by name (e.g. %C(bold cyan))",
}
# Longest first: %an before %a..., %Cgreen before %C(...).
_TOKEN = re.compile(
    r"%(C\([a-z_ ]*\)|Cred|Cgreen|Cblue|Cyellow|Creset|an|ae|aN|ad|ai|aI|as|ar|at|gp|gm|"
    r"H|h|s|b|k|g|p|P|d|n|%)"
)


def _name_email(author: str) -> tuple[str, str]:
    m = re.fullmatch(r"(.*?)\s*<([^<>]*)>", author)
    return (m.group(1), m.group(2)) if m else (author, "")


def relative(ts: datetime, now: datetime) -> str:
    seconds = int((now - ts).total_seconds())
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in (
        (365 * 86400, "year"),
        (30 * 86400, "month"),
        (7 * 86400, "week"),
        (86400, "day"),
        (3600, "hour"),
        (60, "minute"),
        (1, "second"),
    ):
        if seconds >= size or unit == "second":
            n = seconds // size
            word = f"{n} {unit}{'s' if n != 1 else ''}"
            return f"in {word}" if future else f"{word} ago"
    return "now"


def check_format(fmt: str) -> str:
    """The format a user gave: `oneline`, `format:...`, `tformat:...` or the string itself.
    An unknown %-placeholder is refused (git would print it as is; a typo should show)."""
    if fmt == "oneline":
        return ONELINE
    for prefix in ("tformat:", "format:"):
        if fmt.startswith(prefix):
            fmt = fmt[len(prefix) :]
            break
    rest = _TOKEN.sub("", fmt)
    if "%" in rest:
        bad = rest[rest.index("%") :][:3]
        raise InputError(f"--format: unknown placeholder {bad!r}; known: " + ", ".join(f"%{k}" for k in PLACEHOLDERS))
    return fmt


def render(e: Entry, fmt: str, out: Output, now: datetime) -> str:
    """One entry through a checked format."""
    name, email = _name_email(e.author)

    def value(token: str) -> str:
        if token.startswith("C"):
            if token == "Creset":
                return out.raw("reset")
            colour = token[2:-1] if token.startswith("C(") else token[1:].lower()
            return out.raw(colour)
        simple = {
            "H": e.id,
            "h": short(e.id),
            "s": e.summary,
            "k": e.kind,
            "an": name,
            "ae": email,
            "aN": e.author,
            "g": e.agent,
            "gp": e.provider,
            "gm": e.model,
            "p": " ".join(short(p) for p in e.parents),
            "P": " ".join(e.parents),
            "d": e.dedup_key or "",
            "n": "\n",
            "%": "%",
            "ad": f"{e.ts:%a %b %d %H:%M:%S %Y} +0000",
            "ai": f"{e.ts:%Y-%m-%d %H:%M:%S} +0000",
            "aI": f"{e.ts:%Y-%m-%dT%H:%M:%S}+00:00",
            "as": f"{e.ts:%Y-%m-%d}",
            "ar": relative(e.ts, now),
            "at": str(int(e.ts.timestamp())),
        }
        if token == "b":
            return visible(e.body, multiline=True)
        text = simple[token]
        return text if token in ("n", "%") else visible(text)

    return _TOKEN.sub(lambda m: value(m.group(1)), fmt)


def default_line(e: Entry, out: Output) -> str:
    return (
        f"{out.paint(e.short, 'id')}  {e.ts:%Y-%m-%d %H:%M}  {out.paint(f'{e.kind:<11}', 'kind')} {visible(e.summary)}"
    )


def now_utc() -> datetime:
    return datetime.now(timezone.utc)
