"""Typed header values: what a `commit:` or `paths:` header may hold (docs/FORMAT.md §8).

These two values leave the ledger: staleness hands them to git (a revision range, a
pathspec). An entry is text anyone with push access can write, so a value is held to
its type wherever it enters — at write (app/ledger.py), when it arrives by a pull and
at the server (the one verifier, git/checks.py) and in `verify` — and the fold never
remembers one that fails (core/truth.py), so no entry text can reach git as an option
(`--output=...`) or as anything but the name or the path it claims to be.

Pure: no git, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Optional

from . import blocks
from .anchors import anchor_problem

if TYPE_CHECKING:
    from .entry import Entry

# A hex object name as git reads one: an abbreviation of at least 4 digits, at most a
# full SHA-256 name. Nothing else (no ref name, no `HEAD~2`, no option) is a commit here.
COMMIT_VALUE = re.compile(r"[0-9a-fA-F]{4,64}")
# `paths:` is a list of globs separated by commas or whitespace (git/history.py).
_PATH_SPLIT = re.compile(r"[,\s]+")
_MAX_PATH_CHARS = 1024

# The body of these kinds is never read for header fields (the fold skips them).
NO_HEADER_KINDS = frozenset({"relation"})


def split_paths(value: str) -> list[str]:
    """The globs of a `paths:` value, in order."""
    return [g for g in _PATH_SPLIT.split(value.strip()) if g]


def commit_problem(value: str) -> Optional[str]:
    if COMMIT_VALUE.fullmatch(value):
        return None
    return f"header commit: {_shown(value)} is not a hex object name (4 to 64 hex digits)"


def path_problem(glob: str) -> Optional[str]:
    """Why one glob of a `paths:` header cannot be a pathspec, or None."""
    if glob.startswith("-"):
        return f"header paths: {_shown(glob)} starts with '-' (it would read as an option)"
    for ch in glob:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return f"header paths: {_shown(glob)} holds the invisible or control character U+{ord(ch):04X}"
    if len(glob) > _MAX_PATH_CHARS:
        return f"header paths: a glob is longer than {_MAX_PATH_CHARS} characters"
    why = anchor_problem(glob)  # `file#L10-40`, `file#symbol` (core/anchors.py)
    return f"header paths: {why}" if why else None


def paths_problem(value: str) -> Optional[str]:
    globs = split_paths(value)
    if not globs:
        return "header paths: names no path"
    for glob in globs:
        why = path_problem(glob)
        if why:
            return why
    return None


def value_problem(key: str, value: str) -> Optional[str]:
    """Why a header value is not of its key's type (None: fine, or an untyped key)."""
    if key == "commit":
        return commit_problem(value)
    if key == "paths":
        return paths_problem(value)
    return None


def header_problems(kind: str, body: str) -> list[str]:
    """Every typed header value of a body that is not of its type (empty when valid)."""
    if kind in NO_HEADER_KINDS:
        return []
    fields = blocks.header_fields(body)
    problems = []
    for key in ("commit", "paths"):
        if key in fields:
            why = value_problem(key, fields[key])
            if why:
                problems.append(why)
    return problems


def valid_value(key: str, value: Optional[str]) -> Optional[str]:
    """`value` when it is of its key's type, else None (what the fold remembers)."""
    if value is None or value_problem(key, value) is not None:
        return None
    return value


def refuse_bad_headers(entry: Entry) -> None:
    """Raise EntryError (an input error: exit 2, nothing written) when a typed header
    value of `entry` is not of its type."""
    problems = header_problems(entry.kind, entry.body)
    if problems:
        from .entry import EntryError

        raise EntryError("; ".join(problems))


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
