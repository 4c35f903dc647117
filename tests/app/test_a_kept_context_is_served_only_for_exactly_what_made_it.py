"""The warm `context` keeps its finished answers (`<line>.context`, views/context_kept.py) so
that the next warm call reads one small file instead of the whole fold: at 100k entries a
warm `context` rendered for ~0.9 s CPU. A kept answer must be the normal path's bytes for
its ask, and must never be served for anything else: another head, budget, format, code
view, time past a validity window's bound, code, or a file that is not whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kit.entries import make_entry
from kit.repos import commit_file, open_ledger
from kit.warm import (
    build,
    click_only,
    code_path_ledger,
    edit_cache_keeping_its_stamp,
    entry_point,
)

from git_lifeline.app.warm_context import warm_context
from git_lifeline.views import cache_warm, context_kept

ASKS = [
    ("context",),
    ("context", "--budget", "600"),
    ("context", "--budget-tokens", "150"),
    ("context", "--format", "anthropic"),
    ("context", "--format", "gemini", "--budget", "900"),
]


def kept_path(repo: Path) -> Path:
    return repo / ".git" / "lifeline" / "main.context"


@pytest.fixture
def twins(tmp_path) -> tuple:
    return build(tmp_path / "a" / "repo"), build(tmp_path / "b" / "repo")


def test_every_kept_answer_is_the_normal_paths_bytes_for_its_own_ask(tmp_path):
    repo = build(tmp_path / "repo")
    for _ in range(2):  # made and kept, then read back beside the other asks' answers
        for args in ASKS:
            fast, slow = entry_point(repo, *args), click_only(repo, *args)
            assert fast.warm and fast.same_as(slow), args
    assert kept_path(repo).is_file()


def test_a_second_warm_context_is_answered_without_reading_the_fold(tmp_path, monkeypatch):
    repo = build(tmp_path / "repo")
    kept_path(repo).unlink()  # what the normal path kept: the warm path renders and keeps its own
    first = warm_context(None, None, None, "generic", str(repo), {})
    assert first is not None and "Which queue to use" in first
    monkeypatch.setattr(cache_warm.Opened, "warm", no_fold)
    assert warm_context(None, None, None, "generic", str(repo), {}) == first


def test_the_warm_context_after_the_normal_path_reads_what_it_kept(tmp_path, monkeypatch):
    # after a `log`, the `context` that brings the cache to the new head is the normal path's:
    # the next one must not render the whole line again
    repo = build(tmp_path / "repo")
    open_ledger(repo).append([make_entry(9, summary="Appended after the first context")])
    for args in (("context",), ("context", "--format", "openai")):
        slow = click_only(repo, *args)
        assert b"Appended after the first context" in slow.out
        monkeypatch.setattr(cache_warm.Opened, "warm", no_fold)
        fmt = args[-1] if len(args) > 1 else "generic"
        assert warm_context(None, None, None, fmt, str(repo), {}) == slow.out.decode()
        monkeypatch.undo()


def no_fold(self: cache_warm.Opened) -> cache_warm.Warm:
    raise AssertionError("the fold was read for an answer that was kept")


def test_a_head_that_moved_after_an_answer_was_kept_shows_the_new_entry(twins):
    assert entry_point(twins[0], "context").warm and kept_path(twins[0]).is_file()
    for repo in twins:
        open_ledger(repo).store.append(
            [make_entry(7, summary="A decision made after the answer was kept")], lambda new: "lifeline: add 1 entry"
        )
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"A decision made after the answer was kept" in fast.out


def test_a_damaged_row_a_kept_answer_shows_sends_it_the_normal_way(twins):
    for repo in twins:
        assert entry_point(repo, "context").warm and kept_path(repo).is_file()
    edit_cache_keeping_its_stamp(
        twins, "UPDATE entries SET json=replace(json, 'Decision number 5', 'Decision number X')"
    )
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"did not match the ledger" in fast.err


@pytest.mark.parametrize("damage", ["text", "torn", "garbage", "symlink", "fifo"])
def test_a_kept_file_that_is_not_whole_is_never_served(tmp_path, damage):
    repo = build(tmp_path / "repo")
    want = click_only(repo, "context")
    assert entry_point(repo, "context").same_as(want)
    path = kept_path(repo)
    data = path.read_bytes()
    if damage == "text":  # the answer edited, the JSON still whole
        path.write_bytes(data.replace(b"Which queue to use", b"Which queue to lose"))
    elif damage == "torn":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a kept context\n")
    elif damage == "symlink":
        other = repo.parent / "kept"
        other.write_bytes(data.replace(b"Which queue to use", b"Which queue to lose"))
        path.unlink()
        path.symlink_to(other)
    else:
        path.unlink()
        os.mkfifo(path)
    fast = entry_point(repo, "context")
    assert fast.same_as(want) and b"Which queue to use" in fast.out


def test_a_code_commit_after_a_kept_answer_shows_the_new_staleness(tmp_path):
    twins = [code_path_ledger(tmp_path / name / "repo") for name in ("a", "b")]
    assert entry_point(twins[0], "context").warm and kept_path(twins[0]).is_file()
    for repo in twins:
        commit_file(repo, "src/more.py", "x = 1\n" * 40)
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"41 lines changed" in fast.out


def test_a_kept_answer_holds_only_strictly_between_the_window_bounds_around_it(tmp_path):
    base = context_kept.Base("main", "a" * 40, None, "b" * 40, "c" * 64)
    ask = context_kept.Ask(16000, None, None)
    path = tmp_path / "main.context"
    context_kept.keep(
        path, base, ask, context_kept.Kept("text\n", "", [], None, ("2026-01-01T00:00:00", "2026-02-01T00:00:00"))
    )
    assert context_kept.find(path, base, ask, "2026-01-15T00:00:00.000000") is not None
    for now in ("2025-12-31T23:59:59.999999", "2026-01-01T00:00:00", "2026-02-01T00:00:00", "2026-03-01T00:00:00"):
        assert context_kept.find(path, base, ask, now) is None, now
    other_ask = context_kept.Ask(600, None, None)
    assert context_kept.find(path, base, other_ask, "2026-01-15T00:00:00.000000") is None
    other_base = context_kept.Base("main", "a" * 40, "d" * 40, "b" * 40, "c" * 64)  # a review since
    assert context_kept.find(path, other_base, ask, "2026-01-15T00:00:00.000000") is None


def test_a_decision_whose_window_closes_bounds_the_answer_made_before(tmp_path):
    repo = build(tmp_path / "repo")
    open_ledger(repo).append(
        [
            make_entry(20, body="valid-until: 2020-01-01\n\nRetired long ago."),
            make_entry(21, body="valid-from: 2999-01-01\n\nNot yet."),
        ]
    )
    led = open_ledger(repo)
    window = context_kept.window_of(led.state())
    assert window == ("2020-01-01T23:59:59.999999", "2999-01-01T00:00:00.000000")


def test_an_answer_made_by_other_code_is_not_served(tmp_path, monkeypatch):
    base = context_kept.Base("main", "a" * 40, None, "b" * 40, "c" * 64)
    ask = context_kept.Ask(None, 150, "estimate")
    path = tmp_path / "main.context"
    context_kept.keep(path, base, ask, context_kept.Kept("text\n", "", [], None, (None, None)))
    assert context_kept.find(path, base, ask, "2026-01-01T00:00:00") is not None
    monkeypatch.setattr(context_kept, "fingerprint", lambda: "another release")
    assert context_kept.find(path, base, ask, "2026-01-01T00:00:00") is None


def test_an_answer_kept_already_is_not_written_again(tmp_path):
    # every MCP call and hook answers through the normal path: each rewrote the file
    base = context_kept.Base("main", "a" * 40, None, "b" * 40, "c" * 64)
    ask = context_kept.Ask(16000, None, None)
    path = tmp_path / "main.context"
    answer = context_kept.Kept("text\n", "", [], None, (None, None))
    context_kept.keep(path, base, ask, answer)
    first = path.stat().st_ino
    context_kept.keep(path, base, ask, answer)
    assert path.stat().st_ino == first
    context_kept.keep(path, base, ask, context_kept.Kept("other\n", "", [], None, (None, None)))
    assert path.stat().st_ino != first and context_kept.find(path, base, ask, "2026-01-01") is not None


def test_the_normal_path_answers_from_a_kept_answer_without_reading_the_fold(tmp_path, monkeypatch):
    # every MCP call and hook answers through Ledger.context: each read the whole fold again
    from git_lifeline.views.cache import LineCache

    repo = build(tmp_path / "repo")
    first = open_ledger(repo).context()
    assert "Which queue to use" in first.text

    def no_state(self: LineCache, commit_id: object) -> None:
        raise AssertionError("the fold was read for an answer that was kept")

    monkeypatch.setattr(LineCache, "state", no_state)
    again = open_ledger(repo).context()
    assert (again.stable, again.volatile) == (first.stable, first.volatile)
    monkeypatch.undo()
    open_ledger(repo).append([make_entry(10, summary="After the kept answer")])
    assert "After the kept answer" in open_ledger(repo).context().text
