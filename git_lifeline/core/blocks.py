"""Body blocks: the small amount of structure that lives inside an entry's body.

Structure has to live in the body, because the body is hashed and survives every
round trip while the hashed field set stays the seed's. Blocks are recognised only
where they are defined to stand (docs/FORMAT.md, "Body blocks"):

* header fields: `key: value` lines at the very top of the body, before anything
  else (`thread: api`, `pin: <id>`). The same text further down is prose.
* list blocks: `name:` alone on a line followed by indented `- item` lines, as a
  checkpoint's goal/done/next/blocked/tried.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Iterable, Mapping, Optional

from ..errors import InputError

HEADER_KEYS = (
    "thread",
    "pin",
    "action",
    "subject",
    "paths",
    "valid-from",
    "valid-until",
    "commit",
    "allow-secret",
    "adr-status",  # the status an imported ADR's file gave, as written (app/adr.py)
)
CHECKPOINT_SECTIONS = ("goal", "done", "next", "blocked", "tried")

# Characters that end a line for some reader (str.splitlines, markdown, terminals).
LINE_BREAKS = frozenset("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")

_HEADER_LINE = re.compile(r"(?P<key>[a-z][a-z-]*):[ \t]+(?P<value>\S.*?)[ \t]*")
_LIST_HEAD = re.compile(r"(?P<name>[a-z][a-z-]*):[ \t]*")


def header_fields(body: str) -> dict[str, str]:
    """The known `key: value` lines at the top of the body (first value wins)."""
    out: dict[str, str] = {}
    for line in body.split("\n"):
        m = _HEADER_LINE.fullmatch(line.rstrip("\r"))
        if not m or m.group("key") not in HEADER_KEYS:
            break
        out.setdefault(m.group("key"), m.group("value"))
    return out


def field(body: str, key: str) -> Optional[str]:
    return header_fields(body).get(key)


def strip_header(body: str) -> str:
    """The prose of a body without its header fields (what a reader wants as the why)."""
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        m = _HEADER_LINE.fullmatch(lines[i].rstrip("\r"))
        if not m or m.group("key") not in HEADER_KEYS:
            break
        i += 1
    return "\n".join(lines[i:]).strip()


def list_blocks(body: str) -> dict[str, list[str]]:
    """`name:` + indented `- item` blocks, anywhere a line starts unindented."""
    out: dict[str, list[str]] = {}
    current: Optional[list[str]] = None
    for raw in body.split("\n"):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if not line[:1].isspace():
            m = _LIST_HEAD.fullmatch(line)
            current = out.setdefault(m.group("name"), []) if m else None
            continue
        if current is None:
            continue
        item = line.strip()
        if item.startswith("- "):
            current.append(item[2:].strip())
        elif item == "-":
            continue
        elif current:
            current[-1] = f"{current[-1]} {item}"
    return out


def refuse_line_break(name: str, value: Optional[str]) -> None:
    """THE check of a single-line argument (a thread, a summary, an agent's name, a header
    value), whichever face it came from: InputError when a line break is in it. A break
    in a value written as a header line would add header lines of its own (`thread: x`
    then `allow-secret: ...`), so nothing with one is ever written."""
    if value and any(ch in LINE_BREAKS for ch in value):
        raise InputError(f"{name} must be one line: it contains a line break; nothing was written")


def render_header(fields: Mapping[str, Optional[str]]) -> str:
    for key, value in fields.items():
        refuse_line_break(key, value)
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v)


def render_list_block(name: str, items: list[str]) -> str:
    if not items:
        return ""
    return f"{name}:\n" + "".join(f"  - {item}\n" for item in items)


# ---- what a writer meant as a header, and did not get -----------------------------------
# A header the reader does not take is silently prose: a typo (`path:`) or a header
# written below the first line of prose. These are reported (warned at write, listed
# by `verify --lint`); nothing is refused for them, since a body may well start with
# "note: ..." as prose.
FLAG_KEYS = ("subject", "paths", "valid-from", "valid-until")  # the keys the writing commands' flags set
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def header_warnings(body: str, kind: str = "") -> list[str]:
    """Lines that look like header fields but are not read as such, one sentence each."""
    if kind == "relation":  # a relation's body is its own `rel:`/`from:`/`to:` record
        return []
    lines = [line.rstrip("\r") for line in body.split("\n")]
    i = 0
    while i < len(lines) and _is_header(lines[i]):  # the header: known fields at the very top
        i += 1
    out: list[str] = []
    top = True  # every line since the header ended looks like a header line
    blank = False  # the header ended at a blank line, and only blank or header-like lines followed
    fence = None
    for n in range(i, len(lines)):
        line = lines[n]
        f = _FENCE.match(line)
        if f or fence is not None:
            if f:
                fence = (
                    f.group(1)
                    if fence is None
                    else (None if f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) else fence)
                )
            top = blank = False
            continue
        m = _HEADER_LINE.fullmatch(line)
        if not m:
            blank = (n == i or blank) and not line.strip()
            top = False
            continue
        key = m.group("key")
        where = f"body line {n + 1} '{key}:'"
        if key not in HEADER_KEYS:
            if top:
                from difflib import get_close_matches  # for a near-miss key only, not every write

                near = get_close_matches(key, HEADER_KEYS, n=1, cutoff=0.6)
                hint = f" (did you mean '{near[0]}:'?)" if near else ""
                out.append(
                    f"{where} looks like a header but '{key}' is not a known header key{hint}, so it is "
                    f"prose; known keys: {', '.join(HEADER_KEYS)}"
                )
            continue
        if top:
            reason = f"it follows '{lines[i].split(':', 1)[0]}:' on line {i + 1}, which is not a header key"
        elif blank:
            reason = f"the header ended at the blank line {i + 1}"
        else:
            reason = "it comes after the first line of prose"
        out.append(
            f"{where} is prose, not a header: {reason}; headers go at the very top of the body, "
            "one per line" + (f" (or use --{key})" if key in FLAG_KEYS else "")
        )
    return out


def _is_header(line: str) -> bool:
    m = _HEADER_LINE.fullmatch(line)
    return m is not None and m.group("key") in HEADER_KEYS


def header_value_problems(fields: Mapping[str, str]) -> list[str]:
    """Header values the truth cannot read (a validity window that is not a UTC date or time,
    or that closes before it opens), one sentence each. `fields` is header_fields(body)."""
    if "valid-from" not in fields and "valid-until" not in fields:
        return []  # no window to read: core/dates.py is imported for one only (a plain `log` has none)
    from .dates import header_date_problem

    out: list[str] = []
    for key in ("valid-from", "valid-until"):
        value = fields.get(key)
        if value is not None:
            why = header_date_problem(value)
            if why:
                out.append(f"{key}: {why}")
    start, end = fields.get("valid-from"), fields.get("valid-until")
    if start and end and not out:
        from .dates import parse_when

        if parse_when(start).start > parse_when(end).end:
            out.append(f"valid-from {start} is after valid-until {end}: the decision would never be in force")
    return out


def with_header(body: str, fields: Mapping[str, Optional[str]]) -> str:
    """`fields` (key -> value, in order) as header lines on top of `body`. A body that
    already starts with header fields keeps them right below (one header); prose is
    separated by a blank line. A key the body's header already gives is refused unless
    the values agree (then it is written once)."""
    own = header_fields(body)
    fresh: dict[str, str] = {}
    for key, value in fields.items():
        if not value:
            continue
        if key in own:
            if own[key] != value:
                raise ValueError(f"the body's header says '{key}: {own[key]}' and the option says {value!r}")
            continue
        fresh[key] = value
    if not fresh:
        return body
    top = body.lstrip("\n").split("\n", 1)[0].rstrip("\r")
    m = _HEADER_LINE.fullmatch(top)
    joint = "" if (m and m.group("key") in HEADER_KEYS) or not body.strip() else "\n"
    return render_header(fresh) + joint + body.lstrip("\n")


# ---- header fields from options --------------------------------------------------------------
MAX_SUBJECT_CHARS = 200


def header_from_options(
    paths: Iterable[str] = (),
    subject: Optional[str] = None,
    valid_from: Optional[str] = None,
    valid_until: Optional[str] = None,
    now: Optional[datetime] = None,
) -> dict[str, str]:
    """The header fields the writing commands' options ask for, checked and normalised:
    paths joined as `a, b`, dates as a UTC day or time (core/dates.py). Raises InputError
    naming the option."""
    from ..errors import InputError
    from .dates import parse_when

    out: dict[str, str] = {}
    if subject is not None:
        text = subject.strip()
        if not text or any(ch in text for ch in "\r\n") or any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in text):
            raise InputError(f"--subject {subject!r}: one non-empty line without control characters")
        if len(text) > MAX_SUBJECT_CHARS:
            raise InputError(f"--subject is longer than {MAX_SUBJECT_CHARS} characters")
        out["subject"] = text
    specs: list[str] = []
    for raw in paths or ():
        spec = raw.strip()
        if not spec:
            raise InputError("--paths: an empty pathspec")
        if spec.startswith("-"):
            raise InputError(f"--paths {raw!r}: a pathspec cannot start with '-'")
        if any(ch.isspace() or ch == "," or ord(ch) < 32 or ord(ch) == 127 for ch in spec):
            raise InputError(
                f"--paths {raw!r}: a pathspec in a header cannot hold whitespace, a comma or a "
                "control character (they separate pathspecs); give one --paths per pathspec"
            )
        if spec not in specs:
            specs.append(spec)
    if specs:
        out["paths"] = ", ".join(specs)
    for key, value in (("valid-from", valid_from), ("valid-until", valid_until)):
        if value is not None:
            out[key] = parse_when(value, now, what=f"--{key}").header()
    problems = header_value_problems(out)
    if problems:
        raise InputError(problems[0])
    return out
