"""The Entry as stored: its JSON blob and its timestamp survive every round trip."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from helpers import make_entry
from hypothesis import given
from hypothesis import strategies as st

from git_lifeline.core.entry import Entry, format_ts, parse_ts
from git_lifeline.errors import InputError


def test_json_blob_is_canonical_and_round_trips():
    e = make_entry(parents=["b" * 64, "a" * 64], dedup_key="k", body="ü\r\nline")
    blob = e.to_json()
    assert blob.endswith(b"\n") and blob.count(b"\n") == 1
    assert Entry.from_json(blob) == e
    assert Entry.from_json(blob).to_json() == blob


def test_a_ts_with_an_offset_is_stored_in_utc():
    e = make_entry(ts=datetime(2024, 1, 1, 5, 0, tzinfo=timezone(timedelta(hours=5))))
    assert e.ts == datetime(2024, 1, 1, 0, 0, tzinfo=timezone.utc)
    assert format_ts(e.ts) == "2024-01-01T00:00:00.000000Z"


def test_a_naive_ts_is_refused_not_guessed():
    with pytest.raises(InputError, match="UTC offset"):
        make_entry(ts=datetime(2024, 1, 1))
    with pytest.raises(InputError, match="UTC offset"):
        parse_ts("2024-01-01T00:00:00")


@pytest.mark.parametrize("year", [1, 5, 999, 1969])
def test_a_ts_before_1970_is_refused_because_git_cannot_carry_it(year):
    # A commit time is unsigned epoch seconds, and a year < 1000 would render as an
    # unreadable timestamp: such an entry could be written but never read back.
    with pytest.raises(InputError, match="1970"):
        make_entry(ts=datetime(year, 6, 1, tzinfo=timezone.utc))


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59),
                    timezones=st.just(timezone.utc)))
def test_every_storable_ts_reads_back_exactly(ts):
    e = make_entry(ts=ts)
    assert Entry.from_json(e.to_json()).ts == ts


def test_a_naive_timestamp_is_utc_only_when_the_caller_says_so():
    # one parser for log, projections and imports: import's --assume-utc is its assume_utc
    from git_lifeline.core.entry import NaiveTimestamp
    with pytest.raises(NaiveTimestamp, match="no UTC offset"):
        parse_ts("2024-01-01T10:00:00")
    assert parse_ts("2024-01-01T10:00:00", assume_utc=True) == datetime(2024, 1, 1, 10, tzinfo=timezone.utc)
    assert parse_ts("2024-01-01T10:00:00+02:00", assume_utc=True) == datetime(2024, 1, 1, 8, tzinfo=timezone.utc)
    with pytest.raises(InputError, match="expected ISO-8601"):
        parse_ts("yesterday", assume_utc=True)


def test_a_timestamp_out_of_range_in_utc_is_refused_not_crashed_on():
    with pytest.raises(InputError, match="out of range"):
        parse_ts("0001-01-01T00:00:00+05:00")


# ---- the pydantic boundary and the builder are one set of rules ---------------------------
from hypothesis import settings  # noqa: E402

_texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFF), max_size=20)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["decision", "note", "checkpoint", "nope"]), summary=_texts, body=_texts,
       author=_texts)
def test_untrusted_fields_and_the_builder_refuse_and_write_exactly_alike(kind, summary, body, author):
    from git_lifeline.core.entry import new_entry
    from git_lifeline.core.entry_fields import entry_from_dict
    ts = datetime(2026, 1, 1, tzinfo=timezone.utc)
    try:
        built = new_entry(kind=kind, summary=summary, body=body, author=author, ts=ts)
    except InputError:
        built = None
    try:
        checked = entry_from_dict(dict(kind=kind, summary=summary, body=body, author=author, ts=ts))
    except InputError:
        checked = None
    assert (built is None) == (checked is None)
    if built is not None:
        assert built == checked and built.to_json() == checked.to_json()
        assert Entry.from_json(built.to_json()) == built


@pytest.mark.parametrize("doc,fragment", [
    ({"kind": "note", "summary": 3, "author": "a", "body": "b"}, "summary: Input should be a valid string"),
    ({"kind": "note", "summary": "s", "author": "a", "body": "b", "parents": "ab"}, "parents: Input should be"),
    ({"kind": "note", "summary": "s", "author": "a", "body": "b", "colour": "red"}, "colour: Extra inputs"),
    ({"kind": "note", "summary": "s", "author": "a", "body": "b", "ts": "2024-01-01T00:00:00Z"}, "ts: Input"),
    ({"summary": "s", "author": "a"}, "kind: Field required"),
])
def test_an_untrusted_dict_is_refused_in_one_sentence_naming_each_bad_field(doc, fragment):
    from git_lifeline.core.entry_fields import entry_from_dict
    with pytest.raises(InputError, match=fragment) as info:
        entry_from_dict(doc)
    assert "\n" not in str(info.value)


def test_a_python_caller_gets_the_same_type_checks_without_pydantic():
    from git_lifeline.core.entry import EntryError, new_entry
    for fields, fragment in [(dict(summary=3), "summary: must be text"), (dict(parents="ab"), "parents: must be"),
                             (dict(ts="2024-01-01T00:00:00Z"), "ts: must be a datetime"),
                             (dict(dedup_key=5), "dedup_key: must be text")]:
        with pytest.raises(EntryError, match=fragment):
            new_entry(**{"kind": "note", "summary": "s", "author": "a", "body": "b", **fields})
