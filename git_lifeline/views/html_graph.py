"""The supersession and thread graph of the HTML view, laid out and drawn as SVG here.

Nodes are the entries that take part in a link: a correction and what it replaces or
reverts, and the members of a thread in order (a long thread shows its latest members and
one node standing for the earlier ones). Each connected part is laid out in layers (an
entry one column right of the latest entry it follows), ordered inside a column by where
its predecessors sit; parts are packed onto shelves, newest part first. Every node links
to its entry's anchor (`#e-<id>`). Text is escaped; colours come from the page's CSS, so
the graph follows the light and dark themes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Optional, Protocol, Sequence

from ..core.entry import abbrev

NODE_W, NODE_H = 210, 46
GAP_X, GAP_Y = 46, 14
SHELF_W = 1180
PART_GAP = 34
THREAD_SHOWN = 8  # latest members of a thread drawn; the earlier ones are one node
MAX_NODES = 420  # beyond this, older parts are counted, not drawn
_LABEL_CHARS = 27


class _Drawn(Protocol):
    """An entry as the graph draws it (views/html.py EntryView)."""

    @property
    def id(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def parents(self) -> tuple[str, ...]: ...
    @property
    def revert(self) -> bool: ...
    @property
    def thread(self) -> Optional[str]: ...
    @property
    def status(self) -> str: ...


@dataclass
class _Node:
    key: str
    entry: Optional[_Drawn]  # the EntryView (views/html.py), or None for a thread's own node
    label: str
    order: tuple[int, int]
    anchor: str
    top: str = ""  # the small first line of a node that is not an entry
    layer: int = 0
    row: float = 0.0
    x: float = 0.0
    y: float = 0.0


@dataclass
class Drawing:
    svg: str
    nodes: int
    parts: int
    left_out_parts: int = 0
    left_out_nodes: int = 0
    edges: dict[str, int] = field(default_factory=dict)  # kind -> count


def build(
    entries: Sequence[_Drawn], thread_labels: dict[str, str]
) -> tuple[dict[str, _Node], list[tuple[str, str, str]]]:
    """(nodes by key, edges [(from, to, kind)]) of the entries' links."""
    by_id = {e.id: e for e in entries}
    place = {e.id: n for n, e in enumerate(entries)}  # entries come in (ts, id) order, to the microsecond
    nodes: dict[str, _Node] = {}
    edges: list[tuple[str, str, str]] = []

    def node(e: _Drawn) -> str:
        if e.id not in nodes:
            nodes[e.id] = _Node(e.id, e, e.summary, (place[e.id], 0), f"#e-{e.id}")
        return e.id

    for e in entries:
        if e.kind != "correction":
            continue
        for p in e.parents:
            if p in by_id:
                edges.append((node(by_id[p]), node(e), "revert" if e.revert else "replace"))
    threads: dict[str, list[_Drawn]] = {}
    for e in entries:
        if e.thread:
            threads.setdefault(e.thread, []).append(e)
    for key, members in threads.items():
        members = [m for m in members if m.id != key]
        if not members:
            continue
        head = by_id.get(key)
        shown = members[-THREAD_SHOWN:]
        earlier = len(members) - len(shown)
        prev: Optional[str] = node(head) if head is not None else None
        if earlier or head is None:
            # a named thread starts at a node with its name; a long one's earlier entries are counted there
            stub = f"thread:{key}"
            more = f" · {earlier} earlier not drawn" if earlier else ""
            nodes[stub] = _Node(
                stub,
                None,
                thread_labels.get(key, key),
                (place[shown[0].id], -1),
                f"#e-{members[0].id}",
                top=f"thread{more}",
            )
            if prev is not None:
                edges.append((prev, stub, "thread"))
            prev = stub
        for m in shown:
            k = node(m)
            if prev is not None and prev != k:
                edges.append((prev, k, "thread"))
            prev = k
    return nodes, list(dict.fromkeys(edges))


def _parts(nodes: dict[str, _Node], edges: list[tuple[str, str, str]]) -> list[list[str]]:
    parent = {k: k for k in nodes}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for a, b, _ in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups: dict[str, list[str]] = {}
    for k in nodes:
        groups.setdefault(find(k), []).append(k)
    parts = [sorted(g, key=lambda k: nodes[k].order) for g in groups.values()]
    parts.sort(key=lambda g: nodes[g[-1]].order, reverse=True)  # newest activity first
    return parts


def _layout_part(keys: list[str], nodes: dict[str, _Node], preds: dict[str, list[str]]) -> tuple[int, int]:
    """Layers and rows of one part (`preds`: key -> the keys linking to it); returns (columns, rows)."""
    for k in keys:  # keys are in time order, and links go forward in time
        ps = [nodes[p].layer for p in preds.get(k, ()) if nodes[p].order < nodes[k].order]
        nodes[k].layer = max(ps) + 1 if ps else 0
    columns: dict[int, list[str]] = {}
    for k in keys:
        columns.setdefault(nodes[k].layer, []).append(k)
    rows = 0
    for layer in sorted(columns):
        col = columns[layer]

        def centre(k: str, layer: int = layer) -> float:
            ps = [nodes[p].row for p in preds.get(k, ()) if nodes[p].layer < layer]
            return sum(ps) / len(ps) if ps else 0.0

        col.sort(key=lambda k: (centre(k), nodes[k].order))
        for i, k in enumerate(col):
            nodes[k].row = float(i)
        rows = max(rows, len(col))
    return len(columns), rows


def render(entries: Sequence[_Drawn], thread_labels: dict[str, str]) -> Drawing:
    nodes, edges = build(entries, thread_labels)
    if not nodes:
        return Drawing("", 0, 0)
    edge_sets = {(a, b): kind for a, b, kind in edges}
    parts = _parts(nodes, edges)
    drawn: list[list[str]] = []
    left_parts = left_nodes = count = 0
    for part in parts:
        if count + len(part) > MAX_NODES and drawn:
            left_parts += 1
            left_nodes += len(part)
            continue
        drawn.append(part)
        count += len(part)
    x0 = y0 = 0.0
    shelf_h = 0.0
    width = 0.0
    preds: dict[str, list[str]] = {}
    for a, b, _ in edges:
        preds.setdefault(b, []).append(a)
    for part in drawn:
        cols, rows = _layout_part(part, nodes, preds)
        w = cols * NODE_W + (cols - 1) * GAP_X
        h = rows * NODE_H + (rows - 1) * GAP_Y
        if x0 > 0 and x0 + w > SHELF_W:
            x0, y0, shelf_h = 0.0, y0 + shelf_h + PART_GAP, 0.0
        for k in part:
            n = nodes[k]
            n.x = x0 + n.layer * (NODE_W + GAP_X)
            n.y = y0 + n.row * (NODE_H + GAP_Y)
        x0 += w + PART_GAP
        shelf_h = max(shelf_h, h)
        width = max(width, x0 - PART_GAP)
    height = y0 + shelf_h
    shown = {k for part in drawn for k in part}
    out = [
        f'<svg class="graph" width="{width + 8:.0f}" height="{height + 8:.0f}" '
        f'viewBox="-4 -4 {width + 8:.0f} {height + 8:.0f}" role="img" '
        f'aria-label="supersession and thread graph">',
        "<defs>"
        + "".join(
            f'<marker id="arrow-{k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto"><path class="head-{k}" d="M0,0L10,5L0,10z"/></marker>'
            for k in ("replace", "revert", "thread")
        )
        + "</defs>",
    ]
    counts: dict[str, int] = {}
    for (a, b), kind in edge_sets.items():
        if a not in shown or b not in shown:
            continue
        counts[kind] = counts.get(kind, 0) + 1
        na, nb = nodes[a], nodes[b]
        x1, y1 = na.x + NODE_W, na.y + NODE_H / 2
        x2, y2 = nb.x, nb.y + NODE_H / 2
        if x2 <= x1:  # same column (rare: equal times): loop around the right side
            x2 = nb.x + NODE_W
            mid = max(x1, x2) + GAP_X / 2
            d = f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        else:
            mid = (x1 + x2) / 2
            d = f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        out.append(f'<path class="edge {kind}" d="{d}" marker-end="url(#arrow-{kind})"/>')
    for part in drawn:
        for k in part:
            out.append(_node_svg(nodes[k]))
    out.append("</svg>")
    return Drawing("".join(out), len(shown), len(drawn), left_parts, left_nodes, counts)


def _node_svg(n: _Node) -> str:
    e = n.entry
    if e is None:
        classes, top, title = "node thread", n.top, f"{n.top}: {n.label}"
        data = ""
    else:
        status = e.status or "plain"
        classes = f"node k-{e.kind} st-{status}" + (" revert" if e.revert else "")
        top = f"{e.kind} · {abbrev(e.id)}" + (" · revert" if e.revert else "")
        title = f"{e.kind} {abbrev(e.id)} ({status}): {e.summary}"
        data = f' data-id="{e.id}"'
    label = n.label if len(n.label) <= _LABEL_CHARS else n.label[: _LABEL_CHARS - 1] + "…"
    return (
        f'<a href="{escape(n.anchor)}" class="gnode"><g class="{classes}"{data} '
        f'transform="translate({n.x:.0f},{n.y:.0f})"><title>{escape(title)}</title>'
        f'<rect width="{NODE_W}" height="{NODE_H}" rx="7"/>'
        f'<text x="10" y="17" class="nk">{escape(top)}</text>'
        f'<text x="10" y="36" class="ns">{escape(label)}</text></g></a>'
    )
