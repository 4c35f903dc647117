"""LIFELINE.md: a readable, diffable view of a line, and the way back from it.

The render and the parse are exact inverses for every valid entry. Bodies sit in
a backtick fence longer than any backtick run inside them, so no body text —
headings, `---`, our own markers, CRLF — can end an entry early; there is no
sentinel an author must avoid.

The file is read rendered (a forge's file view, an editor's preview), so every value
taken from an entry into a heading or a field line is escaped (`escape_text`): markdown
and HTML punctuation gets a backslash, an emoji shortcode's colon too, and an invisible
character (bidi control, zero-width space) is written as `\\u{XXXX}`. A summary cannot
fake an id, a mark, a link or a comment that hides the rest of the file, and the parse
undoes it exactly (`unescape_text`). Files written before (projection v1) hold raw
values and are read as they were written.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional

from ..core.entry import entry_order_key, format_ts, parse_ts
from ..errors import InputError, LifelineError

if TYPE_CHECKING:  # annotations only
    from datetime import datetime

    from ..core.entry import Entry

MAGIC = "<!-- git-lifeline projection v2"  # values escaped (what `render` writes)
_ANY_MAGIC = re.compile(r"<!-- git-lifeline projection v(?P<v>[12]) line ")
_FOOT_LINE = (
    r"<!-- lifeline:tree (?P<head>[0-9a-f]{40}|none) entries (?P<n>\d+)"
    r"(?: last (?P<ts>\S+) (?P<id>[0-9a-f]{64}))? -->"
)
_FOOT = re.compile(_FOOT_LINE + r"\n\Z")
_FIELD = re.compile(r"- (?P<k>[a-z_]+): (?P<v>.*)")
_RUN = re.compile(r"`+")


# ASCII punctuation markdown or HTML gives a meaning to within a line; `\\` first, so
# every backslash in the output is the start of an escape.
_ESCAPED = frozenset("\\`*_[]<>!|~&#")
_SHORTCODE_START = re.compile(r"[A-Za-z0-9_+-]")
_ESCAPE = re.compile(r"\\(?:u\{(?P<hex>[0-9A-F]{4,6})\}|(?P<ch>.))", re.S)
_TEXT_FIELDS = ("summary", "author", "agent", "provider", "model", "dedup_key")


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cf", "Cc", "Zl", "Zp", "Cs") or ch in "\u034f\u115f\u1160\u3164\uffa0"


def escape_text(value: str) -> str:
    """An entry's single-line value as inert markdown that `unescape_text` undoes exactly."""
    out = []
    for i, ch in enumerate(value):
        if ch in _ESCAPED or ch == "⚠":
            out.append("\\" + ch)
        elif ch == ":" and _SHORTCODE_START.match(value, i + 1):
            out.append("\\:")  # `:warning:` renders as an emoji on some forges
        elif _invisible(ch):
            out.append(f"\\u{{{ord(ch):04X}}}")
        else:
            out.append(ch)
    return "".join(out)


def unescape_text(text: str) -> str:
    def one(m: re.Match) -> str:
        return chr(int(m.group("hex"), 16)) if m.group("hex") else m.group("ch")

    return _ESCAPE.sub(one, text)


def fence_for(body: str) -> str:
    """A backtick fence longer than any backtick run in `body`, so no line of it can close
    the fence and pass for the text around it."""
    longest = max((len(m.group(0)) for m in _RUN.finditer(body)), default=0)
    return "`" * max(3, longest + 1)


def render_entry(e: Entry) -> str:
    parents = ", ".join(e.parents) if e.parents else "-"
    summary = escape_text(e.summary)
    lines = [
        f"### {e.kind}: {summary}",
        "",
        f"- id: {e.id}",
        f"- ts: {format_ts(e.ts)}",
        f"- kind: {e.kind}",
        f"- summary: {summary}",
        f"- author: {escape_text(e.author)}",
        f"- agent: {escape_text(e.agent)}",
        f"- provider: {escape_text(e.provider)}",
        f"- model: {escape_text(e.model)}",
        f"- parents: {parents}",
    ]
    if e.dedup_key is not None:
        lines.append(f"- dedup_key: {escape_text(e.dedup_key)}")
    out = "\n".join(lines) + "\n"
    if e.body:
        fence = fence_for(e.body)
        out += f"\n{fence}text\n{e.body}\n{fence}\n"
    return out + "\n"


def header(line: str) -> str:
    return (
        f"# Lifeline: {line}\n\n"
        f"{MAGIC} line {line}: generated from refs/lifeline/{line}; do not edit by hand.\n"
        f"     Rebuild the ref from it with: git lifeline migrate --from <this file> -->\n\n"
    )


def footer(head: Optional[str], count: int, last: Optional[Entry]) -> str:
    tail = f" last {format_ts(last.ts)} {last.id}" if last is not None else ""
    return f"<!-- lifeline:tree {head or 'none'} entries {count}{tail} -->\n"


def render(line: str, entries: Iterable[Entry], head: Optional[str]) -> str:
    ordered = sorted(entries, key=entry_order_key)
    last = ordered[-1] if ordered else None
    return header(line) + "".join(render_entry(e) for e in ordered) + footer(head, len(ordered), last)


def append_rendered(text: str, prev_head: Optional[str], new_entries: list[Entry], head: str) -> Optional[str]:
    """Extend a projection when it shows exactly the entries tree `prev_head` and every
    new entry sorts after the last one shown; None when a full render is needed instead.

    The footer names the entries *tree*, not the commit: the tree is addressed by the
    entry set alone, so a ledger rebuilt from this file renders byte-identically."""
    m = _FOOT.search(text)
    if not m or (m.group("head") if m.group("head") != "none" else None) != prev_head:
        return None
    if MAGIC not in text[:4096]:
        return None  # an older file: values written raw, so it is rendered anew in full
    new = sorted(new_entries, key=entry_order_key)
    if m.group("id") and (parse_ts(m.group("ts")), m.group("id")) >= entry_order_key(new[0]):
        return None
    count = int(m.group("n")) + len(new)
    return text[: m.start()] + "".join(render_entry(e) for e in new) + footer(head, count, new[-1])


def shown_tree(text: str) -> tuple[bool, Optional[str]]:
    """(True, entries tree oid or None) named by a projection's footer; (False, None) when
    the text has no footer (then only a full render can bring it up to date)."""
    m = _FOOT.search(text)
    if not m:
        return False, None
    return True, (m.group("head") if m.group("head") != "none" else None)


class ParseError(InputError):
    pass


def parse(text: str, source: str = "LIFELINE.md") -> list[Entry]:
    """Entries of a projection, in file order. Raises ParseError naming the line."""
    version = _ANY_MAGIC.search(text)
    if version is None:
        raise ParseError(f"{source} is not a git-lifeline projection (no '{MAGIC}' header)")
    escaped = version.group("v") != "1"
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    footer_m = re.fullmatch(_FOOT_LINE, lines[-1]) if lines else None
    if footer_m is None:
        raise ParseError(f"{source} has no '<!-- lifeline:tree ...' footer line at its end: the file is truncated")
    lines.pop()
    entries: list[Entry] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.startswith("### "):
            if entries and line.strip():
                raise ParseError(f"{source}:{i + 1}: unexpected text outside an entry: {line[:60]!r}")
            i += 1
            continue
        start = i + 1
        i += 1
        if i < n and lines[i] == "":
            i += 1
        fields: dict[str, str] = {}
        while i < n and lines[i].startswith("- "):
            m = _FIELD.fullmatch(lines[i])
            if not m:
                raise ParseError(f"{source}:{i + 1}: malformed field line {lines[i][:60]!r}")
            if m.group("k") in fields:
                raise ParseError(f"{source}:{i + 1}: field {m.group('k')!r} given twice")
            fields[m.group("k")] = m.group("v")
            i += 1
        body = ""
        if i + 1 < n and lines[i] == "" and lines[i + 1].startswith("```"):
            opener = lines[i + 1]
            fence = opener[: len(opener) - len(opener.lstrip("`"))]
            if opener[len(fence) :] != "text":
                raise ParseError(f"{source}:{i + 2}: body fence must be {fence}text")
            j = i + 2
            body_lines = []
            while j < n and lines[j] != fence:
                body_lines.append(lines[j])
                j += 1
            if j >= n:
                raise ParseError(f"{source}:{i + 2}: body fence opened here is never closed")
            body = "\n".join(body_lines)
            i = j + 1
        if escaped:
            fields = {k: unescape_text(v) if k in _TEXT_FIELDS else v for k, v in fields.items()}
        entries.append(_entry_from_fields(fields, body, source, start))
    expected = int(footer_m.group("n"))
    if expected != len(entries):
        raise ParseError(
            f"{source}: its footer counts {expected} entries but {len(entries)} were read: "
            "the file is truncated or was edited"
        )
    return entries


_REQUIRED = ("id", "ts", "kind", "summary", "author", "agent", "provider", "model", "parents")


def _entry_from_fields(fields: dict[str, str], body: str, source: str, lineno: int) -> "Entry":
    from ..core.entry import stored_entry

    missing = [k for k in _REQUIRED if k not in fields]
    if missing:
        raise ParseError(f"{source}:{lineno}: entry lacks field(s) {', '.join(missing)}")
    unknown = set(fields) - set(_REQUIRED) - {"dedup_key"}
    if unknown:
        raise ParseError(f"{source}:{lineno}: unknown field(s) {', '.join(sorted(unknown))}")
    raw_parents = fields["parents"]
    parents = [] if raw_parents == "-" else [p.strip() for p in raw_parents.split(",")]
    try:
        # a stored entry's body may be empty (an import from lifeline-context)
        return stored_entry(
            fields,
            body,
            parents,
            id=fields["id"],
            ts=parse_ts(fields["ts"]),
            dedup_key=fields.get("dedup_key"),
            require_why=False,
        )
    except LifelineError as exc:
        raise ParseError(f"{source}:{lineno}: {exc}") from None


# ---- size bound -----------------------------------------------------------------------
# At 10,000 entries a whole projection is ~6 MB: past any reader, and rewritten on every
# append. The file keeps the newest entries that fit in a byte budget; the entries left
# out are counted in a note under the header and stay one command away. The choice of
# what fits depends only on the entry set, so extending a bounded file and rendering
# the same entries afresh give the same bytes.
DEFAULT_MAX_BYTES = 1 << 20
_OMITTED = re.compile(r"<!-- lifeline:omitted (?P<k>\d+) -->\n")
_FENCE_OPEN = re.compile(r"(`{3,})text")


def omitted_note(line: str, k: int) -> str:
    """The note under the header of a file that leaves its `k` oldest entries out."""
    if not k:
        return ""
    return (
        f"<!-- lifeline:omitted {k} -->\n"
        f"_{k} earlier entr{'y is' if k == 1 else 'ies are'} not shown here (this file keeps the newest "
        f"that fit its size limit, git config lifeline.projectionMaxBytes); list them with "
        f"`git lifeline list --line {line}`, read one with `git lifeline show ID`._\n\n"
    )


def omitted(text: str) -> int:
    """How many entries of its line a projection leaves out (0 for a whole one). The
    note is read only where it belongs, right under the header: a body quoting it is
    never taken for it."""
    start = text.find(MAGIC)
    end = text.find("-->\n\n", start) if start >= 0 else -1
    m = _OMITTED.match(text, end + 5) if end >= 0 else None
    return int(m.group("k")) if m else 0


def _entry_starts(text: str, start: int, end: int) -> Iterator[int]:
    """The offset of each rendered entry in text[start:end], lazily, from the first: an
    entry starts at a `### ` line outside a body fence (a body's lines are all inside its
    fence)."""
    fence = None
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        row = text[pos:stop]
        if fence is not None:
            if row == fence:
                fence = None
        elif row.startswith("### "):
            yield pos
        else:
            m = _FENCE_OPEN.fullmatch(row)
            if m:
                fence = m.group(1)
        pos = stop + 1


def _bytes(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8"))


def _first_kept(
    fixed: int,
    sizes: list[int],
    before: int,
    note_size: Callable[[int], int],
    foot_size: Callable[[int], int],
    max_bytes: int,
) -> int:
    """The index of the first entry kept: walking back from the newest (always kept),
    stop at the first that would take the file past `max_bytes`. `before` entries are
    already left out ahead of `sizes`; note_size(k)/foot_size(n) price the note for k
    left out and the footer for n shown."""
    n = len(sizes)
    total = 0
    first = n
    for i in range(n - 1, -1, -1):
        total += sizes[i]
        if first < n and fixed + note_size(before + i) + total + foot_size(n - i) > max_bytes:
            break
        first = i
    return first


class Newest:
    """The entries render_bounded shows, chosen from a line's entries given one at a time in
    any order, and the count of all of them: a first render holds what it shows, not the
    line (a million-entry line loaded whole took 2.3 GB).

    It keeps the shortest run of the newest whose pieces pass `max_bytes` (all of them while
    they do not), as render_bounded's walk back from the newest does: an entry older than
    every one kept, once those kept pass the budget, is only counted, never rendered. Given
    the newest first, it renders one entry past the budget and no more; given in random
    order (a tree's path order), about kept * (1 + ln(all / kept))."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.count = 0  # every entry given
        self._kept: list[tuple[tuple[datetime, str], str, Entry]] = []  # a heap: the oldest kept first
        self._size = 0  # bytes of the pieces kept

    @property
    def full(self) -> bool:
        """Whether the entries kept already pass the budget (so an older one is never shown)."""
        return 0 < self.max_bytes < self._size

    def shows(self, key: tuple[datetime, str]) -> bool:
        """Whether an entry of this (ts, id) would be kept if it came now."""
        return not (self.full and key < self._kept[0][0])

    def add(self, e: Entry) -> None:
        self.count += 1
        key = entry_order_key(e)
        if not self.shows(key):
            return
        piece = render_entry(e)
        heapq.heappush(self._kept, (key, piece, e))  # keys are (ts, id): never equal for two ids
        self._size += _bytes(piece)
        while self.max_bytes > 0 and self._size - _bytes(self._kept[0][1]) > self.max_bytes:
            self._size -= _bytes(heapq.heappop(self._kept)[1])

    def also_count(self, n: int) -> None:
        """Count `n` more entries, each older than every one kept, when they pass the budget."""
        assert n == 0 or self.full
        self.count += n

    def text(self, line: str, head: Optional[str]) -> str:
        """The projection of the line: render_bounded of all the entries given."""
        kept = sorted(self._kept)
        last = kept[-1][2] if kept else None
        pieces = [piece for _, piece, _ in kept]
        if self.max_bytes <= 0 or not kept:
            return header(line) + "".join(pieces) + footer(head, len(pieces), last)
        skipped = self.count - len(pieces)
        first = _first_kept(
            _bytes(header(line)),
            [_bytes(p) for p in pieces],
            skipped,
            lambda k: _bytes(omitted_note(line, k)),
            lambda n: _bytes(footer(head, n, last)),
            self.max_bytes,
        )
        shown = pieces[first:]
        return header(line) + omitted_note(line, skipped + first) + "".join(shown) + footer(head, len(shown), last)


def render_bounded(line: str, entries: Iterable[Entry], head: Optional[str], max_bytes: int) -> str:
    """`render`, keeping the newest entries that fit in `max_bytes` (0: no bound)."""
    newest = Newest(max_bytes)
    for e in sorted(entries, key=entry_order_key, reverse=True):  # newest first: the fewest rendered
        newest.add(e)
    return newest.text(line, head)


def bound(text: str, line: str, max_bytes: int) -> str:
    """A projection text (whole or already bounded) cut to the newest entries that fit
    in `max_bytes`, exactly as render_bounded would render its entries.

    Only the entries cut are scanned (an append to a file at its limit cuts a few from
    the front): past the first entry, each entry cut makes the file smaller (an entry is
    far longer than the digit the note may gain), so the first count that fits, walking
    from the front, is the one render_bounded finds walking from the back."""
    if max_bytes <= 0 or len(text) <= max_bytes // 4 or _bytes(text) <= max_bytes:
        return text
    foot = _FOOT.search(text)
    head_text = header(line)
    if foot is None or not text.startswith(head_text):
        return text
    before = omitted(text)
    body_start = len(head_text) + len(omitted_note(line, before))
    shown = int(foot.group("n"))
    foot_text = text[foot.start() :]
    fixed = _bytes(head_text) + _bytes(foot_text) - len(str(shown))
    remaining = _bytes(text[body_start : foot.start()])
    cut, at = 0, body_start
    starts = _entry_starts(text, body_start, foot.start())
    next(starts, None)  # the first entry starts at body_start
    for nxt in starts:
        if cut + 1 >= shown:
            break  # the newest entry is always kept
        remaining -= _bytes(text[at:nxt])
        cut, at = cut + 1, nxt
        if fixed + _bytes(omitted_note(line, before + cut)) + remaining + len(str(shown - cut)) <= max_bytes:
            break
    if cut == 0:
        return text
    new_foot = (
        foot_text[: foot.start("n") - foot.start()] + str(shown - cut) + foot_text[foot.end("n") - foot.start() :]
    )
    return head_text + omitted_note(line, before + cut) + text[at : foot.start()] + new_foot
