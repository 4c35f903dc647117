"""What a log's name may be (`refs/lifeline/<name>`): one rule, checked before any ref or
file is named after it. Kept apart from fanout.py so that a process that never opens the
repository with pygit2 (the warm `context`) checks names by the same rule."""

from __future__ import annotations

import re
from typing import Optional

from ..errors import InputError

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise InputError(
            f"invalid line name {name!r}: use 1-63 letters, digits, '-' or '_', starting with a letter or digit"
        )
    return name


DEFAULT_LINE = "main"


def chosen_line(line: Optional[str], configured_default: Optional[str]) -> str:
    """The line a command works on: the one named (--line), else git config
    lifeline.defaultLine, else main; checked."""
    return validate_name((line or "").strip() or configured_default or DEFAULT_LINE)
