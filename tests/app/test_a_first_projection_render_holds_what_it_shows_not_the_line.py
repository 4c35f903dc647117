"""The first render of LIFELINE.md (no file yet: a clone's first `log`, an import, `render`)
holds the entries it shows, not the line, and writes the bytes a render of the whole line
loaded would (issue 30: a million-entry line loaded whole took 2.3 GB for a 1 MiB file)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Union

import pytest
from kit.entries import make_entry, path_of, varied_entries
from kit.repos import init_repo, open_ledger
from kit.run import cli, git
from kit.tamper import add_commit, blob_bytes, tamper

from git_lifeline.app.draft import Draft
from git_lifeline.app.ledger import Ledger
from git_lifeline.core.entry import Entry
from git_lifeline.views import projection

BODY = "Because the reason runs long enough to weigh something. " * 6


def rendered_afresh(led: Ledger) -> str:
    (led.gr.workdir / "LIFELINE.md").unlink(missing_ok=True)
    led.render()
    return (led.gr.workdir / "LIFELINE.md").read_text(encoding="utf-8")


def whole_line_rendered(led: Ledger, cap: int) -> str:
    """What the file was before the first render stopped loading the line: every entry
    `load` accepts, rendered whole, then cut to the cap (`bound`, its own code path)."""
    head = led.store.head()
    whole = projection.render(led.line, led.store.load(head).entries.values(), led.store.tree_id(head))
    return projection.bound(whole, led.line, cap)


def peak_of_first_render(repo: Path, count: int) -> int:
    led = open_ledger(repo)
    led.append([make_entry(i, kind="note", body=f"{BODY}{i}") for i in range(count)])
    git(repo, "config", "lifeline.projectionMaxBytes", "6000")
    led = open_ledger(repo)
    (repo / "LIFELINE.md").unlink()
    tracemalloc.start()
    try:
        led.render()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_first_render_of_a_longer_line_takes_no_more_memory(tmp_path):
    short = peak_of_first_render(init_repo(tmp_path / "short"), 2400)
    long = peak_of_first_render(init_repo(tmp_path / "long"), 7200)
    # the same file (the newest ~10 entries) from 3x the entries: with the line loaded whole
    # the peak grew with it (3.2 MB -> 9.7 MB); what is left is git's pipe in flight (~1 MB)
    assert long < short * 1.5, (short, long)


def build_with_old_imports(ledger: Ledger) -> Entry:
    """A line whose commits do not come in time order: entries imported later with older
    timestamps, interleaved with the newest, ties in ts broken by id, bodies of every width.
    Returns one of the two entries that share a ts."""
    ledger.append(varied_entries(30))
    ledger.append([make_entry(200 + i, kind="note", body=BODY * (i % 4) + "why") for i in range(40)])
    # an import: older than most of the line, one commit later
    ledger.append([make_entry(5 + 3 * i, kind="decision", summary=f"Imported {i}", body=BODY) for i in range(25)])
    same = make_entry(300, kind="note", summary="Same time A")
    ledger.append([same, make_entry(300, kind="note", summary="Same time B")])  # the id decides
    ledger.append([make_entry(150 + i, kind="fix", summary=f"Late import {i}", body="x" * 900) for i in range(12)])
    return same


def plant_blobs_load_refuses(repo: Path, same: Entry) -> None:
    """Blobs the line holds that `load` refuses, at the newest ts (they must never be shown
    or counted), and one it takes though verify does not (content changed under its id)."""
    newest = make_entry(10_000, kind="note", summary="Would be the newest if it were readable")
    other = make_entry(10_001, kind="note", summary="Stored under another id's path")
    add_commit(
        repo,
        lambda files: {
            **files,
            f"entries/{path_of(newest.id)}": b'{"id": "' + newest.id.encode() + b'", "ts": ',  # not JSON
            f"entries/{path_of('f' * 64)}": blob_bytes(other),  # its id is not its path
        },
    )
    tamper(repo, same.id)


@pytest.fixture(params=["planted", "clean"])
def ledger_with_old_imports(request, ledger, repo):
    same = build_with_old_imports(ledger)
    if request.param == "planted":
        plant_blobs_load_refuses(repo, same)
    return open_ledger(repo)


@pytest.mark.parametrize("cached", [False, True], ids=["no cache", "cache at the head"])
@pytest.mark.parametrize("cap", [0, 1_500, 9_000, 30_000, 1 << 20])
def test_a_first_render_writes_the_bytes_of_the_whole_line_loaded(ledger_with_old_imports, repo, cap, cached):
    git(repo, "config", "lifeline.projectionMaxBytes", str(cap))
    led = open_ledger(repo)
    if cached:
        led.cache().ensure(led.head())
    text = rendered_afresh(led)
    assert text == whole_line_rendered(led, cap)
    assert "Would be the newest" not in text and "another id's path" not in text
    if cap == 0:
        assert len(projection.parse(text)) == len(led.store.load().entries) == 30 + 40 + 25 + 2 + 12


def test_a_first_render_after_old_entries_arrived_past_the_cache_writes_the_same_bytes(ledger, repo):
    build_with_old_imports(ledger)
    git(repo, "config", "lifeline.projectionMaxBytes", "9000")
    led = open_ledger(repo)
    led.cache().ensure(led.head())
    # imported after the cache was made: older than what the file shows, and newer
    led.append([make_entry(7 + 2 * i, kind="note", summary=f"Older import {i}") for i in range(9)])
    led.append([make_entry(400 + i, kind="note", summary=f"Newer import {i}") for i in range(3)])
    text = rendered_afresh(led)
    assert text == whole_line_rendered(led, 9000)
    assert "Newer import 2" in text and "Older import" not in text


class CountedParses:
    """Every blob the process parses into an Entry, counted (the one parse: core/entry)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.count = 0
        parse = Entry.from_json

        def counted(data: Union[bytes, str]) -> Entry:
            self.count += 1
            return parse(data)

        monkeypatch.setattr(Entry, "from_json", staticmethod(counted))


def test_a_first_render_with_the_cache_reads_only_the_entries_it_shows(ledger, repo, monkeypatch):
    ledger.append([make_entry(i, kind="note", body=f"{BODY}{i}") for i in range(3000)])
    git(repo, "config", "lifeline.projectionMaxBytes", "6000")
    led = open_ledger(repo)
    led.cache().ensure(led.head())
    parses = CountedParses(monkeypatch)
    text = rendered_afresh(led)
    shown = len(projection.parse(text))
    assert shown < 20 and projection.omitted(text) == 3000 - shown
    assert parses.count <= shown + 3, (parses.count, shown)  # was 3,000: the line loaded whole
    # the first `log` of a clone whose cache is one entry behind: that entry read too
    (repo / "LIFELINE.md").unlink()
    parses.count = 0
    led.log(Draft(kind="note", summary="The first note here", body="why"))
    text = (repo / "LIFELINE.md").read_text(encoding="utf-8")
    assert "The first note here" in text and projection.omitted(text) == 3001 - len(projection.parse(text))
    assert parses.count <= len(projection.parse(text)) + 3 + 5, parses.count  # +5: the log's own checks


def test_a_clis_first_log_with_a_cache_writes_the_whole_lines_bytes(ledger, repo):
    # a real process: the CLI restores SIGPIPE's default, so a git reader stopped while it
    # is fed would end it (the render reads a page of the cache's rows whole, then stops)
    build_with_old_imports(ledger)
    ledger.append([make_entry(500 + i, kind="note", body=f"{BODY}{i}") for i in range(200)])
    git(repo, "config", "lifeline.projectionMaxBytes", "20000")
    assert cli(repo, "context").code == 0
    (repo / "LIFELINE.md").unlink()
    assert cli(repo, "log", "--kind", "note", "--summary", "The first note here", "--body", "why").code == 0
    text = (repo / "LIFELINE.md").read_text(encoding="utf-8")
    assert "The first note here" in text and text == whole_line_rendered(open_ledger(repo), 20000)
