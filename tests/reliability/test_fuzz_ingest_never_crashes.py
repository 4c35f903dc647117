"""Fuzzing what the tool reads from people and files: the LIFELINE.md ingest and the body
blocks. No input crashes them (the only failure is a clear LifelineError), whatever they
accept is valid, and the round trip holds for every valid entry.

Examples per test: LIFELINE_FUZZ_EXAMPLES (200 by default, the CI budget; the long run of
docs/RELIABILITY.md sets 10000).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit.entries import TRICKY_LINES, entry_strategy

from git_lifeline.core import blocks
from git_lifeline.core.entry import Entry, entry_order_key
from git_lifeline.errors import LifelineError
from git_lifeline.views import projection

SLOW = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
RUN: dict = {}  # test name -> examples run (reported by the last test of the file)


def ran(name: str) -> None:
    RUN[name] = RUN.get(name, 0) + 1


any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=400)
line_text = st.one_of(
    st.sampled_from(
        TRICKY_LINES + ("### decision: x", "- id: ", "- kind: note", "```text", "<!-- lifeline:tree none entries 1 -->")
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
)


def parse_or_refuse(text: str):
    """Parse a projection; the only acceptable failure is a LifelineError with a message."""
    try:
        return projection.parse(text, "fuzz.md")
    except LifelineError as exc:
        assert str(exc)
        return None


# ---- LIFELINE.md ingest ------------------------------------------------------------------
@SLOW
@given(any_text)
def test_arbitrary_text_is_refused_clearly_or_parsed(text):
    ran("test_arbitrary_text_is_refused_clearly_or_parsed")
    parse_or_refuse(projection.MAGIC + " line main -->\n" + text)
    parse_or_refuse(text)


@st.composite
def mutated_projection(draw):
    entries = draw(st.lists(entry_strategy(), min_size=1, max_size=3, unique_by=lambda e: e.id))
    lines = projection.render("main", entries, None).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("delete", "insert", "replace", "duplicate", "truncate")))
        i = draw(st.integers(0, len(lines) - 1))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "insert":
            lines.insert(i, draw(line_text))
        elif op == "replace":
            lines[i] = draw(line_text)
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return entries, "\n".join(lines)


@SLOW
@given(mutated_projection())
def test_a_mangled_projection_is_refused_clearly_or_yields_only_valid_entries(case):
    ran("test_a_mangled_projection_is_refused_clearly_or_yields_only_valid_entries")
    _entries, text = case
    parsed = parse_or_refuse(text)
    for e in parsed or []:
        assert isinstance(e, Entry)
        # what the parser accepts is a valid entry, and it survives a blob round trip
        assert Entry.from_json(e.to_json()) == e


@given(st.lists(entry_strategy(), max_size=4, unique_by=lambda e: e.id))
def test_every_valid_entry_round_trips_through_the_projection_and_its_blob(entries):
    ran("test_every_valid_entry_round_trips_through_the_projection_and_its_blob")
    text = projection.render("main", entries, None)
    assert projection.parse(text) == sorted(entries, key=entry_order_key)
    for e in entries:
        assert Entry.from_json(e.to_json()) == e
        assert json.loads(e.to_json())["id"] == e.id == e.compute_id()


# ---- body blocks ---------------------------------------------------------------------------
@SLOW
@given(any_text)
def test_the_body_block_parsers_never_crash(text):
    ran("test_the_body_block_parsers_never_crash")
    fields = blocks.header_fields(text)
    assert set(fields) <= set(blocks.HEADER_KEYS)
    assert all(isinstance(v, str) and v == v.strip() and v for v in fields.values())
    blocks.strip_header(text)
    for items in blocks.list_blocks(text).values():
        assert all(isinstance(i, str) for i in items)


header_value = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs")), min_size=1, max_size=30)
item_text = (
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30)
    .map(str.strip)
    .filter(lambda s: s and not s.startswith("- ") and s != "-")
)


@given(st.dictionaries(st.sampled_from(blocks.HEADER_KEYS), header_value, max_size=4), any_text)
def test_rendered_header_fields_are_read_back(fields, prose):
    ran("test_rendered_header_fields_are_read_back")
    body = blocks.render_header(fields) + "\n" + prose
    assert blocks.header_fields(body) == fields
    assert blocks.strip_header(body) == blocks.strip_header("\n" + prose)


@given(
    st.dictionaries(
        st.sampled_from(blocks.CHECKPOINT_SECTIONS), st.lists(item_text, min_size=1, max_size=4), min_size=1
    )
)
def test_rendered_list_blocks_are_read_back(sections):
    ran("test_rendered_list_blocks_are_read_back")
    body = "".join(blocks.render_list_block(name, items) for name, items in sections.items())
    assert blocks.list_blocks(body) == sections


def test_zz_record_the_examples_run(record_counts):
    record_counts("fuzz", tried=sum(RUN.values()), held=sum(RUN.values()), lost=0, tests=len(RUN))
