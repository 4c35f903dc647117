"""The Entry as stored: its JSON blob and its timestamp survive every round trip."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from helpers import make_entry
from hypothesis import given
from hypothesis import strategies as st

from git_lifeline.core.model import Entry, format_ts, parse_ts
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


# ---- the CLI's pydantic-free path and the pydantic Entry are one set of rules -----
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from git_lifeline.core.rules import new_record  # noqa: E402
from git_lifeline.errors import InputError  # noqa: E402

_texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFF), max_size=20)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["decision", "note", "checkpoint", "nope"]), summary=_texts, body=_texts,
       author=_texts)
def test_fast_record_and_pydantic_entry_refuse_and_write_exactly_alike(kind, summary, body, author):
    from datetime import datetime, timezone

    from git_lifeline.core.model import build_entry
    ts = datetime(2026, 1, 1, tzinfo=timezone.utc)
    try:
        fast = new_record(kind=kind, summary=summary, body=body, author=author, ts=ts)
    except InputError:
        fast = None
    try:
        slow = build_entry(kind=kind, summary=summary, body=body, author=author, ts=ts)
    except InputError:
        slow = None
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert fast.to_json() == slow.to_json() and fast.id == slow.id
