"""Import from and export to lifeline-context 0.6.1 (issue 6).

The fixtures in tests/data/seed/ were written by the real lifeline-context
(tests/data/make_seed_fixtures.py); the tests marked `needs_seed` run the real tool
again, here, when LIFELINE_SEED_PYTHON is set (CI sets it).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kit.home import git_env  # noqa: F401
from kit.repos import line_ids, object_count, open_ledger, ref  # noqa: F401
from kit.run import cli, git
from kit.seed import SEED, assert_nothing_written, imp, needs_seed, repo, seed_cli, seed_ids, seed_rows, seed_session  # noqa: F401
from kit.terminal import on_a_terminal

from git_lifeline.app import interop


def _as_utc(text: str) -> datetime:
    ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)


def _assert_same_ledger(repo: Path, rows: list, line: str = "main") -> None:
    entries = {e.id: e for e in open_ledger(repo, line).entries()}
    assert set(entries) == {r["id"] for r in rows}
    for r in rows:
        e = entries[r["id"]]
        assert e.parents == sorted(r["parents"])
        assert e.ts == _as_utc(r["ts"])
        assert e.kind == r["kind"] and e.summary == r["summary"]


# ---- import: every id, parent and timestamp ---------------------------------------------
def test_seed_markdown_imports_with_every_recorded_id_parent_and_ts(repo):
    imp(repo, SEED / "research.db", "research")
    out = cli(repo, "import", "--from", str(SEED / "LIFELINE.md"))
    assert out.code == 0, out.err
    assert "27 added" in out.out and "anchored in other lines: research" in out.out
    _assert_same_ledger(repo, seed_ids()["ledger"])
    assert cli(repo, "verify").code == 0


def test_seed_db_imports_with_every_id_parent_and_ts_and_keeps_order(repo):
    imp(repo, SEED / "research.db", "research")
    out = cli(repo, "import", "--from", str(SEED / "ledger.db"), "--json")
    assert out.code == 0, out.err
    report = json.loads(out.out)
    assert report["added"] == 27 and report["mismatched"] == [] and report["reordered"] == 0
    rows = seed_ids()["ledger"]
    _assert_same_ledger(repo, rows)
    # the seed's order (seq) is the (ts, id) order git-lifeline shows
    assert line_ids(repo) == [r["id"] for r in rows]
    body = {e.summary: e.body for e in open_ledger(repo).entries()}["CRLF bodies keep their bytes"]
    assert "\r\n" in body


def test_legacy_heading_only_markdown_gets_the_ids_the_seed_gives_it(repo):
    out = cli(repo, "import", "--from", str(SEED / "LIFELINE.legacy.md"))
    assert out.code == 0, out.err
    assert "legacy markdown" in out.out
    _assert_same_ledger(repo, seed_ids()["legacy_md_migrated"])


def test_importing_twice_adds_nothing(repo):
    imp(repo, SEED / "research.db", "research")
    assert imp(repo, SEED / "ledger.db").added == 27
    head = ref(repo, "refs/lifeline/main")
    again = cli(repo, "import", "--from", str(SEED / "LIFELINE.md"))  # same ledger, other format
    assert again.code == 0 and "0 added, 27 already present" in again.out
    assert ref(repo, "refs/lifeline/main") == head
    assert not list((repo / ".git" / "lifeline").glob("import-*"))


# ---- mismatches: listed and skipped, or --strict aborts ----------------------------------
def _tampered_copy(tmp_path: Path) -> tuple:
    text = (SEED / "LIFELINE.md").read_text(encoding="utf-8")
    rows = seed_ids()["ledger"]
    victim = next(r for r in rows if r["summary"] == "Logs: JSON lines")
    text = text.replace("- **summary**: Logs: JSON lines", "- **summary**: Logs: XML files", 1)
    path = tmp_path / "tampered.md"
    path.write_text(text, encoding="utf-8", newline="")
    return path, victim


def test_import_never_silently_rewrites_a_mismatched_id(repo, tmp_path):
    imp(repo, SEED / "research.db", "research")
    path, victim = _tampered_copy(tmp_path)
    out = cli(repo, "import", "--from", str(path))
    assert out.code == 1, out.err
    assert f"recorded id {victim['id'][:8]}" in out.err and "Logs: XML files" in out.err
    ids = set(line_ids(repo))
    assert victim["id"] not in ids
    assert not any(e.summary == "Logs: XML files" for e in open_ledger(repo).entries())  # no rewritten id either
    # entries that name the skipped one as parent are skipped too, and listed
    children = [r for r in seed_ids()["ledger"] if victim["id"] in r["parents"]]
    assert children and all(c["id"] not in ids for c in children)
    assert "was skipped" in out.err
    assert cli(repo, "verify").code == 0


def test_strict_import_with_one_mismatch_writes_nothing(repo, tmp_path):
    path, victim = _tampered_copy(tmp_path)
    before = object_count(repo)
    out = cli(repo, "import", "--from", str(path), "--strict")
    assert out.code == 2
    assert "--strict: nothing was written" in out.err and "Traceback" not in out.err
    assert_nothing_written(repo, before)


# ---- files the seed itself mangles ------------------------------------------------------
@pytest.mark.parametrize(
    "name, needle",
    [
        ("bad_empty_summary.md", "summary is empty"),
        ("bad_summary_newline.md", "'of summary' among its fields"),
        ("bad_body_sentinel.md", "body contains the end sentinel"),
        ("bad_empty_summary.db", "summary is empty"),
        ("bad_summary_newline.db", "summary contains a line break"),
    ],
)
def test_files_the_seed_mangles_are_refused_by_name_and_nothing_is_written(repo, name, needle):
    ids = seed_ids()[name.rsplit(".", 1)[0]]
    bad = ids[1]  # the second entry of each of these ledgers is the bad one
    # the seed itself does not get this entry back from its own markdown
    if name.endswith(".md"):
        assert [r["id"] for r in seed_ids()[name[:-3] + "_md_migrated"]][1] != bad["id"]
    before = object_count(repo)
    out = cli(repo, "import", "--from", str(SEED / name))
    assert out.code == 2
    assert needle in out.err and bad["id"][:8] in out.err and "nothing was written" in out.err
    assert "Traceback" not in out.err
    assert_nothing_written(repo, before)


def test_body_with_the_seed_sentinel_survives_from_db_but_export_refuses_it(repo):
    imp(repo, SEED / "bad_body_sentinel.db")
    bad = seed_ids()["bad_body_sentinel"][1]
    assert "<!-- lifeline:end -->" in open_ledger(repo).show(bad["id"]).body
    out = cli(repo, "export", "--format", "lifeline-md", "-o", "out.md")
    assert out.code == 2 and bad["id"][:8] in out.err
    assert not (repo / "out.md").exists()


# ---- bad input ----------------------------------------------------------------------------
@pytest.mark.parametrize("content", [None, "just some notes\n", b"SQLite format 3\x00garbage"])
def test_import_of_something_else_is_a_clear_error(repo, tmp_path, content):
    path = tmp_path / "input"
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content + b"\x00" * 200)
    before = object_count(repo)
    out = cli(repo, "import", "--from", str(path))
    assert out.code == 2 and out.err.startswith("git-lifeline: ")
    assert "Traceback" not in out.err
    assert_nothing_written(repo, before)


def test_naive_timestamps_are_refused_unless_assume_utc(repo, tmp_path):
    text = (SEED / "LIFELINE.legacy.md").read_text(encoding="utf-8")
    naive = text.replace("Z —", " —")
    path = tmp_path / "naive.md"
    path.write_text(naive, encoding="utf-8")
    out = cli(repo, "import", "--from", str(path))
    assert out.code == 2 and "no UTC offset" in out.err
    assert cli(repo, "import", "--from", str(path), "--assume-utc").code == 0
    _assert_same_ledger(repo, seed_ids()["legacy_md_migrated"])


def test_a_parent_found_nowhere_is_refused_with_a_hint(repo):
    before = object_count(repo)
    out = cli(repo, "import", "--from", str(SEED / "ledger.db"))  # its research parent is not here yet
    assert out.code == 2 and "import the line that holds it first" in out.err
    assert_nothing_written(repo, before)


# ---- export, with our import and with the real seed ---------------------------------------
def test_export_then_import_gives_the_same_ids(repo):
    imp(repo, SEED / "research.db", "research")
    imp(repo, SEED / "ledger.db")
    out = cli(repo, "export", "--format", "lifeline-md", "-o", "exported.md")
    assert out.code == 0, out.err
    imp(repo, repo / "exported.md", "copy")
    assert line_ids(repo, "copy") == line_ids(repo, "main")


@needs_seed
def test_export_is_migrated_by_the_real_seed_with_identical_ids(repo, tmp_path):
    imp(repo, SEED / "research.db", "research")
    imp(repo, SEED / "ledger.db")
    (tmp_path / "LIFELINE.md").write_text(interop.export_seed(open_ledger(repo)), encoding="utf-8", newline="")
    seed_dir = tmp_path / "seedproj"
    seed_dir.mkdir()
    seed_cli(seed_dir, "migrate", "--strict", "--from", str(tmp_path / "LIFELINE.md"))
    rows = seed_rows(seed_dir / ".lifeline" / "ledger.db")
    ours = {e.id: e for e in open_ledger(repo).entries()}
    assert [r["id"] for r in rows] == list(ours)
    for r in rows:
        assert _as_utc(r["ts"]) == ours[r["id"]].ts and sorted(r["parents"]) == ours[r["id"]].parents


@needs_seed
def test_a_ledger_the_real_seed_writes_now_imports_with_identical_ids(repo, tmp_path):
    proj = tmp_path / "seedproj"
    proj.mkdir()
    seed_session(
        proj,
        ["log", "--kind", "bootstrap", "--summary", "Live seed project", "--body", "Why: interop."],
        [
            "log",
            "--kind",
            "decision",
            "--summary",
            "Queue: RabbitMQ — ça marche 🐇",
            "--body",
            "Line one\nLine two\n\n### #0009 — fake heading\n---",
        ],
        ["checkpoint", "--thread", "ops", "--next", "load test", "--tried", "a single broker"],
        ["log", "--kind", "note", "--summary", "Tabs and CRLF", "--body", "a\r\nb\tc"],
        ["rebuild"],
    )
    rows = seed_rows(proj / ".lifeline" / "ledger.db")
    assert cli(repo, "import", "--from", str(proj / "LIFELINE.md")).code == 0
    assert line_ids(repo) == [r["id"] for r in rows]
    out = cli(repo, "import", "--from", str(proj / ".lifeline" / "ledger.db"))
    assert out.code == 0 and "0 added, 4 already present" in out.out, out.err


# ---- bulk ------------------------------------------------------------------------------------
def _synthetic_seed_file(path: Path, n: int) -> list:
    from git_lifeline.core.entry import new_entry
    from git_lifeline.core.seed import render_seed_markdown

    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    entries, prev = [], None
    for i in range(n):
        e = new_entry(
            kind="note" if i % 7 else "decision",
            author="Bulk <bulk@example.com>",
            summary=f"Entry {i}: something was decided",
            body=f"Because of reason {i}.\nSecond line.",
            parents=[prev] if prev else [],
            ts=t0 + timedelta(seconds=i),
        )
        entries.append(e)
        prev = e.id
    path.write_text(render_seed_markdown(entries, "bulk"), encoding="utf-8", newline="")
    return entries


def test_a_10000_entry_import_is_one_commit(repo, tmp_path):
    entries = _synthetic_seed_file(tmp_path / "big.md", 10_000)
    t = time.perf_counter()
    out = cli(repo, "import", "--from", str(tmp_path / "big.md"))
    elapsed = time.perf_counter() - t
    assert out.code == 0, out.err
    assert "10000 added" in out.out
    commits = git(repo, "rev-list", "--count", "refs/lifeline/main")
    assert commits == "1"
    assert line_ids(repo) == [e.id for e in entries]
    assert elapsed < 30  # ~1-3 s here; generous for a loaded CI machine
    loose = git(repo, "count-objects")
    assert int(loose.split()[0]) < 100  # written as a pack, not 20,000 loose objects


def test_progress_is_reported_while_checking_and_writing(repo, tmp_path):
    _synthetic_seed_file(tmp_path / "mid.md", 2500)
    seen = []
    interop.import_from(
        open_ledger(repo), tmp_path / "mid.md", progress=lambda stage, done, total: seen.append((stage, done, total))
    )
    assert ("checking", 2500, 2500) in seen and ("writing", 2500, 2500) in seen


# ---- the model's fast validation path agrees with the character scan ----------------------
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFF, blacklist_categories=()), max_size=12))
def test_fast_validation_flags_exactly_what_the_character_scan_flags(text):
    import unicodedata

    from git_lifeline.core import blocks, content_rules

    def slow_single(value):
        for ch in value:
            if ch in blocks.LINE_BREAKS:
                return "contains a line break"
            cat = unicodedata.category(ch)
            if cat == "Cc":
                return f"contains control character U+{ord(ch):04X}"
            if cat == "Cs":
                return "contains an unpaired surrogate (not valid UTF-8)"
        return "has leading or trailing whitespace" if value != value.strip() else None

    def slow_body(value):
        for ch in value:
            cat = unicodedata.category(ch)
            if cat == "Cc" and ch not in "\t\n\r":
                return f"contains control character U+{ord(ch):04X}"
            if cat == "Cs":
                return "contains an unpaired surrogate (not valid UTF-8)"
        return None

    for value in (text, text + "\ud800", "a" + text + "b"):
        assert content_rules._bad_single_line(value) == slow_single(value)
        assert content_rules._bad_body(value) == slow_body(value)


def test_progress_bar_is_drawn_on_a_terminal_and_not_in_a_pipe(repo, tmp_path):
    _synthetic_seed_file(tmp_path / "mid.md", 2500)
    code, drawn = on_a_terminal(repo, "import", "--from", str(tmp_path / "mid.md"), env={}, stdout_piped=True)
    assert code == 0
    assert "checking" in drawn and "writing" in drawn and "100%" in drawn
    piped = cli(repo, "import", "--from", str(tmp_path / "mid.md"))
    assert "checking" not in piped.err and "%" not in piped.err
