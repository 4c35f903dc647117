"""The id: canonical form injectivity and compatibility with lifeline-context 0.6.1."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kit.entries import make_entry
from kit.home import AUTHOR
from kit.run import DATA

from git_lifeline.core.entry import KINDS, Entry, canonical_form, compute_id, new_entry
from git_lifeline.errors import InputError

SEED_FILE = DATA / "seed_ids.json"
FIELD_NAMES = ("kind", "author", "agent", "provider", "model", "summary", "body")


def canon(
    kind="decision", author=AUTHOR, agent="human", provider="none", model="human", summary="s", body="b", parents=()
) -> bytes:
    return canonical_form(kind, author, agent, provider, model, summary, body, list(parents))


def decode_canonical(data: bytes) -> tuple:
    """Read canonical bytes back into (fields..., parents): possible only if the form is injective."""
    assert data.startswith(b"v2\n")
    pos, values = 3, []
    while pos < len(data):
        colon = data.index(b":", pos)
        size = int(data[pos:colon])
        start = colon + 1
        values.append(data[start : start + size].decode("utf-8"))
        assert data[start + size : start + size + 1] == b"\n", "a field must end exactly where its length says"
        pos = start + size + 1
    return tuple(values[:7]), tuple(values[7:])


def normalised(fields: tuple, parents) -> tuple:
    f = list(fields)
    f[6] = f[6].strip()
    return tuple(f), tuple(sorted(parents))


# ---- field boundaries ----------------------------------------------------------
def test_newline_inside_a_field_cannot_shift_into_the_next_field():
    assert canon(summary="a\nb", body="c") != canon(summary="a", body="b\nc")
    assert canon(author="x\n1:y", agent="z") != canon(author="x", agent="y\n1:z")


def test_length_prefix_text_inside_a_field_cannot_forge_a_boundary():
    forged = canon(summary="s\n1:b\n", body="")
    honest = canon(summary="s", body="b")
    assert forged != honest
    assert decode_canonical(forged)[0][5] == "s\n1:b\n"


def test_digits_in_values_do_not_merge_with_length_prefixes():
    assert canon(summary="12", body="3") != canon(summary="1", body="23")
    assert canon(summary="1:2", body="3") != canon(summary="1", body="2:3")
    assert decode_canonical(canon(summary="10:", body="9"))[0][5:] == ("10:", "9")


def test_length_prefix_counts_utf8_bytes_not_characters():
    data = canon(summary="é🚀")
    assert "6:é🚀\n".encode("utf-8") in data


def test_empty_parent_list_differs_from_one_empty_parent():
    assert canon(parents=[]) != canon(parents=[""])
    assert decode_canonical(canon(parents=[""]))[1] == ("",)


def test_parent_order_does_not_change_the_id():
    a, b, c = "a" * 64, "b" * 64, "c" * 64
    assert canon(parents=[c, a, b]) == canon(parents=[a, b, c])
    e1 = make_entry(parents=[c, a, b])
    e2 = make_entry(parents=[b, c, a])
    assert e1.id == e2.id and e1.parents == [a, b, c]


def test_body_is_hashed_stripped_and_stored_stripped():
    assert canon(body="  why \n\n") == canon(body="why")
    e = make_entry(body="\n\t why it matters  \n")
    assert e.body == "why it matters"
    assert e.id == make_entry(body="why it matters").id
    assert canon(body="a b") != canon(body="ab"), "inner whitespace is content"


def test_ts_and_dedup_key_stay_out_of_the_id():
    e1 = make_entry(ts=datetime(2020, 1, 1, tzinfo=timezone.utc), dedup_key="k1")
    e2 = make_entry(ts=datetime(2030, 1, 1, tzinfo=timezone.utc))
    assert e1.id == e2.id


text = st.text(max_size=12)
field_tuples = st.tuples(*[text] * 7)
parent_lists = st.lists(st.text(alphabet="0123456789abcdef:\n", max_size=6), max_size=3)


@given(field_tuples, parent_lists)
def test_canonical_bytes_decode_back_to_exactly_the_normalised_fields(fields, parents):
    data = canonical_form(*fields, parents)
    assert decode_canonical(data) == normalised(fields, parents)


@given(field_tuples, parent_lists, field_tuples, parent_lists)
def test_distinct_field_tuples_never_share_canonical_bytes(f1, p1, f2, p2):
    if normalised(f1, p1) != normalised(f2, p2):
        assert canonical_form(*f1, p1) != canonical_form(*f2, p2)
    else:
        assert canonical_form(*f1, p1) == canonical_form(*f2, p2)


@given(st.sampled_from(FIELD_NAMES[:-1]), st.integers(0, 6), st.sampled_from(["\n", "1:", "\n0:\n", "12:", ":"]))
def test_moving_a_boundary_marker_between_neighbours_changes_the_bytes(name, where, marker):
    idx = FIELD_NAMES.index(name)
    values = list(FIELD_NAMES)
    shifted = list(values)
    shifted[idx] = values[idx][:where] + marker
    shifted[idx + 1] = values[idx][where:] + values[idx + 1]
    assert canonical_form(*values, []) != canonical_form(*shifted, [])


# ---- compatibility with lifeline-context 0.6.1 ------------------------------------
def seed_cases() -> list:
    return json.loads(SEED_FILE.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", seed_cases(), ids=lambda c: c["name"])
def test_ids_equal_lifeline_context_ids(case):
    f = case["fields"]
    assert (
        compute_id(f["kind"], f["author"], f["agent"], f["provider"], f["model"], f["summary"], f["body"], f["parents"])
        == case["id"]
    )
    try:
        entry = new_entry(**f)
    except InputError:
        return  # the seed accepts it, we refuse it at write time; the hash still agrees
    assert entry.id == case["id"]
    assert Entry.from_json(entry.to_json()).id == case["id"]


def test_seed_fixture_covers_every_kind_as_a_valid_entry():
    kinds = set()
    for case in seed_cases():
        try:
            kinds.add(new_entry(**case["fields"]).kind)
        except InputError:
            pass
    assert kinds == set(KINDS)


def test_seed_fixture_matches_a_live_lifeline_context():
    """Regenerates the fixture with a live seed and compares.

    LIFELINE_SEED_PYTHON must name the interpreter of a venv with lifeline-context 0.6.1;
    the test is skipped when it is not set.
    """
    seed = os.environ.get("LIFELINE_SEED_PYTHON")
    if not seed:
        pytest.skip("LIFELINE_SEED_PYTHON is not set (a venv with lifeline-context 0.6.1)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([seed, str(DATA / "make_seed_ids.py"), "--stdout"], capture_output=True, env=env, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"the seed interpreter failed: {proc.stderr.decode('utf-8', 'replace')[-1000:]}")
    live = json.loads(proc.stdout.decode("utf-8"))
    assert live == json.loads(SEED_FILE.read_text(encoding="utf-8"))
