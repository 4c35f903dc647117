"""The ledger as one self-contained HTML page (`git lifeline export --format html`, `view`).

One file that works offline: the style sheet and the script are inline, nothing is fetched
(the page's Content-Security-Policy forbids every fetch, and lets run only the page's own
script and style, by hash). The static parts (decisions in force, open items, threads and
where each stands, the graph) are HTML written here; the timeline of every entry is a JSON
island that the script renders a screenful at a time, with filters and a text search, so
the page stays quick at 10,000 entries. Every text from an entry is escaped here, put in
the island with `<` `>` `&` as JSON escapes, and set as text (never as markup) by the script.

`render(view_model)` is pure: the view model (below) is built by app/html_export.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from typing import Iterable, Optional, Union

from ..core import adr, blocks
from ..core.entry import abbrev
from ..core.status import Status
from ..core.trust import TAGS, WORDS, Tier
from . import html_graph

_WHY_LEAD = 420  # characters of a decision's why shown before "full why"
SHOWN_CONFLICTS = 8
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)[ \t]*#*")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|>|```|\|)|[ \t]{4}")


@dataclass(frozen=True)
class EntryView:
    """One entry as the page shows it."""

    id: str
    ts: str  # UTC, "YYYY-MM-DDTHH:MM:SSZ"
    kind: str
    author: str
    summary: str
    body: str
    agent: str = "human"
    trust: Tier = "human"  # where it came from (core/trust.py): a mark unless a human wrote it
    parents: tuple[str, ...] = ()
    thread: Optional[str] = None  # thread key (a name, or an open item's id)
    status: str = ""  # status_token of core.status.status_of: in-force, superseded, withdrawn, ...
    replaced_by: tuple[str, ...] = ()  # active corrections naming it
    revert: bool = False  # a correction whose header says `action: revert`
    stale: Optional[str] = None  # why its code changed since (Staleness.mark)
    conflicts: tuple[str, ...] = ()  # the first SHOWN_CONFLICTS decisions in force about the same subject
    conflict_count: int = 0  # how many there are
    pinned: bool = False
    reaffirmed_by: tuple[
        str, ...
    ] = ()  # ids of the re-affirmations of a decision (git lifeline reaffirm), oldest first


@dataclass(frozen=True)
class ThreadView:
    key: str
    label: str
    entries: int
    checkpoint: Optional[str] = None  # id of the thread's live checkpoint (Resume)
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()  # ((name, (item, ...)), ...) of that checkpoint
    last_ts: str = ""


@dataclass(frozen=True)
class ViewModel:
    line: str
    generated: str  # UTC, "YYYY-MM-DDTHH:MM:SSZ"
    head: Optional[str]
    entries: tuple[EntryView, ...]  # EntryView, in (ts, id) order
    decisions: tuple[str, ...] = ()  # ids in force (pinned first)
    opens: tuple[str, ...] = ()
    expired: tuple[str, ...] = ()
    threads: tuple[ThreadView, ...] = ()  # ThreadView, latest checkpoint first
    identity: Optional[str] = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


def status_token(status: Status) -> str:
    """An entry's status (core/status.py) as the page writes it: a CSS class word
    (`st-in-force`), and nothing for an entry that is only recorded."""
    return "" if status == "recorded" else status.replace(" ", "-")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("html_assets").joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _island(value: object) -> str:
    """JSON that cannot end its <script> element or open a comment, whatever the entries hold."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _row(e: EntryView, pos: dict[str, int]) -> list[object]:
    # the field order is page.js's (ID, TS, KIND, ...); links are positions in the array (an id
    # is 64 characters, a position a few), and a decision lists a few of its conflicts, and how many
    def refs(ids: Iterable[str]) -> list[Union[int, str]]:
        return [pos.get(i, i) for i in ids]

    return [
        e.id,
        e.ts,
        e.kind,
        e.author,
        e.summary,
        e.body,
        refs(e.parents),
        e.thread or "",
        e.status,
        refs(e.replaced_by),
        1 if e.revert else 0,
        e.stale or "",
        refs(e.conflicts[:SHOWN_CONFLICTS]),
        "" if e.agent == "human" else e.agent,
        e.conflict_count,
        TAGS[e.trust],
    ]


def render(vm: ViewModel) -> str:
    """The whole page."""
    by_id = {e.id: e for e in vm.entries}
    pos = {e.id: n for n, e in enumerate(vm.entries)}
    labels = {t.key: t.label for t in vm.threads}
    for e in vm.entries:
        if e.thread and e.thread not in labels:
            labels[e.thread] = by_id[e.thread].summary if e.thread in by_id else e.thread
    style, script = _asset("page.css"), _asset("page.js")
    csp = (
        f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
    )
    drawing = html_graph.render(list(vm.entries), labels)
    n = len(vm.entries)
    head = f" · head {abbrev(vm.head)}" if vm.head else ""
    out = [
        "<!doctype html>",
        '<html lang="en" data-theme="auto">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>Lifeline: {escape(vm.line)}</title>",
        f"<style>{style}</style>",
        "</head>",
        "<body>",
        '<header class="top">',
        f'<h1>Lifeline <span class="line">{escape(vm.line)}</span></h1>',
        f'<p class="sub">{n} entr{"y" if n == 1 else "ies"} · {len(vm.decisions)} decisions in force · '
        f"{len(vm.opens)} open · generated {escape(vm.generated)}{escape(head)}</p>",
        '<nav><a href="#decisions">Decisions</a><a href="#open">Open</a><a href="#threads">Threads</a>'
        '<a href="#graph">Graph</a><a href="#timeline">Timeline</a></nav>',
        '<button id="theme" type="button" title="auto follows the system; light; dark">Theme: auto</button>',
        "</header>",
        "<main>",
    ]
    if vm.warnings:
        out.append(
            '<section class="warnings"><ul>' + "".join(f"<li>{escape(w)}</li>" for w in vm.warnings) + "</ul></section>"
        )
    if vm.identity and vm.identity in by_id:
        ident = by_id[vm.identity]
        out.append(
            f'<section id="identity" class="identity"><div class="what">{escape(ident.summary)}</div>'
            f'<div class="why">{escape(_prose(ident.body))}</div></section>'
        )
    out += _decisions(vm, by_id)
    out += _opens(vm, by_id)
    out += _threads(vm, by_id)
    out += _graph(drawing)
    out += _timeline(n)
    out += [
        "</main>",
        f'<script type="application/json" id="view-meta">{_island({"threads": labels})}</script>',
        f'<script type="application/json" id="entries-data">{_island([_row(e, pos) for e in vm.entries])}</script>',
        f"<script>{script}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


def _prose(body: str) -> str:
    """The why a reader wants: no header fields, no ADR marker line."""
    return adr.strip_marker(blocks.strip_header(body))


def _rich(text: str) -> str:
    """Escaped text read as light markdown: headings bold, the lines of a paragraph joined
    (ADRs are wrapped at 80 columns), list items and indented lines kept as they are."""
    parts: list[list[str]] = []  # [kind, text]: h(eading), p(aragraph line), b(lank)
    for line in text.split("\n"):
        stripped = line.strip()
        heading = _HEADING.fullmatch(stripped)
        if heading:
            parts.append(["h", heading.group(1)])
        elif not stripped:
            parts.append(["b", ""])
        elif parts and parts[-1][0] == "p" and not _BLOCK_START.match(line):
            parts[-1][1] += " " + stripped
        else:
            parts.append(["p", line.rstrip()])
    out: list[str] = []
    for n, (kind, value) in enumerate(parts):
        if kind == "b" and (not out or parts[n - 1][0] in ("h", "b")):
            continue  # a heading sits on its paragraph; one blank line between paragraphs
        out.append(f'<span class="h">{escape(value)}</span>' if kind == "h" else escape(value))
    return "\n".join(out).strip("\n")


def _plain(text: str) -> str:
    """One paragraph of the text, headings left out (a lead to read at a glance)."""
    return " ".join(w for line in text.split("\n") if not _HEADING.fullmatch(line.strip()) for w in line.split())


def _marks(e: EntryView) -> str:
    out = []
    if e.pinned:
        out.append('<span class="mark pinned">pinned</span>')
    if e.stale:
        out.append(f'<span class="mark stale" title="{escape(e.stale)}">stale</span>')
    if e.conflicts:
        out.append('<span class="mark conflict">conflict</span>')
    if TAGS[e.trust]:
        out.append(f'<span class="mark trust" title="{escape(WORDS[e.trust])}">{TAGS[e.trust]}</span>')
    return "".join(out)


def _id_links(ids: Iterable[str], by_id: dict[str, EntryView]) -> str:
    return ", ".join(
        f'<a class="id" href="#e-{i}">{abbrev(i)}</a>' if i in by_id else f'<span class="id">{abbrev(i)}</span>'
        for i in ids
    )


def _why(text: str) -> str:
    text = text.strip()
    if not text:
        return '<p class="why note">(no why recorded)</p>'
    if len(text) <= _WHY_LEAD + 80:
        return f'<p class="why">{_rich(text)}</p>'
    lead = _plain(text)
    cut = lead.rfind(" ", 0, _WHY_LEAD)
    cut = cut if cut > _WHY_LEAD // 2 else _WHY_LEAD
    return (
        f'<p class="why">{escape(lead[:cut])} …</p><details class="more"><summary>full why '
        f'({len(text.splitlines())} lines)</summary><p class="why">{_rich(text)}</p></details>'
    )


def _source(e: EntryView) -> str:
    name = adr.marker_of(e.body)
    return f' · from <span class="mono">{escape(name)}</span>' if name else ""


def _decisions(vm: ViewModel, by_id: dict[str, EntryView]) -> list[str]:
    out = [f'<section id="decisions"><h2>Decisions in force <span class="count">({len(vm.decisions)})</span></h2>']
    if not vm.decisions:
        out.append('<p class="note">No decision in force.</p>')
    out.append('<div class="cards">')
    for i in vm.decisions:
        e = by_id[i]
        classes = "card" + (" conflict" if e.conflicts else "") + (" stale" if e.stale else "")
        meta = f"{escape(e.author)} · {e.ts[:10]} · {e.kind}"
        replaced = (
            [p for p in e.parents if p in by_id and by_id[p].status == "superseded"] if e.kind == "correction" else []
        )
        extra = ""
        if replaced:
            extra += f'<div class="meta">replaces {_id_links(replaced, by_id)}</div>'
        if e.conflicts:
            more = e.conflict_count - SHOWN_CONFLICTS
            extra += (
                f'<div class="meta">conflicts with {_id_links(e.conflicts[:SHOWN_CONFLICTS], by_id)}'
                + (f" and {more} more" if more > 0 else "")
                + "</div>"
            )
        if e.stale:
            extra += f'<div class="meta">{escape(e.stale)}</div>'
        if e.reaffirmed_by:
            extra += f'<div class="meta">re-affirmed by {_id_links(e.reaffirmed_by, by_id)}</div>'
        out.append(
            f'<article class="{classes}" id="d-{e.id}"><h3><a href="#e-{e.id}">{escape(e.summary)}</a>'
            f'{_marks(e)}</h3><div class="meta">{meta} · <span class="id">{abbrev(e.id)}</span>'
            f"{_source(e)}</div>"
            f"{extra}{_why(_prose(e.body))}</article>"
        )
    out.append("</div>")
    if vm.expired:
        out.append(f'<h3 class="note">Expired (outside their validity window): {len(vm.expired)}</h3><ul>')
        for i in vm.expired:
            e = by_id[i]
            out.append(
                f'<li><a href="#e-{e.id}">{escape(e.summary)}</a> <span class="mark expired">expired</span></li>'
            )
        out.append("</ul>")
    out.append("</section>")
    return out


def _opens(vm: ViewModel, by_id: dict[str, EntryView]) -> list[str]:
    out = [f'<section id="open"><h2>Open items <span class="count">({len(vm.opens)})</span></h2>']
    if not vm.opens:
        out.append('<p class="note">Nothing open.</p>')
    else:
        out.append('<ul class="list">')
        for i in vm.opens:
            e = by_id[i]
            why = _prose(e.body)
            out.append(
                f'<li id="o-{e.id}"><a href="#e-{e.id}">{escape(e.summary)}</a>'
                f'<div class="meta">{escape(e.author)} · {e.ts[:10]} · <span class="id">{abbrev(e.id)}</span>'
                f"{_source(e)}</div>" + (_why(why) if why else "") + "</li>"
            )
        out.append("</ul>")
    out.append("</section>")
    return out


def _threads(vm: ViewModel, by_id: dict[str, EntryView]) -> list[str]:
    out = [
        f'<section id="threads"><h2>Threads and where each stands <span class="count">({len(vm.threads)})</span></h2>'
    ]
    if not vm.threads:
        out.append('<p class="note">No thread and no checkpoint yet.</p></section>')
        return out
    out.append(
        '<table class="threads"><thead><tr><th>Thread</th><th>Entries</th><th>Resume: the latest checkpoint'
        "</th></tr></thead><tbody>"
    )
    for t in vm.threads:
        label = escape(t.label)
        if t.key in by_id:
            label = f'<a href="#e-{t.key}">{label}</a>'
        if t.checkpoint and t.checkpoint in by_id:
            cp = by_id[t.checkpoint]
            items = "".join(
                f'<li><span class="sec">{escape(name)}</span>{escape(item)}</li>'
                for name, values in t.sections
                for item in values
            )
            resume = (
                f'<a href="#e-{cp.id}">{escape(cp.summary)}</a> <span class="meta">{cp.ts[:16].replace("T", " ")}'
                f"</span>" + (f'<ul class="sections">{items}</ul>' if items else "")
            )
        else:
            resume = '<span class="note">no checkpoint</span>'
        out.append(f"<tr><td>{label}</td><td>{t.entries}</td><td>{resume}</td></tr>")
    out.append("</tbody></table></section>")
    return out


def _graph(d: html_graph.Drawing) -> list[str]:
    out = [
        '<section id="graph"><h2>What replaced what, reverts and threads '
        f'<span class="count">({d.nodes} entries)</span></h2>'
    ]
    if not d.svg:
        out.append('<p class="note">No correction and no thread yet: nothing to draw.</p></section>')
        return out
    out.append(
        '<div class="legend"><span><span class="sw replace"></span>replaced by (a correction)</span>'
        '<span><span class="sw revert"></span>reverted by</span>'
        '<span><span class="sw thread"></span>next in thread</span>'
        "<span>green frame: in force · dashed: superseded · amber: open</span></div>"
    )
    if d.left_out_parts:
        out.append(
            f'<p class="note">The {d.parts} newest groups are drawn; {d.left_out_parts} older groups '
            f"({d.left_out_nodes} entries) are in the timeline.</p>"
        )
    out.append(f'<div class="graph-box">{d.svg}</div></section>')
    return out


def _timeline(n: int) -> list[str]:
    return [
        '<section id="timeline"><h2>Timeline <span class="count">(every entry)</span></h2>',
        '<form id="filters" class="filters" autocomplete="off">',
        '<label>Search<input type="search" name="q" placeholder="words in summary, why, author, id"></label>',
        '<label>Kind<select name="kind"><option value="">all kinds</option></select></label>',
        '<label>Thread<select name="thread"><option value="">all threads</option></select></label>',
        '<label>Author<select name="author"><option value="">all authors</option></select></label>',
        '<label>From<input type="date" name="from"></label>',
        '<label>To<input type="date" name="to"></label>',
        '<label class="check"><input type="checkbox" name="live"> hide superseded</label>',
        '<button type="reset">Clear</button>',
        "</form>",
        f'<p id="count">{n} entries</p>',
        '<div id="entries"></div><div id="more"></div>',
        '<noscript><p class="note">The timeline is drawn by the page\'s script; the sections above '
        "need none.</p></noscript>",
        "</section>",
    ]
