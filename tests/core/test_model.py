"""The Entry as stored: its JSON blob and its timestamp survive every round trip."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kit.entries import make_entry

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


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59), timezones=st.just(timezone.utc)
    )
)
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


# ---- the one builder: every field's type checked and named, every write exact -------------
from hypothesis import settings  # noqa: E402

from git_lifeline.core.entry import EntryError, new_entry  # noqa: E402

_texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFF), max_size=20)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["decision", "note", "checkpoint", "nope"]), summary=_texts, body=_texts, author=_texts)
def test_the_builder_refuses_with_an_input_error_or_writes_exactly_what_it_was_given(kind, summary, body, author):
    ts = datetime(2026, 1, 1, tzinfo=timezone.utc)
    try:
        built = new_entry(kind=kind, summary=summary, body=body, author=author, ts=ts)
    except InputError:
        return  # refused by a rule: anything else raised is a crash and fails the test
    assert (built.kind, built.summary, built.body, built.author, built.ts) == (kind, summary, body.strip(), author, ts)
    assert built.verify()
    assert Entry.from_json(built.to_json()) == built
    assert Entry.from_json(built.to_json()).to_json() == built.to_json()


_FIELDS = dict(kind="note", summary="s", author="a", body="b")


@pytest.mark.parametrize(
    "field,value,fragment",
    [
        ("kind", 3, "kind: must be text"),
        ("summary", 3, "summary: must be text"),
        ("author", None, "author: must be text"),
        ("body", b"why", "body: must be text"),
        ("agent", ["bot"], "agent: must be text"),
        ("provider", 1.5, "provider: must be text"),
        ("model", {"name": "m"}, "model: must be text"),
        ("parents", "ab", "parents: must be a list of ids"),
        ("parents", ["a" * 64, 7], "parents: must be a list of ids"),
        ("dedup_key", 5, "dedup_key: must be text"),
        ("ts", "2024-01-01T00:00:00Z", "ts: must be a datetime"),
        ("id", 5, "id: must be text"),
    ],
)
def test_an_untrusted_value_of_the_wrong_type_is_refused_naming_its_field_and_nothing_is_built(field, value, fragment):
    # The builder is the only way in, for import records and tool arguments alike: every field it
    # takes is checked, in one line that names it, before anything is hashed or scanned.
    built = []
    with pytest.raises(EntryError, match=fragment) as info:
        built.append(new_entry(**{**_FIELDS, field: value}))
    assert built == [] and "\n" not in str(info.value)
