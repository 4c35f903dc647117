"""The ledger as one HTML page (issue 18): `export --format html` and `view`, checked on the
file and in a real headless Chromium (skipped without it, a failure in CI)."""

from __future__ import annotations

import json
import re
import stat
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from kit.browser import build_demo, dump_dom, screenshot, synthetic
from kit.repos import commit_file, init_repo, open_ledger
from kit.run import cli

from git_lifeline.app.draft import Draft
from git_lifeline.app.html_export import build_view_model
from git_lifeline.views import html


@pytest.fixture(scope="module")
def demo(tmp_path_factory, hermetic_git):
    repo = init_repo(tmp_path_factory.mktemp("demo") / "repo")
    commit_file(repo)
    ids = build_demo(repo)
    page = repo.parent / "page.html"
    out = cli(repo, "export", "--format", "html", "-o", str(page))
    assert out.code == 0, out
    return repo, ids, page, page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dom(demo):
    return dump_dom(demo[2])


def island(text: str, name: str):
    m = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def card_ids(dom_text: str) -> list:
    return re.findall(r'<article class="card[^"]*" id="d-([0-9a-f]{64})"', dom_text)


# ---- the file ------------------------------------------------------------------------------
_URL = re.compile(r"(?i)(?:https?|ftp|wss?|file|data|blob|javascript):|//[a-z0-9]")
_FETCHES = re.compile(
    r"(?i)@import|<link\b|<iframe\b|<img\b|<object\b|<embed\b|<audio\b|<video\b|<source\b"
    r"|\bsrc\s*=|\bsrcset\s*=|\bposter\s*=|url\((?!#)|\bfetch\(|XMLHttpRequest|WebSocket|"
    r"EventSource|sendBeacon|\bimport\("
)


def test_page_is_one_file_that_names_no_network_resource(demo):
    _, _, _, text = demo
    assert not _URL.search(text), _URL.search(text)
    # outside the JSON islands (inert data: an entry may say `<img src=x>`), nothing could fetch
    markup = re.sub(r'<script type="application/json" id="[a-z-]+">.*?</script>', "", text, flags=re.S)
    assert not _FETCHES.search(markup), _FETCHES.search(markup)
    assert re.findall(r'\bhref="([^"]*)"', text) and all(
        h.startswith("#") for h in re.findall(r'\bhref="([^"]*)"', text)
    )
    assert "default-src 'none'" in text and "connect-src 'none'" in text


def test_a_url_in_an_entry_is_text_never_a_link(repo, tmp_path):
    commit_file(repo)
    open_ledger(repo).log(
        Draft(
            kind="decision",
            summary="Docs: see https://example.com/adr",
            body="Reference: http://example.org/x and //cdn.example.net/lib.js",
        )
    )
    page = tmp_path / "p.html"
    assert cli(repo, "export", "--format", "html", "-o", str(page)).code == 0
    text = page.read_text()
    assert all(h.startswith("#") for h in re.findall(r'\b(?:href|src)="([^"]*)"', text))
    assert "https://example.com/adr" in text  # as the card's text, escaped where needed


def test_page_script_and_style_are_allowed_by_hash_only(demo):
    text = demo[3]
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1)
    assert "unsafe-inline" not in csp and re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", csp)
    assert len(re.findall(r"<script>", text)) == 1 and len(re.findall(r"<style>", text)) == 1


def test_entry_text_cannot_close_the_data_island(demo):
    repo, ids, _, text = demo
    assert "</script><script>document.body.dataset.pwned" not in text
    assert "<script>document.body.dataset.pwned" not in text and "<b>tags</b>" not in text
    rows = island(text, "entries-data")
    assert {r[0] for r in rows} == {e.id for e in open_ledger(repo).entries()}
    xss = next(r for r in rows if r[0] == ids["xss"])
    assert xss[4].startswith("Summary with <script>")  # the data is intact once parsed


def test_view_model_marks_what_the_truth_says(demo):
    repo, ids, _, _ = demo
    vm = build_view_model(open_ledger(repo))
    by = {e.id: e for e in vm.entries}
    assert by[ids["retries"]].status == "superseded" and by[ids["retries"]].replaced_by == (ids["retries2"],)
    assert by[ids["retries2"]].status == "in-force" and by[ids["retries2"]].pinned
    assert vm.decisions[0] == ids["retries2"]  # pinned first
    assert by[ids["flags"]].status == "withdrawn" and by[ids["flags-revert"]].revert
    assert by[ids["redis"]].conflicts == (ids["memcached"],)
    assert by[ids["api"]].stale and "src/api/" in by[ids["api"]].stale
    assert by[ids["recon-open"]].status == "open"
    assert {t.label for t in vm.threads} == {
        "reconciliation",
        "How do we reconcile payments the PSP reports a day late?",
    }
    assert all(t.checkpoint for t in vm.threads)


# ---- in the browser --------------------------------------------------------------------------
def test_browser_shows_decisions_in_force_and_not_the_superseded(demo, dom):
    repo, ids, _, _ = demo
    st = open_ledger(repo).state()
    assert 'data-ready="1"' in dom  # the script ran under the CSP
    assert set(card_ids(dom)) == set(st.decision_ids)
    for name, status in (("retries", "superseded"), ("flags", "withdrawn")):
        assert ids[name] not in card_ids(dom)
        assert re.search(rf'<article class="entry k-decision st-{status}" id="e-{ids[name]}"', dom)
    assert re.search(rf'class="entry k-correction st-in-force" id="e-{ids["retries2"]}"', dom)
    assert 'class="mark conflict"' in dom and 'class="mark stale"' in dom


def test_browser_draws_the_graph_with_links_to_each_entry(demo, dom):
    _, ids, _, _ = demo
    svg = re.search(r"<svg class=\"graph\".*?</svg>", dom, re.S).group(0)
    for name in ("retries", "retries2", "flags", "flags-revert"):
        assert f'<a href="#e-{ids[name]}" class="gnode"><g class="node' in svg
        assert f'data-id="{ids[name]}"' in svg
    assert re.search(r'<path class="edge replace"', svg) and re.search(r'<path class="edge revert"', svg)
    assert re.search(r'<path class="edge thread"', svg)
    assert ">reconciliation</text>" in svg  # a named thread's own node


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_browser_runs_no_script_from_an_entry(demo, dom):
    assert "data-pwned" not in dom and "<title>Lifeline: main</title>" in dom
    parsed = _Tags()
    parsed.feed(dom)
    assert [t for t, _ in parsed.tags if t in ("img", "b", "i", "iframe")] == []
    assert [(t, a) for t, attrs in parsed.tags for a in attrs if a.startswith("on")] == []
    assert [a.get("type") for t, a in parsed.tags if t == "script"] == ["application/json", "application/json", None]
    assert "Summary with &lt;script&gt;document.body.dataset.pwned = 1&lt;/script&gt; &amp; &lt;b&gt;tags" in dom


def test_browser_shows_open_items_and_each_threads_latest_checkpoint(demo, dom):
    repo, ids, _, _ = demo
    st = open_ledger(repo).state()
    assert f'id="o-{ids["recon-open"]}"' in dom
    threads = re.search(r'<table class="threads">.*?</table>', dom, re.S).group(0)
    for cp in st.checkpoints.values():
        assert f'href="#e-{cp.entry.id}"' in threads
    assert "Hold reminders while a payment is pending in the CSV" in threads


def test_permalink_to_an_old_entry_renders_and_marks_it(tmp_path):
    repo = init_repo(tmp_path / "repo")
    synthetic(repo, 600)
    page = tmp_path / "p.html"
    assert cli(repo, "export", "--format", "html", "-o", str(page)).code == 0
    first = open_ledger(repo).entries()[3]
    plain = dump_dom(page)
    assert len(re.findall(r'<article class="entry', plain)) == 120  # a screenful, not all 600
    assert f'id="e-{first.id}"' not in plain
    linked = dump_dom(page, f"#e-{first.id[:10]}")  # a short id works too
    assert re.search(rf'<article class="entry[^"]* hl" id="e-{first.id}"', linked)


def test_screenshot_of_the_page_is_not_blank(demo, tmp_path):
    shot = tmp_path / "view.png"
    screenshot(demo[2], shot, height=1200)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 40_000  # a blank 1280x1200 PNG is a few KB


# ---- the commands ------------------------------------------------------------------------------
def test_view_without_a_browser_prints_the_path_of_the_page(demo):
    repo = demo[0]
    out = cli(repo, "view", env={"DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": ""})
    assert out.code == 0, out
    path = Path(re.fullmatch(r"wrote (.+)\n", out.out).group(1))
    try:
        assert path.read_text(encoding="utf-8").startswith("<!doctype html>")
        assert path.name.startswith("lifeline-main-") and path.suffix == ".html"
    finally:
        path.unlink()


def test_view_opens_the_page_in_the_browser_it_is_given(demo, tmp_path):
    repo = demo[0]
    seen = tmp_path / "seen"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport sys\nopen({str(seen)!r}, 'w').write(sys.argv[1])\n")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    out = cli(repo, "view", env={"BROWSER": str(browser)})
    assert out.code == 0, out
    path = Path(re.fullmatch(r"opened (.+)\n", out.out).group(1))
    try:
        assert seen.read_text() == path.as_uri()
    finally:
        path.unlink()


def test_view_of_an_empty_line_still_makes_a_page(repo):
    out = cli(repo, "view", "--no-open")
    assert out.code == 0, out
    path = Path(out.out.split(" ", 1)[1].strip())
    try:
        assert "No decision in force." in path.read_text()
    finally:
        path.unlink()


def test_export_html_to_stdout_and_to_a_directory(demo, tmp_path):
    repo = demo[0]
    out = cli(repo, "export", "--format", "html")
    assert out.code == 0 and out.out.startswith("<!doctype html>")
    bad = cli(repo, "export", "--format", "html", "-o", str(tmp_path))
    assert bad.code == 2 and "is a directory" in bad.err


def test_render_is_pure_and_escapes_every_field():
    e = html.EntryView(
        id="a" * 64,
        ts="2024-01-01T00:00:00Z",
        kind="decision",
        author='<x> "y"',
        summary="<b>s</b>",
        body="<i>why</i>",
        thread='t"><script>',
        status="in-force",
    )
    vm = html.ViewModel(line="main", generated="2024-01-02T00:00:00Z", head=None, entries=(e,), decisions=(e.id,))
    page = html.render(vm)
    assert page == html.render(vm)
    static = page.split('<script type="application/json"')[0]
    assert "<b>s</b>" not in static and "&lt;b&gt;s&lt;/b&gt;" in static and "&lt;i&gt;why&lt;/i&gt;" in static
    assert '<x> "y"' not in static
