"""verify's fast path (core/plain_blob.py) reads a blob in this tool's own layout without the
JSON parser; it must never take a blob the full parse (`Entry.from_json`) refuses, nor give
other fields than it does, whatever the blob holds, and it must take what this tool writes
(else it saves nothing and nothing here would notice)."""

from __future__ import annotations

import json
from typing import Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit.entries import BlobValue, blob, corpus, entry_strategy, make_entry

from git_lifeline.core.content_rules import plainly_valid
from git_lifeline.core.entry import KINDS, Entry, EntryError, format_ts, parse_entry
from git_lifeline.core.plain_blob import plain_fields


def full_parse(data: bytes) -> Optional[Entry]:
    try:
        return parse_entry(data)
    except EntryError:
        return None


def assert_agrees(data: bytes) -> None:
    plain = plain_fields(data)
    if plain is None:
        return  # not vouched for: the full parse decides
    e = full_parse(data)
    assert e is not None, f"the fast path took a blob the full parse refuses: {data[:200]!r}"
    assert tuple(plain) == (
        e.id,
        e.ts,
        e.kind,
        e.author,
        e.agent,
        e.provider,
        e.model,
        e.summary,
        e.body,
        e.parents,
        e.dedup_key,
    )
    assert plain.ts.tzinfo == e.ts.tzinfo and plain.ts.utcoffset() == e.ts.utcoffset()
    assert plain.entry() == e


@settings(max_examples=150, deadline=None)
@given(entry_strategy())
def test_the_fast_path_reads_every_entry_this_tool_writes_as_the_full_parse_does(e):
    # every blob this tool writes has the layout; the content rules' own quick check
    # (plainly_valid: printable text, as nearly every entry) decides the rest
    data = e.to_json()
    assert (plain_fields(data) is not None) == plainly_valid(e), data
    assert_agrees(data)


# Values a hand-made blob may hold in any field: text of any character (controls, line
# breaks, surrogates as JSON escapes, quotes, backslashes, space around it), numbers, lists.
_ANY_TEXT = st.text(st.characters(), max_size=12) | st.sampled_from(
    ["", " x", "x ", "a\u2028b", "\x85", "\ud800", "tab\there", 'q"uote', "back\\slash", "\u00e9\u6f22"]
)
_HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
_FIELD_VALUE: st.SearchStrategy[BlobValue] = st.one_of(
    _ANY_TEXT, st.none(), st.integers(), st.lists(_ANY_TEXT | _HEX, max_size=3)
)
_TS = st.sampled_from(
    [
        "2024-05-01T12:00:00.123456Z",
        "1969-12-31T23:59:59.999999Z",
        "1970-01-01T00:00:00.000000Z",
        "2024-02-30T00:00:00.000000Z",
        "2024-05-01T24:00:00.000000Z",
        "2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00.123456+00:00",
        "\u0662\u0660\u0662\u0664-05-01T12:00:00.123456Z",  # digits of another script
        "9999-12-31T23:59:59.999999Z",
    ]
) | st.datetimes().map(lambda d: d.isoformat(timespec="microseconds") + "Z")


@st.composite
def hostile_docs(draw: st.DrawFn) -> tuple[dict[str, BlobValue], bool]:
    """A blob's document: a valid one with some fields replaced by anything, and whether
    its id is resealed to its content (else it may not match)."""
    base = json.loads(make_entry(7, parents=draw(st.lists(_HEX, min_size=2, max_size=2, unique=True))).to_json())
    doc: dict[str, BlobValue] = dict(base)
    for key in draw(st.lists(st.sampled_from(sorted(doc)), max_size=4, unique=True)):
        if key == "ts":
            doc[key] = draw(_TS | _FIELD_VALUE)
        elif key == "kind":
            doc[key] = draw(st.sampled_from([*KINDS, "gossip", "Decision", ""]) | _FIELD_VALUE)
        elif key == "parents":
            doc[key] = draw(st.lists(_HEX | _ANY_TEXT, max_size=4) | _FIELD_VALUE)
        elif key == "id":
            doc[key] = draw(_HEX | _FIELD_VALUE)
        else:
            doc[key] = draw(_FIELD_VALUE)
    return doc, draw(st.booleans())


def encode(doc: dict[str, BlobValue], reseal: bool, ascii_only: bool) -> bytes:
    try:
        if ascii_only:
            return (json.dumps(doc, ensure_ascii=True, sort_keys=True, separators=(",", ":")) + "\n").encode()
        return blob(doc, reseal=reseal)
    except (TypeError, AttributeError, UnicodeEncodeError):  # not hashable as an entry, or a lone surrogate
        return (json.dumps(doc, ensure_ascii=True, sort_keys=True, separators=(",", ":")) + "\n").encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_docs(), st.booleans())
def test_the_fast_path_never_takes_a_blob_the_full_parse_refuses_or_reads_another_way(doc_and_seal, ascii_only):
    doc, reseal = doc_and_seal
    assert_agrees(encode(doc, reseal, ascii_only))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_no_change_of_bytes_makes_the_fast_path_read_a_blob_otherwise(data):
    e = make_entry(3, body='Line one\nline "two"\t\\ end', parents=[make_entry(1).id], dedup_key="k")
    raw = bytearray(e.to_json())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        edit = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        byte = data.draw(st.sampled_from(list(b'"\\,:{}[] \n\t\x00\x7fnulZ0af') + [0xC3, 0xA9, 0xFF, 0xED]))
        if edit == "insert":
            raw.insert(at, byte)
        elif at < len(raw):
            if edit == "flip":
                raw[at] = byte
            else:
                del raw[at]
    assert_agrees(bytes(raw))


def test_every_blob_of_the_malformed_corpus_is_left_to_the_full_parse_or_read_alike():
    base = json.loads(make_entry(3, parents=[make_entry(1).id, make_entry(2).id], dedup_key="k").to_json())
    cases = corpus(base)
    for name, (_entry_id, data) in cases.items():
        assert_agrees(data)
        if not name.startswith("valid") and name != "tampered":
            assert plain_fields(data) is None, name  # each breaks a rule of the parse


def test_a_blob_in_another_layout_is_left_to_the_full_parse():
    e = make_entry(4)
    spaced = json.dumps(json.loads(e.to_json()), sort_keys=True).encode()  # ", " and ": "
    assert parse_entry(spaced) == e and plain_fields(spaced) is None
    doc = json.loads(e.to_json())
    doc["ts"] = format_ts(e.ts)
    reordered = (json.dumps(dict(reversed(list(doc.items()))), separators=(",", ":")) + "\n").encode()
    assert parse_entry(reordered) == e and plain_fields(reordered) is None
