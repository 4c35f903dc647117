"""Code anchors: a `paths:` item that names lines of one file, or one symbol in it.

`src/auth.py#L10-40` (or `#L10-L40`, GitHub's form, or `#L12` for one line) names lines 10
to 40 of that file; `src/auth.py#login` names the body of the function or class `login`
as git finds it for `git log -L :login:src/auth.py`. Everything else is a git pathspec
(docs/FORMAT.md §9). An item that starts with `:` (git's pathspec magic) is always a
pathspec, so a file whose name holds `#` is named `:(literal)notes#1.md`.

Pure: no git, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

LINE_LIMIT = 10_000_000  # no source file has more lines; a bigger number is a typo
_RANGE = re.compile(r"L(\d+)(?:-L?(\d+))?")
# what a line range was meant to be (`#L10-`, `#10-40`, `#L4x`): refused, never a symbol
_RANGE_LIKE = re.compile(r"L?\d.*")
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class LineAnchor:
    """Lines `start` to `end` (1-based, inclusive) of `path`, as the decision saw the file."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class SymbolAnchor:
    """The body of `symbol` in `path`: its funcname line up to the next (git's `-L :name:`)."""

    path: str
    symbol: str


Anchor = Union[LineAnchor, SymbolAnchor]


class AnchorError(ValueError):
    """A `paths:` item meant as an anchor that is malformed (the message says how)."""


def parse_anchor(item: str) -> Optional[Anchor]:
    """The anchor `item` names, None when it is a plain pathspec; AnchorError when it is
    meant as one and malformed (a bad range, a pattern instead of one file)."""
    if item.startswith(":") or "#" not in item:
        return None
    path, _, fragment = item.rpartition("#")
    path = path.lstrip("/")
    m = _RANGE.fullmatch(fragment)
    if m is None and _RANGE_LIKE.fullmatch(fragment):
        raise AnchorError(
            f"{item!r}: a line range is <file>#L<start>-<end> (or #L<line>), whole numbers from 1, start <= end"
        )
    if m is None and not SYMBOL.fullmatch(fragment):
        return None  # a file with `#` in its name (`notes#.md`): a pathspec, as before
    if not path:
        raise AnchorError(f"{item!r}: a line range or a symbol names a file before the '#'")
    if _GLOB_CHARS & set(path) or path.endswith("/"):
        raise AnchorError(f"{item!r}: a line range or a symbol names one file, not a pattern or a directory")
    if m is None:
        return SymbolAnchor(path, fragment)
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) is not None else start
    if not 1 <= start <= end <= LINE_LIMIT:
        raise AnchorError(f"{item!r}: a line range is <file>#L<start>-<end> with 1 <= start <= end <= {LINE_LIMIT:,}")
    return LineAnchor(path, start, end)


def anchor_problem(item: str) -> Optional[str]:
    """Why `item` is a malformed anchor, or None (an anchor, or a plain pathspec)."""
    try:
        parse_anchor(item)
    except AnchorError as exc:
        return str(exc)
    return None


def anchor_file(item: str) -> str:
    """The file an anchor names, or the item itself when it is a pathspec (what must exist)."""
    try:
        anchor = parse_anchor(item)
    except AnchorError:
        return item
    return anchor.path if anchor is not None else item


@dataclass(frozen=True)
class Hunk:
    """One hunk of a `git diff -U0`: `old_count` lines from `old_start` became `new_count`
    lines from `new_start` (a count of 0: the start is the line before the change)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a `git diff -U0` of one file, in order."""
    out = []
    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            a, b, c, d = m.groups()
            out.append(Hunk(int(a), int(b) if b is not None else 1, int(c), int(d) if d is not None else 1))
    return out


def map_lines(hunks: list[Hunk], start: int, end: int) -> Optional[tuple[int, int]]:
    """Where lines `start`..`end` of the old file are in the new one, followed across a
    `git diff -U0`: a hunk before the range moves it; inside a hunk that straddles an edge
    a line keeps its offset from the hunk's start (line by line, as an edit of `n` lines
    into `n` lines is), so lines added at the range's edges stay out of it. None when
    every line of the range was deleted."""
    new_start = new_end = None
    start_shift = end_shift = 0
    for h in hunks:
        old_last = h.old_start + h.old_count - 1
        delta = h.new_count - h.old_count
        if h.old_count == 0:  # lines inserted after old line `old_start`
            start_shift += delta if h.old_start < start else 0
            end_shift += delta if h.old_start < end else 0
            continue
        if new_start is None:
            if old_last < start:
                start_shift += delta
            elif h.old_start <= start:
                # the first line of the range that survives, or the line after the hunk
                # (a hunk of no new lines starts at the line before it)
                offset = start - h.old_start
                new_start = h.new_start + min(offset, h.new_count) if h.new_count else h.new_start + 1
        if new_end is None:
            if old_last < end:
                end_shift += delta
            elif h.old_start <= end:
                # the last line of the range that survives, or the line before the hunk
                offset = end - h.old_start
                new_end = h.new_start + min(offset, h.new_count - 1) if h.new_count else h.new_start
    first = new_start if new_start is not None else start + start_shift
    last = new_end if new_end is not None else end + end_shift
    return (first, last) if last >= first else None
