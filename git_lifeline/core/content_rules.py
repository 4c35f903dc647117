"""The content rules of an entry: what every text field, the body and the parents must be
(docs/FORMAT.md §1). core/entry.py's `Entry` applies them on construction; they live
here so that the entry module stays one screen of the type, its parse and its builder.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional, Protocol, Sequence

from .blocks import LINE_BREAKS


class Attributed(Protocol):
    """What an entry says of itself and who wrote it, read alike by the content rules here
    and by the fold (core/entry.py's Folded): an Entry, or a cache's slim record."""

    @property
    def summary(self) -> str: ...
    @property
    def agent(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def parents(self) -> Sequence[str]: ...


class Fields(Attributed, Protocol):
    """What the rules read of an entry (core/entry.py's Entry, whose fields are read-only)."""

    @property
    def author(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def dedup_key(self) -> Optional[str]: ...


HEX64 = re.compile(r"[0-9a-f]{64}")

# Kinds whose new entry may carry an empty body: a checkpoint's content is its blocks.
# Every other kind needs its why when git-lifeline writes it (`Entry.new`); a stored
# entry may have an empty body, as lifeline-context allows (an import keeps its ids).
BODY_OPTIONAL_KINDS = frozenset({"checkpoint"})

MAX_SUMMARY_CHARS = 300
MAX_FIELD_CHARS = 200
MAX_BODY_BYTES = 64 * 1024
MAX_PARENTS = 64

_BODY_CONTROLS_ALLOWED = frozenset("\t\n\r")
# Fast pre-checks: a value without any of these characters passes the per-character
# scans below, so the scans (and their precise messages) run only for suspicious input.
# Category Cc is exactly U+0000-U+001F and U+007F-U+009F; Cs is U+D800-U+DFFF.
_SUSPECT_SINGLE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SUSPECT_BODY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


# ---- the content rules -------------------------------------------------------------
def _bad_single_line(value: str) -> Optional[str]:
    if _SUSPECT_SINGLE_LINE.search(value) is None:
        return "has leading or trailing whitespace" if value != value.strip() else None
    for ch in value:
        if ch in LINE_BREAKS:
            return "contains a line break"
        cat = unicodedata.category(ch)
        if cat == "Cc":
            return f"contains control character U+{ord(ch):04X}"
        if cat == "Cs":
            return "contains an unpaired surrogate (not valid UTF-8)"
    if value != value.strip():
        return "has leading or trailing whitespace"
    return None


def _bad_body(value: str) -> Optional[str]:
    if _SUSPECT_BODY.search(value) is None:
        if len(value) * 4 > MAX_BODY_BYTES and len(value.encode("utf-8")) > MAX_BODY_BYTES:
            return f"is larger than {MAX_BODY_BYTES} bytes"
        return None
    for ch in value:
        cat = unicodedata.category(ch)
        if cat == "Cc" and ch not in _BODY_CONTROLS_ALLOWED:
            return f"contains control character U+{ord(ch):04X}"
        if cat == "Cs":
            return "contains an unpaired surrogate (not valid UTF-8)"
    if len(value.encode("utf-8")) > MAX_BODY_BYTES:
        return f"is larger than {MAX_BODY_BYTES} bytes"
    return None


def missing_why(kind: str, body: str) -> Optional[str]:
    """The write rule on the body: every kind but a checkpoint says why."""
    if kind not in BODY_OPTIONAL_KINDS and not body.strip():
        return f"a {kind} needs its why: the body is empty"
    return None


def content_problems(e: Fields) -> list[str]:
    """Every content rule, as human-readable problems (empty when valid)."""
    if plainly_valid(e):
        return []
    problems: list[str] = []
    if not e.summary.strip():
        problems.append("summary is empty")
    else:
        why = _bad_single_line(e.summary)
        if why:
            problems.append(f"summary {why}")
        if len(e.summary) > MAX_SUMMARY_CHARS:
            problems.append(f"summary is longer than {MAX_SUMMARY_CHARS} characters")
    for name in ("author", "agent", "provider", "model"):
        value = getattr(e, name)
        if not value:
            problems.append(f"{name} is empty")
            continue
        why = _bad_single_line(value)
        if why:
            problems.append(f"{name} {why}")
        if len(value) > MAX_FIELD_CHARS:
            problems.append(f"{name} is longer than {MAX_FIELD_CHARS} characters")
    why = _bad_body(e.body)
    if why:
        problems.append(f"body {why}")
    if len(e.parents) > MAX_PARENTS:
        problems.append(f"more than {MAX_PARENTS} parents")
    if len(set(e.parents)) != len(e.parents):
        problems.append("a parent is listed twice")
    for p in e.parents:
        if not HEX64.fullmatch(p):
            problems.append(f"parent {p[:20]!r} is not a full 64-hex id")
    if e.dedup_key is not None:
        why = _bad_single_line(e.dedup_key) if e.dedup_key else "is empty"
        if why:
            problems.append(f"dedup_key {why}")
        elif len(e.dedup_key) > MAX_FIELD_CHARS:
            problems.append(f"dedup_key is longer than {MAX_FIELD_CHARS} characters")
    return problems


def plainly_valid(e: Fields) -> bool:
    """True only when every content rule of `content_problems` holds, decided in a few calls
    for the common entry (no suspect character, no surrounding whitespace, within every
    limit); False sends the entry through the rules one by one, which name what
    is wrong. Every blob read (verify, a cold cache build) passes here: the rules one by one
    cost twice as much."""
    summary, author, agent, provider, model = e.summary, e.author, e.agent, e.provider, e.model
    if not (summary and author and agent and provider and model):
        return False
    if len(summary) > MAX_SUMMARY_CHARS or max(len(author), len(agent), len(provider), len(model)) > MAX_FIELD_CHARS:
        return False
    # every suspect character (control, line break, surrogate) is unprintable, and a space is
    # printable: one C pass over the five values joined clears them all
    if not f"{summary} {author} {agent} {provider} {model}".isprintable():
        return False
    if (
        summary != summary.strip()
        or author != author.strip()
        or agent != agent.strip()
        or provider != provider.strip()
        or model != model.strip()
    ):
        return False
    body = e.body
    if not body.replace("\n", " ").isprintable() and _SUSPECT_BODY.search(body) is not None:
        return False
    if len(body) * 4 > MAX_BODY_BYTES and len(body.encode("utf-8")) > MAX_BODY_BYTES:
        return False
    parents = e.parents
    if len(parents) == 1:
        if HEX64.fullmatch(parents[0]) is None:
            return False
    elif parents and (
        len(parents) > MAX_PARENTS or len(set(parents)) != len(parents) or not all(HEX64.fullmatch(p) for p in parents)
    ):
        return False
    key = e.dedup_key
    return key is None or (bool(key) and len(key) <= MAX_FIELD_CHARS and _bad_single_line(key) is None)
