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
from typing import Optional

HEADER_KEYS = ("thread", "pin", "action", "subject", "paths", "valid-from", "valid-until", "commit",
               "allow-secret")
CHECKPOINT_SECTIONS = ("goal", "done", "next", "blocked", "tried")

_HEADER_LINE = re.compile(r"(?P<key>[a-z][a-z-]*):[ \t]+(?P<value>\S.*?)[ \t]*")
_LIST_HEAD = re.compile(r"(?P<name>[a-z][a-z-]*):[ \t]*")


def header_fields(body: str) -> dict:
    """The known `key: value` lines at the top of the body (first value wins)."""
    out: dict = {}
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


def list_blocks(body: str) -> dict:
    """`name:` + indented `- item` blocks, anywhere a line starts unindented."""
    out: dict = {}
    current: Optional[list] = None
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


def render_header(fields: dict) -> str:
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v)


def render_list_block(name: str, items: list) -> str:
    if not items:
        return ""
    return f"{name}:\n" + "".join(f"  - {item}\n" for item in items)
