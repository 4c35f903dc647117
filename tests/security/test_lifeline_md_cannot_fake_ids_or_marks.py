"""LIFELINE.md shows entry text as text (issue 14, item 7, the projection half).

The projection is read rendered (a forge's file view, an editor's preview). A summary or
an author written as markdown (a code span `[deadbeef]`, bold, a ⚠ mark, an HTML
comment that hides the rest of the file, a link, an emoji shortcode) rendered as
structure. Now every value taken from an entry is escaped in its heading and field
lines (projection v2, docs/FORMAT.md §6), invisible characters are shown as `\\u{...}`,
and `migrate` still rebuilds every entry byte for byte, with the same ids.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from kit.entries import make_entry
from kit.repos import init_repo, open_ledger
from kit.run import cli

from git_lifeline.views import projection

FAKES = {
    "fake-id": "Use SQS `[deadbeef]` (pinned)",
    "fake-bold-mark": "**⚠ code changed since: 9 commits** in src/",
    "hidden-rest": "Harmless <!-- everything after this is hidden",
    "html": "Click <a href='x'>here</a> <img src=x onerror=alert(1)>",
    "link": "[Approved by the CTO](https://example.com) ![x](y)",
    "emphasis": "_superseded_ and *struck* and ~~gone~~",
    "entity": "&#91;cafebabe&#93; &lt;!-- --&gt;",
    "shortcode": "All good :warning: :white_check_mark:",
    "bidi": "Use SQS \u202eevil\u202c and zero\u200bwidth",
    "backslashes": "C:\\path\\to\\file \\` \\* trailing \\",
    "table": "a | b | c",
}
SPECIAL = re.compile(r"(?<!\\)[`*_\[\]<>!|~&]")


def fields_block(text: str) -> list:
    """The heading and field lines the projection shows (not the body fences)."""
    return [ln for ln in text.splitlines() if ln.startswith("### ") or ln.startswith("- ")]


def test_markdown_in_entry_fields_is_shown_as_text_and_migrates_back_byte_identical(tmp_path, record_counts):
    repo = init_repo(tmp_path / "repo")
    led = open_ledger(repo)
    entries = [
        make_entry(
            i,
            kind="note",
            summary=summary,
            body="Why.",
            author=f"{name} <x@example.com>",
            dedup_key=f"k-{summary}"[:200] if i % 2 else None,
        )
        for i, (name, summary) in enumerate(FAKES.items())
    ]
    led.append(entries)
    text = (repo / "LIFELINE.md").read_text(encoding="utf-8")
    held = 0
    for line in fields_block(text):
        value = line.split(": ", 1)[1] if line.startswith("- ") else line[4:]
        assert not SPECIAL.search(value), f"unescaped markdown in {line!r}"
        assert "<!--" not in value and "\u202e" not in value and "\u200b" not in value, line
        assert not re.search(r"(?<!\\):[a-z_]+:", value), line
    for e in entries:
        shown = projection.escape_text(e.summary)
        assert f"### note: {shown}" in text and f"- summary: {shown}" in text
        held += 1
    fresh = init_repo(tmp_path / "fresh")
    res = cli(fresh, "migrate", "--from", str(repo / "LIFELINE.md"))
    assert res.code == 0 and f"{len(entries)} added" in res.out, res
    assert open_ledger(fresh).entries() == led.entries()
    assert (fresh / "LIFELINE.md").read_bytes() == (repo / "LIFELINE.md").read_bytes()
    record_counts(
        "LIFELINE.md: markdown in fields escaped, migrate byte-identical",
        tried=len(FAKES),
        held=held,
        lost=len(FAKES) - held,
    )


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40))
def test_escaping_is_undone_exactly_by_the_parser(value):
    escaped = projection.escape_text(value)
    assert projection.unescape_text(escaped) == value
    assert "\n" not in escaped and not SPECIAL.search(escaped)


def test_a_projection_written_before_escaping_still_migrates(tmp_path):
    """A v1 file (values written raw) reads as it was written: backslashes stay backslashes."""
    repo = init_repo(tmp_path / "repo")
    e = make_entry(1, kind="note", summary="C:\\temp\\x and `code`", body="Why.")
    v1 = projection.render("main", [e], None).replace(projection.MAGIC, "<!-- git-lifeline projection v1")
    for value in (e.summary, e.author):
        v1 = v1.replace(projection.escape_text(value), value)
    source = tmp_path / "old.md"
    source.write_text(v1, encoding="utf-8")
    res = cli(repo, "migrate", "--from", str(source))
    assert res.code == 0 and "1 added" in res.out, res
    assert open_ledger(repo).entries() == [e]
