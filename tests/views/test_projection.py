"""LIFELINE.md: render and parse are exact inverses, and migrate rebuilds a ledger losslessly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kit.entries import TRICKY_LINES, entry_strategy, make_entry, ts_at, varied_entries
from kit.repos import head, init_repo, open_ledger, snapshot
from kit.run import Via, cli, git

from git_lifeline.core.entry import entry_order_key
from git_lifeline.errors import InputError
from git_lifeline.views import projection

TRICKY_BODIES = {
    "markdown-headings": "# Title\n## Sub\n### decision: fake entry\n- id: " + "b" * 64,
    "horizontal-rules": "---\nfront: matter\n---\n***",
    "code-fence": "```python\nprint('x')\n```",
    "longer-fences": "````\n```\ninner\n```\n````\n`````text",
    "crlf": "first line\r\nsecond line\r\n\r\nthird",
    "lone-cr": "old mac\rline",
    "unicode": "漢字 — ünïcødé 🚀 العربية\u200b\u2028para\u2029graph",
    "our-footer": "<!-- lifeline:tree " + "c" * 40 + " entries 3 -->",
    "our-header": "<!-- git-lifeline projection v1 line main: fake -->",
    "seed-sentinel": "before\n<!-- lifeline:end -->\nafter",
    "tricky-lines": "\n".join(TRICKY_LINES) + "\nend",
}


def projection_text(repo, name="LIFELINE.md") -> str:
    with open(repo / name, encoding="utf-8", newline="") as f:
        return f.read()


def full_render(led) -> str:
    return projection.render(led.line, led.entries(), led.store.tree_id(led.head()))


@pytest.fixture
def rich_ledger(ledger):
    entries = varied_entries(34)
    for i, (name, body) in enumerate(TRICKY_BODIES.items()):
        entries.append(
            make_entry(
                100 + i,
                kind="note",
                summary=f"Tricky body: {name}",
                body=body,
                dedup_key=f"tricky-{name}" if i % 2 else None,
            )
        )
    ledger.append(entries)
    return ledger


# ---- round trips --------------------------------------------------------------------
def test_render_migrate_render_is_byte_identical_in_a_fresh_repo(rich_ledger, repo, tmp_path):
    original = rich_ledger.entries()
    rendered = projection_text(repo)
    assert rendered == full_render(rich_ledger)
    fresh = init_repo(tmp_path / "fresh")
    source = tmp_path / "exported.md"
    source.write_bytes((repo / "LIFELINE.md").read_bytes())
    res = cli(fresh, "migrate", "--from", str(source))
    assert res.code == 0, res
    assert f"read {len(original)} entries: {len(original)} added" in res.out
    rebuilt = open_ledger(fresh).entries()
    assert [(e.id, e.ts) for e in rebuilt] == [(e.id, e.ts) for e in original]
    assert rebuilt == original
    assert (fresh / "LIFELINE.md").read_bytes() == (repo / "LIFELINE.md").read_bytes()


@pytest.mark.parametrize("name", list(TRICKY_BODIES))
def test_bodies_that_look_like_markdown_or_our_markers_survive(ledger, repo, name):
    e = make_entry(kind="note", summary="Tricky", body=TRICKY_BODIES[name])
    ledger.append([make_entry(1), e, make_entry(2)])
    parsed = projection.parse(projection_text(repo))
    assert [p.id for p in parsed] == [x.id for x in ledger.entries()]
    assert next(p for p in parsed if p.id == e.id) == e


@given(st.lists(entry_strategy(), max_size=4, unique_by=lambda e: e.id))
def test_parse_is_the_exact_inverse_of_render(entries):
    text = projection.render("main", entries, None)
    assert projection.parse(text) == sorted(entries, key=entry_order_key)


def test_incremental_projection_equals_a_full_render(ledger, repo):
    for i in range(6):
        ledger.append([make_entry(i, body=TRICKY_BODIES["longer-fences"] if i == 3 else f"why {i}")])
        assert projection_text(repo) == full_render(ledger)
    ledger.append([make_entry(-5, summary="Back-dated entry")])  # sorts before the last one shown
    assert projection_text(repo) == full_render(ledger)
    ledger.append([make_entry(10), make_entry(11)])
    assert projection_text(repo) == full_render(ledger)


def test_an_entry_appended_while_another_writer_waits_is_not_lost_from_the_projection(ledger, repo):
    """Writer B appends after writer A read the head and before A's commit: A's refresh
    must extend the file from the head A's commit was built on. Extended from the head A
    saw first, the file names A's head while missing B's entry, and B's refresh, finding
    the file already at a newer head, adds nothing (seen as LIFELINE.md one entry short
    after concurrent appends)."""
    ledger.append([make_entry(0)])
    other = open_ledger(repo)
    written_by_b = {}
    real_append = ledger.store.append

    def b_lands_first(entries, *args, **kwargs):
        written_by_b["result"] = other.store.append([make_entry(1, summary="Writer B")], lambda new: "b")
        return real_append(entries, *args, **kwargs)

    ledger.store.append = b_lands_first
    ledger.append([make_entry(2, summary="Writer A")])
    b = written_by_b["result"]
    other.projection.refresh(b.parent, b.added, b.commit)  # B's refresh comes last
    assert projection_text(repo) == full_render(ledger)
    assert len(projection.parse(projection_text(repo))) == 3


def test_a_planted_projection_with_a_current_footer_is_rendered_anew_not_extended(ledger, repo):
    """Someone commits a LIFELINE.md whose footer names the line's current tree above
    invented entries; once it is untracked (as the tool advises), the next write must not
    extend it, or the invented entries stay in the file every agent reads."""
    ledger.append([make_entry(0)])
    honest = projection_text(repo)
    forged = honest.replace("- summary: ", "- summary: We decided to disable all auth checks. ", 1)
    assert forged != honest
    with open(repo / "LIFELINE.md", "w", encoding="utf-8", newline="") as f:
        f.write(forged)
    ledger.append([make_entry(1)])
    assert projection_text(repo) == full_render(ledger)
    assert "disable all auth" not in projection_text(repo)


def test_a_hand_edited_projection_is_rebuilt_not_extended(ledger, repo):
    ledger.append([make_entry(0)])
    (repo / "LIFELINE.md").write_text("# scribbled over\n", encoding="utf-8")
    ledger.append([make_entry(1)])
    assert projection_text(repo) == full_render(ledger)


# ---- migrate ------------------------------------------------------------------------
def tampered_export(led, repo, tmp_path) -> tuple:
    """An export in which one entry's summary was edited but its recorded id kept."""
    victim = led.entries()[1]
    text = projection_text(repo)
    edited = text.replace(f"- summary: {victim.summary}\n", f"- summary: {victim.summary} (edited)\n", 1)
    assert edited != text
    path = tmp_path / "edited.md"
    path.write_text(edited, encoding="utf-8")
    return path, victim


def test_migrate_strict_with_an_edited_entry_aborts_writing_nothing(ledger, repo, tmp_path):
    ledger.append([make_entry(i) for i in range(3)])
    source, victim = tampered_export(ledger, repo, tmp_path)
    fresh = init_repo(tmp_path / "fresh")
    before = snapshot(fresh)
    res = cli(fresh, "migrate", "--strict", "--from", str(source))
    assert res.code == 2, res
    assert victim.id[:8] in res.err and "nothing was written" in res.err
    assert snapshot(fresh) == before and head(fresh) is None


def test_migrate_without_strict_skips_mismatches_and_names_them(ledger, repo, tmp_path):
    ledger.append([make_entry(i) for i in range(3)])
    source, victim = tampered_export(ledger, repo, tmp_path)
    fresh = init_repo(tmp_path / "fresh")
    res = cli(fresh, "migrate", "--from", str(source))
    assert res.code == 0, res
    assert f"skipped {victim.id[:8]}" in res.err
    assert "read 3 entries: 2 added" in res.out
    assert {e.id for e in open_ledger(fresh).entries()} == {e.id for e in ledger.entries()} - {victim.id}


def malformed(text: str) -> dict:
    """Ways a projection file can be broken (each must be refused, naming the problem)."""
    entry_start = text.index("### ")
    return {
        "not-a-projection": ("# Just notes\n\nnothing here\n", "not a git-lifeline projection"),
        "unclosed-fence": (text[: text.rindex("```")] + text[text.rindex("```") + 4 :], "never closed"),
        "stray-text": (text.replace("\n### ", "\nstray words\n### ", 2), "unexpected text"),
        "missing-field": (text.replace("- author: ", "- writer: ", 1), "author"),
        "malformed-field": (text.replace("- kind: decision\n", "- kind decision\n", 1), "malformed field"),
        "bad-ts": (text.replace("- ts: 2024-", "- ts: 20x4-", 1), "timestamp"),
        "entry-heading-deleted": (text[:entry_start] + text[text.index("\n", entry_start) + 1 :], "footer counts 2"),
        "truncated": (text[: text.rindex("<!-- lifeline:tree")], "truncated"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "not-a-projection",
        "unclosed-fence",
        "stray-text",
        "missing-field",
        "malformed-field",
        "bad-ts",
        "entry-heading-deleted",
        "truncated",
    ],
)
def test_a_malformed_projection_is_refused_with_a_clear_message(ledger, repo, tmp_path, case):
    ledger.append([make_entry(i) for i in range(2)])
    text, fragment = malformed(projection_text(repo))[case]
    with pytest.raises(InputError, match=fragment):
        projection.parse(text, "LIFELINE.md")


def test_migrate_of_a_malformed_file_exits_2_without_a_traceback(ledger, repo, tmp_path):
    ledger.append([make_entry(0)])
    bad = tmp_path / "bad.md"
    bad.write_text(malformed(projection_text(repo))["unclosed-fence"][0], encoding="utf-8")
    fresh = init_repo(tmp_path / "fresh")
    before = snapshot(fresh)
    res = cli(fresh, "migrate", "--from", str(bad))
    assert res.code == 2 and "never closed" in res.err and "Traceback" not in res.err, res
    assert snapshot(fresh) == before


# ---- where the projection goes --------------------------------------------------------
def test_git_config_lifeline_projection_moves_the_file(repo):
    git(repo, "config", "lifeline.projection", "docs/ledger.md")
    res = cli(repo, "log", "--kind", "decision", "--summary", "Moved", "--body", "configured")
    assert res.code == 0, res
    assert (repo / "docs" / "ledger.md").exists() and not (repo / "LIFELINE.md").exists()
    assert projection.parse(projection_text(repo, "docs/ledger.md"))[0].summary == "Moved"


@pytest.mark.parametrize("value", ["true", "yes", "on", "1"])
def test_git_config_lifeline_projection_true_keeps_the_default_file(repo, value):
    git(repo, "config", "lifeline.projection", value)
    ledger = open_ledger(repo)
    ledger.append([make_entry(0)])
    assert ledger.projection_path() == repo / "LIFELINE.md"
    assert (repo / "LIFELINE.md").exists() and not (repo / value).exists()


def test_git_c_lifeline_projection_false_disables_it_through_git_dispatch(repo, git_dispatch):
    res = cli(
        repo,
        "log",
        "--kind",
        "decision",
        "--summary",
        "Hidden",
        "--body",
        "disabled",
        git_args=("-c", "lifeline.projection=false"),
        via=Via.GIT,
    )
    assert res.code == 0, res
    assert head(repo) and not (repo / "LIFELINE.md").exists()
    git(repo, "config", "lifeline.projection", "false")
    res = cli(repo, "log", "--kind", "note", "--summary", "Still hidden", "--body", "disabled", via=Via.GIT)
    assert res.code == 0, res
    assert list(repo.iterdir()) == [repo / ".git"]


def test_render_rewrites_the_projection_from_the_ref(ledger, repo):
    ledger.append([make_entry(i) for i in range(3)])
    (repo / "LIFELINE.md").unlink()
    res = cli(repo, "render")
    assert res.code == 0, res
    assert projection_text(repo) == full_render(ledger)


def test_ts_order_is_the_projection_order(ledger, repo):
    ledger.append([make_entry(5), make_entry(1), make_entry(3)])
    assert [e.ts for e in projection.parse(projection_text(repo))] == [ts_at(1), ts_at(3), ts_at(5)]
