"""The stored blob as this tool writes it, read without the general parse: verify's fast path.

`Entry.from_json` (core/entry.py) is the one parse of a blob, and it names what is wrong
with a malformed one. Reading a whole line, nearly every blob is laid out exactly as
`encode_blob` writes it: the eleven keys in order, compact, every value of its type. For
such a blob one regex over its text finds every field at once, in place of the JSON parser
(with its duplicate-key hook), the key-set check and the constructor's type checks;
`plain_fields` then checks the rest of what the constructor checks — the kind, the date,
the year, the canonical form, and every content rule through `plainly_valid`, which
content_problems itself trusts — and gives the fields the parse would have given.

It never refuses: a blob it cannot vouch for (any other layout, an escape in a single-line
value it cannot decode alike, a rule in doubt) gives None, and the caller parses it with
`Entry.from_json`, which decides and says why. So a blob it takes is exactly one the full
parse takes, with the same fields (tests/core/test_plain_blob_agrees_with_the_full_parse.py
holds the two to that over generated and hostile blobs). What it saves: about half the
parse's time on a realistic line (docs/PERFORMANCE.md, "Verify, issue 30: sixth pass").
"""

from __future__ import annotations

import re
from _json import scanstring
from datetime import datetime
from typing import NamedTuple, Optional

from .content_rules import plainly_valid
from .entry import KINDS, MAX_BLOB_BYTES, MIN_TS, Entry

# A JSON string's inside as JSON allows it (no raw control character, escapes well formed),
# as a run of plain characters between escapes: each character can match one way only, so
# a hostile blob costs one pass, never a backtracking search. `scanstring`, the JSON
# parser's own, decodes a value that holds a backslash.
_STR = r'([^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*)'
_HEX = "[0-9a-f]{64}"
_LAYOUT = re.compile(
    r'\{"agent":"' + _STR + r'","author":"' + _STR + r'","body":"' + _STR + r'","dedup_key":(?:null|"' + _STR + r'")'
    r',"id":"('
    + _HEX
    + r')","kind":"([a-z]+)","model":"'
    + _STR
    + r'","parents":\[((?:"'
    + _HEX
    + r'")(?:,"'
    + _HEX
    + r'")*)?\],"provider":"'
    + _STR
    + r'","summary":"'
    + _STR
    + r'","ts":"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6})Z"\}\n'
)
_KINDS = frozenset(KINDS)
_MIN_YEAR = MIN_TS.year  # a blob's ts is UTC and whole years before it are refused


class PlainEntry(NamedTuple):
    """The fields of a stored blob `plain_fields` vouched for: what `Entry.from_json` would
    give (an Entry built from them passes every rule)."""

    id: str
    ts: datetime
    kind: str
    author: str
    agent: str
    provider: str
    model: str
    summary: str
    body: str
    parents: list[str]
    dedup_key: Optional[str]

    def entry(self) -> Entry:
        """The Entry these fields are (its constructor checks every rule again)."""
        return Entry(*self)


def plain_fields(data: bytes) -> Optional[PlainEntry]:
    """The blob's fields when it is laid out as `encode_blob` writes it and every rule of
    `Entry.from_json` holds for it; None when either is not plainly so (the caller parses
    it in full)."""
    if len(data) > MAX_BLOB_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    m = _LAYOUT.fullmatch(text)
    if m is None:
        return None
    agent, author, body, dedup_key, entry_id, kind, model, parents_text, provider, summary, ts_text = m.groups()
    if kind not in _KINDS:
        return None
    if "\\" in text:  # some value holds an escape: each such value as the JSON parser decodes it
        agent, author, body, model, provider, summary = (
            _decoded(text, m, 1, agent),
            _decoded(text, m, 2, author),
            _decoded(text, m, 3, body),
            _decoded(text, m, 7, model),
            _decoded(text, m, 9, provider),
            _decoded(text, m, 10, summary),
        )
        if dedup_key is not None:
            dedup_key = _decoded(text, m, 4, dedup_key)
    try:  # aware in UTC by its "+00:00" (a third of the time a replace() of the tzinfo takes)
        ts = datetime.fromisoformat(ts_text + "+00:00")
    except ValueError:
        return None
    if ts.year < _MIN_YEAR:
        return None
    parents = parents_text[1:-1].split('","') if parents_text else []
    if body != body.strip() or (len(parents) > 1 and parents != sorted(parents)):
        return None
    fields = PlainEntry(entry_id, ts, kind, author, agent, provider, model, summary, body, parents, dedup_key)
    return fields if plainly_valid(fields) else None


def _decoded(text: str, m: re.Match[str], group: int, raw: str) -> str:
    """A string value as the JSON parser decodes it (the regex matched its raw text):
    `_json.scanstring` is the very code json.JSONDecoder's C scanner runs on a string."""
    if "\\" not in raw:
        return raw
    return scanstring(text, m.start(group), True)[0]
