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

import re
import unicodedata
from typing import TYPE_CHECKING, Iterable, Optional

from ..core.canonical import format_ts
from ..core.rules import parse_ts
from ..errors import InputError, LifelineError

if TYPE_CHECKING:  # annotations only: importing the model loads pydantic
    from ..core.model import Entry

# The pydantic model is imported only by `parse` (migrate): refreshing the projection
# after a `log` renders Records and must not pay pydantic's start-up.

MAGIC = "<!-- git-lifeline projection v2"     # values escaped (what `render` writes)
MAGIC_V1 = "<!-- git-lifeline projection v1"  # values raw (read, never written)
_ANY_MAGIC = re.compile(r"<!-- git-lifeline projection v(?P<v>[12]) line ")
_FOOT_LINE = (r"<!-- lifeline:tree (?P<head>[0-9a-f]{40}|none) entries (?P<n>\d+)"
              r"(?: last (?P<ts>\S+) (?P<id>[0-9a-f]{64}))? -->")
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


def order_key(e: Entry):
    """The one order every view uses: time, then id (identical on every clone)."""
    return (e.ts, e.id)


def _fence_for(body: str) -> str:
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
        fence = _fence_for(e.body)
        out += f"\n{fence}text\n{e.body}\n{fence}\n"
    return out + "\n"


def header(line: str) -> str:
    return (
        f"# Lifeline: {line}\n\n"
        f"{MAGIC} line {line}: generated from refs/lifeline/{line}; do not edit by hand.\n"
        f"     Rebuild the ref from it with: git lifeline migrate --from <this file> -->\n\n")


def footer(head: Optional[str], count: int, last: Optional[Entry]) -> str:
    tail = f" last {format_ts(last.ts)} {last.id}" if last is not None else ""
    return f"<!-- lifeline:tree {head or 'none'} entries {count}{tail} -->\n"


def render(line: str, entries: Iterable[Entry], head: Optional[str]) -> str:
    ordered = sorted(entries, key=order_key)
    last = ordered[-1] if ordered else None
    return header(line) + "".join(render_entry(e) for e in ordered) + footer(head, len(ordered), last)


def append_rendered(text: str, prev_head: Optional[str], new_entries: list, head: str) -> Optional[str]:
    """Extend a projection when it shows exactly the entries tree `prev_head` and every
    new entry sorts after the last one shown; None when a full render is needed instead.

    The footer names the entries *tree*, not the commit: the tree is addressed by the
    entry set alone, so a ledger rebuilt from this file renders byte-identically."""
    m = _FOOT.search(text)
    if not m or (m.group("head") if m.group("head") != "none" else None) != prev_head:
        return None
    if MAGIC not in text[:4096]:
        return None  # an older file: values written raw, so it is rendered anew in full
    new = sorted(new_entries, key=order_key)
    if m.group("id") and (parse_ts(m.group("ts")), m.group("id")) >= order_key(new[0]):
        return None
    count = int(m.group("n")) + len(new)
    return text[: m.start()] + "".join(render_entry(e) for e in new) + footer(head, count, new[-1])


def shown_tree(text: str) -> tuple:
    """(True, entries tree oid or None) named by a projection's footer; (False, None) when
    the text has no footer (then only a full render can bring it up to date)."""
    m = _FOOT.search(text)
    if not m:
        return False, None
    return True, (m.group("head") if m.group("head") != "none" else None)


class ParseError(InputError):
    pass


def parse(text: str, source: str = "LIFELINE.md") -> list:
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
        raise ParseError(f"{source} has no '<!-- lifeline:tree ...' footer line at its end: "
                         "the file is truncated")
    lines.pop()
    entries = []
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
        fields: dict = {}
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
            if opener[len(fence):] != "text":
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
        raise ParseError(f"{source}: its footer counts {expected} entries but {len(entries)} were read: "
                         "the file is truncated or was edited")
    return entries


_REQUIRED = ("id", "ts", "kind", "summary", "author", "agent", "provider", "model", "parents")


def _entry_from_fields(fields: dict, body: str, source: str, lineno: int) -> "Entry":
    from ..core.model import build_entry
    missing = [k for k in _REQUIRED if k not in fields]
    if missing:
        raise ParseError(f"{source}:{lineno}: entry lacks field(s) {', '.join(missing)}")
    unknown = set(fields) - set(_REQUIRED) - {"dedup_key"}
    if unknown:
        raise ParseError(f"{source}:{lineno}: unknown field(s) {', '.join(sorted(unknown))}")
    raw_parents = fields["parents"]
    parents = [] if raw_parents == "-" else [p.strip() for p in raw_parents.split(",")]
    try:
        return build_entry(
            id=fields["id"], ts=parse_ts(fields["ts"]), kind=fields["kind"], summary=fields["summary"],
            author=fields["author"], agent=fields["agent"], provider=fields["provider"],
            model=fields["model"], parents=parents, body=body, dedup_key=fields.get("dedup_key"),
            require_why=False)  # a stored entry's body may be empty (an import from lifeline-context)
    except LifelineError as exc:
        raise ParseError(f"{source}:{lineno}: {exc}") from None
