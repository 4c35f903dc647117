"""Several lines side by side in one repository, and the verifiable links between them.

A *line* is a ref `refs/lifeline/<name>` whose head is a commit with the documented
tree shape (only `entries/` at the root). Nothing else is ever taken as a line: not
a file in the work tree or the git dir, not a branch, tag, note or remote-tracking
ref, not a `refs/lifeline/*` ref that points at a blob, at another ref or at an
unrelated commit. An id counts as found in a line only when the blob stored under
it parses and recomputes to that id.

Links between lines (docs/FORMAT.md §8):
* a parent may live in another line (`--parents research:ab12cd`): `parents`
  stays a list of full ids, and `verify` reports such parents as external anchors;
* a promoted copy carries an `origin:` block naming the source line and the full
  id of the source entry, so the copy's provenance is checked by hash, not prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from ..core.content_rules import HEX64
from ..core.entry import MIN_PREFIX, Entry, abbrev, new_entry
from ..core.json_input import JSONObject
from ..errors import InputError, LifelineError
from .libgit2 import pygit2
from .names import NAME_RE, validate_name
from .namespaces import LEDGER
from .repo import GitRepo
from .store import ENTRIES_DIR, REF_PREFIX, LineStore
from .trees import lookup, prefix_matches

_LINE_REF = re.compile(r"(?P<line>[A-Za-z0-9][A-Za-z0-9_-]{0,62}):(?P<ref>[0-9a-fA-F]+)")
_HEX = re.compile(r"[0-9a-f]+")
ORIGIN_HEAD = "origin:"
_ORIGIN_KEY = re.compile(r"[ \t]+(?P<key>line|id):[ \t]*(?P<value>\S+)[ \t]*")
_REL = re.compile(r"(?m)^rel:[ \t]*(\S+)[ \t]*$")


# ---- origin blocks ---------------------------------------------------------------
def origin_block(line: str, entry_id: str) -> str:
    """The block a promoted copy ends with (FORMAT §8)."""
    return f"origin:\n  line: {line}\n  id: {entry_id}"


def origins(body: str) -> list[dict[str, str]]:
    """Every well-formed origin block of a body, in order, as {"line", "id"}.

    A block is a line exactly `origin:` followed by indented `line: NAME` and
    `id: <64 hex>` lines. The last block is the copy's immediate origin (each
    promotion appends one); earlier ones are the chain it came through.
    """
    out = []
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\r") != ORIGIN_HEAD:
            i += 1
            continue
        found: dict[str, str] = {}
        j = i + 1
        while j < len(lines):
            m = _ORIGIN_KEY.fullmatch(lines[j].rstrip("\r"))
            if not m:
                break
            found.setdefault(m.group("key"), m.group("value"))
            j += 1
        if "line" in found and "id" in found and NAME_RE.fullmatch(found["line"]) and HEX64.fullmatch(found["id"]):
            out.append({"line": found["line"], "id": found["id"]})
        i = j
    return out


def origin_of(body: str) -> Optional[dict[str, str]]:
    found = origins(body)
    return found[-1] if found else None


# ---- which refs are lines --------------------------------------------------------
@dataclass
class LineRef:
    name: str
    store: LineStore
    head: str
    entries_tree: Optional[pygit2.Tree]


@dataclass
class LineIndex:
    """The repository's real lines, read once; answers "which line holds this id".

    `pending` heads ({line: commit}) are heads about to land by the same verification
    (the other lines of one pull or one push): they count as well, since that
    verification refuses them all together when any fails."""

    gr: GitRepo
    lines: dict[str, LineRef] = field(default_factory=dict)  # name -> LineRef
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (ref name, why it is not a line)
    pending: dict[str, LineRef] = field(default_factory=dict)  # name -> LineRef of a head about to land

    @classmethod
    def scan(cls, gr: GitRepo, pending: Optional[dict[str, str]] = None) -> "LineIndex":
        idx = cls(gr)
        for name in LEDGER.names(gr):
            ref_name = REF_PREFIX + name
            store = LineStore(gr, name)
            try:
                head = store.head()
            except LifelineError as exc:
                idx.ignored.append((ref_name, str(exc)))
                continue
            if head is None:
                continue
            why = _not_a_line(gr.repo, head)
            if why:
                idx.ignored.append((ref_name, why))
                continue
            idx.lines[name] = LineRef(name, store, head, store.tree(head))
        for name, head in sorted((pending or {}).items()):
            if NAME_RE.fullmatch(name) and not _not_a_line(gr.repo, head):
                store = LineStore(gr, name)
                idx.pending[name] = LineRef(name, store, head, store.tree(head))
        return idx

    def names(self) -> list[str]:
        return sorted(self.lines)

    def get(self, line: str, entry_id: str) -> Optional[Entry]:
        """The entry stored under `entry_id` in `line`, only if it is genuinely that entry."""
        for ref in (self.lines.get(line), self.pending.get(line)):
            e = self._genuine(ref, entry_id)
            if e is not None:
                return e
        return None

    def _genuine(self, ref: Optional[LineRef], entry_id: str) -> Optional[Entry]:
        if ref is None or ref.entries_tree is None:
            return None
        oid = lookup(ref.entries_tree, entry_id)
        obj = self.gr.repo.get(oid) if oid is not None else None
        if not isinstance(obj, pygit2.Blob):
            return None
        try:
            e = Entry.from_json(obj.data)
        except LifelineError:
            return None
        return e if e.id == entry_id and e.verify() else None

    def locate(self, entry_id: str, exclude: Optional[str] = None) -> Optional[str]:
        """Name of the first real line (by name) that holds `entry_id`, or None."""
        for name in sorted(set(self.lines) | set(self.pending)):
            if name != exclude and self.get(name, entry_id) is not None:
                return name
        return None

    def matches(self, line: str, prefix: str) -> list[str]:
        """Full ids in `line` starting with `prefix` (at least MIN_PREFIX hex chars)."""
        ref = self.lines.get(line)
        return prefix_matches(self.gr.repo, ref.entries_tree if ref is not None else None, prefix)


def _not_a_line(repo: pygit2.Repository, head: str) -> Optional[str]:
    try:
        obj = repo[head]
    except KeyError:
        return "its commit is not in this repository"
    except (pygit2.GitError, ValueError) as exc:  # a commit git cannot parse: no line to anchor on
        return f"its commit cannot be read ({exc})"
    if not isinstance(obj, pygit2.Commit):
        return f"points at a {obj.type_str}, not a commit"
    names = [item.name for item in obj.tree]
    if names != [ENTRIES_DIR] or obj.tree[ENTRIES_DIR].type_str != "tree":
        shown = ", ".join(names[:3]) or "nothing"
        return f"its commit's tree holds {shown}, not only '{ENTRIES_DIR}/' (not a ledger)"
    return None


@dataclass
class LineRow:
    """One real line, as `lines` lists it."""

    line: str
    head: Optional[str]
    entries: int  # names counted, blobs not read
    ref: str
    projection: Optional[str] = None  # its LIFELINE.md (app/workspace.py says where)

    def to_json(self) -> JSONObject:
        return {
            "line": self.line,
            "head": self.head,
            "entries": self.entries,
            "ref": self.ref,
            "projection": self.projection,
        }


def describe_lines(gr: GitRepo) -> list[LineRow]:
    """One row per real line: name, head, entry count (names counted, blobs not read)."""
    idx = LineIndex.scan(gr)
    return [
        LineRow(name, idx.lines[name].head, _count(gr.repo, idx.lines[name].entries_tree), REF_PREFIX + name)
        for name in idx.names()
    ]


def _count(repo: pygit2.Repository, tree: Optional[pygit2.Tree]) -> int:
    if tree is None:
        return 0
    n = 0
    for a in tree:
        sub_a = repo[a.id]
        if not isinstance(sub_a, pygit2.Tree):
            continue
        for b in sub_a:
            sub_b = repo[b.id]
            if isinstance(sub_b, pygit2.Tree):
                n += len(sub_b)
    return n


# ---- cross-line references -------------------------------------------------------
def split_ref(ref: str) -> tuple[Optional[str], str]:
    """`research:ab12cd` -> ("research", "ab12cd"); a plain id or prefix -> (None, ref)."""
    text = (ref or "").strip()
    m = _LINE_REF.fullmatch(text)
    if m:
        return m.group("line"), m.group("ref")
    return None, text


def resolve_ref(gr: GitRepo, local: LineStore, ref: str, index: Optional[LineIndex] = None) -> str:
    """Full id for `prefix` (in the local line) or `line:prefix` (in that real line)."""
    line, part = split_ref(ref)
    if line is None or line == local.line:
        return local.resolve(part)
    validate_name(line)
    idx = index or LineIndex.scan(gr)
    if line not in idx.lines:
        raise InputError(f"no line {line!r} in this repository (see: git lifeline lines)")
    p = part.lower()
    if len(p) < MIN_PREFIX or not _HEX.fullmatch(p):
        raise InputError(f"invalid id {ref!r}: give a full id or a prefix of at least {MIN_PREFIX} hex characters")
    found = idx.matches(line, p)
    if not found:
        raise InputError(f"no entry {part!r} in line {line!r}")
    if len(found) > 1:
        raise InputError(
            f"ambiguous id prefix {part!r} in line {line!r}: matches " + ", ".join(abbrev(f) for f in found[:5])
        )
    if idx.get(line, found[0]) is None:
        raise InputError(f"entry {abbrev(found[0])} in line {line!r} does not match its id (run: git lifeline verify)")
    return found[0]


# ---- where ------------------------------------------------------------------------
def where(gr: GitRepo, prefix: str) -> list[dict[str, str]]:
    """Every real line holding an id that starts with `prefix`: [{line, id, kind, summary}]."""
    p = (prefix or "").strip().lower()
    if ":" in p:
        _, p = split_ref(p)
    if len(p) < MIN_PREFIX or not _HEX.fullmatch(p):
        raise InputError(f"invalid id {prefix!r}: give a full id or a prefix of at least {MIN_PREFIX} hex characters")
    idx = LineIndex.scan(gr)
    hits = []
    for name in idx.names():
        for full in idx.matches(name, p):
            e = idx.get(name, full)
            if e is not None:
                hits.append({"line": name, "id": full, "kind": e.kind, "summary": e.summary})
    return hits


# ---- promote ------------------------------------------------------------------------
@dataclass
class PromoteOutcome:
    copies: list[Entry]  # new entries for the destination line
    already: list[tuple[str, str]]  # (source id, id of the copy already there)


def plan_promote(
    gr: GitRepo, src: str, dst: str, refs: list[str], parents: Optional[list[str]] = None
) -> PromoteOutcome:
    """Copies of source entries for the destination line, each ending with an origin block.

    A copy keeps kind, author, agent, provider, model, summary and ts; its body is the
    source body plus the origin block; its parents are `parents` (default: none, a root
    in the destination). Re-promoting finds the earlier copy (same origin) and adds
    nothing. Corrections are refused: without their parents they supersede nothing.
    """
    validate_name(src)
    validate_name(dst)
    if src == dst:
        raise InputError("promote: --from and --to name the same line")
    if not refs:
        raise InputError("promote: give at least one --id")
    idx = LineIndex.scan(gr)
    if src not in idx.lines:
        raise InputError(f"promote: no line {src!r} in this repository (see: git lifeline lines)")
    src_store = idx.lines[src].store
    dst_store = LineStore(gr, dst)
    new_parents = sorted({resolve_ref(gr, dst_store, r, idx) for r in (parents or [])})
    existing: dict[tuple[str, str], str] = {}
    if dst_store.head() is not None:
        for e in dst_store.load().entries.values():
            for o in origins(e.body):
                existing.setdefault((o["line"], o["id"]), e.id)
    copies, already, seen = [], [], set()
    for ref in refs:
        line, part = split_ref(ref)
        if line not in (None, src):
            raise InputError(f"promote: {ref!r} names line {line!r}, but --from is {src!r}")
        sid = src_store.resolve(part)
        if sid in seen:
            continue
        seen.add(sid)
        source = idx.get(src, sid)
        if source is None:
            raise InputError(
                f"promote: entry {abbrev(sid)} in line {src!r} does not match its id (run: git lifeline verify)"
            )
        if source.kind == "correction":
            raise InputError(
                f"promote: {abbrev(sid)} is a correction; it supersedes its parents and means "
                "nothing without them; promote the entry that carries the truth instead"
            )
        if (src, sid) in existing:
            already.append((sid, existing[(src, sid)]))
            continue
        body = f"{source.body}\n\n{origin_block(src, sid)}" if source.body else origin_block(src, sid)
        copy = new_entry(
            kind=source.kind,
            author=source.author,
            agent=source.agent,
            provider=source.provider,
            model=source.model,
            summary=source.summary,
            body=body,
            parents=new_parents,
            ts=source.ts,
        )
        if dst_store.has(copy.id):
            already.append((sid, copy.id))
            continue
        copies.append(copy)
    return PromoteOutcome(copies, already)


# ---- graph --------------------------------------------------------------------------
@dataclass
class Node:
    key: str
    line: Optional[str]
    label: str
    superseded: bool = False
    shape: str = "box"  # box | thread | missing


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)  # key -> Node
    edges: set[tuple[str, str, str, str]] = field(default_factory=set)  # (from key, to key, label, style)


def _ident(line: str) -> str:
    """A line name as an identifier part: `_` doubled, `-` as `_d`, so distinct names stay distinct."""
    return line.replace("_", "__").replace("-", "_d")


def _node_key(line: Optional[str], entry_id: str) -> str:
    return f"e_{_ident(line) if line else 'x'}_{entry_id[:16]}"


def build_graph(gr: GitRepo, only: Optional[str] = None) -> Graph:
    """Supersession, thread, relation and cross-line links of the real lines.

    With `only`, that line's links (and the nodes they reach in other lines);
    otherwise every line's. Plain parent links (a log's running chain) are left
    out: they are the ledger's order, not its structure.
    """
    from ..core.blocks import field as field_of
    from ..core.truth import reduce

    idx = LineIndex.scan(gr)
    if only is not None:
        validate_name(only)
        if only not in idx.lines:
            raise InputError(f"no line {only!r} in this repository (see: git lifeline lines)")
    names = [only] if only else idx.names()
    g = Graph()
    loaded = {}
    for name in names:
        loaded[name] = idx.lines[name].store.load(idx.lines[name].head).entries

    def entry_node(line: Optional[str], e: Optional[Entry], entry_id: str, superseded: bool = False) -> str:
        key = _node_key(line, entry_id)
        if key not in g.nodes:
            if e is None:
                g.nodes[key] = Node(key, line, f"missing {abbrev(entry_id)}", shape="missing")
            else:
                g.nodes[key] = Node(key, line, f"{e.kind}: {_short(e.summary)} · {abbrev(entry_id)}", superseded)
        return key

    def foreign(entry_id: str, hint: Optional[str]) -> str:
        home = (
            hint
            if hint is not None and hint in idx.lines and idx.get(hint, entry_id) is not None
            else idx.locate(entry_id)
        )
        return entry_node(home, idx.get(home, entry_id) if home is not None else None, entry_id)

    for name in names:
        entries = loaded[name]
        st = reduce(entries.values())
        sup = st.superseded

        def local(
            entry_id: str, name: str = name, entries: dict[str, Entry] = entries, sup: frozenset[str] = sup
        ) -> str:
            return entry_node(name, entries.get(entry_id), entry_id, entry_id in sup)

        for e in st.entries:
            if e.kind == "correction":
                for p in e.parents:
                    target = local(p) if p in entries else foreign(p, None)
                    g.edges.add((local(e.id), target, "supersedes", "solid"))
            if e.kind == "relation":
                m = _REL.search(e.body)
                if m and len(e.parents) == 2:
                    ends = [local(p) if p in entries else foreign(p, None) for p in e.parents]
                    frm = _body_value(e.body, "from") or e.parents[0]
                    to = _body_value(e.body, "to") or e.parents[1]
                    if {frm, to} == set(e.parents):
                        ends = [
                            local(frm) if frm in entries else foreign(frm, None),
                            local(to) if to in entries else foreign(to, None),
                        ]
                    g.edges.add((ends[0], ends[1], m.group(1), "solid"))
            for p in e.parents:
                if p not in entries:
                    g.edges.add((local(e.id), foreign(p, None), "parent in another line", "thick"))
            pinned = field_of(e.body, "pin")
            if pinned and pinned in e.parents:
                target = local(pinned) if pinned in entries else foreign(pinned, None)
                g.edges.add((local(e.id), target, "pins", "dotted"))
            o = origin_of(e.body)
            if o is not None:
                g.edges.add((local(e.id), foreign(o["id"], o["line"]), f"origin {o['line']}", "dotted"))
        for key, ids in st.threads.items():
            if HEX64.fullmatch(key) and key in entries:
                target = local(key)
            else:
                target = f"t_{_ident(name)}_{_slug(key)}"
                g.nodes.setdefault(target, Node(target, name, f"thread: {_short(key)}", shape="thread"))
            for entry_id in ids:
                if entry_id != key:
                    g.edges.add((local(entry_id), target, "thread", "dotted"))
    return g


def _body_value(body: str, key: str) -> Optional[str]:
    m = re.search(rf"(?m)^{key}:[ \t]*([0-9a-f]{{64}})[ \t]*$", body)
    return m.group(1) if m else None


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _slug(text: str) -> str:
    """A mermaid/dot-safe node name for a thread, stable across runs and distinct per name."""
    import hashlib

    return re.sub(r"[^A-Za-z0-9_]", "_", text)[:32] + "_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _mermaid_text(text: str) -> str:
    out = text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    return out.replace("`", "#96;").replace("|", "#124;")


def _clustered(g: Graph, opening: Callable[[str], list[str]], node: Callable[[Node], str], closing: str) -> list[str]:
    """Both renderers' node lines: each line's nodes (by key) inside its cluster (`opening`
    its first lines, `closing` its last), lines by name, then the nodes of no line."""
    by_line: dict[Optional[str], list[Node]] = {}
    for n in g.nodes.values():
        by_line.setdefault(n.line, []).append(n)
    out: list[str] = []
    for line in sorted(by_line, key=lambda x: (x is None, x or "")):
        nodes = sorted(by_line[line], key=lambda n: n.key)
        if line is None:
            out += [f"  {node(n)}" for n in nodes]
            continue
        out += opening(line) + [f"    {node(n)}" for n in nodes] + [closing]
    return out


def _mermaid_node(n: Node) -> str:
    label = _mermaid_text(n.label)
    return n.key + {"thread": f'(["{label}"])', "missing": f'{{{{"{label}"}}}}'}.get(n.shape, f'["{label}"]')


def _dot_node(n: Node) -> str:
    attrs = [f'label="{_dot_text(n.label)}"']
    if n.shape == "thread":
        attrs.append("shape=ellipse")
    if n.shape == "missing":
        attrs.append('color="#cc0000", fontcolor="#cc0000"')
    if n.superseded:
        attrs.append('style=dashed, fontcolor="#777777"')
    return f'"{n.key}" [{", ".join(attrs)}];'


def render_mermaid(g: Graph) -> str:
    """A fenced ```mermaid block: pasted into any markdown file, GitHub, GitLab, Gitea
    and Bitbucket draw it."""
    out = ["```mermaid", "flowchart LR"]
    out += _clustered(g, lambda line: [f'  subgraph L_{_ident(line)}["line {line}"]'], _mermaid_node, "  end")
    arrows = {"solid": "-->", "dotted": "-.->", "thick": "==>"}
    for a, b, label, style in sorted(g.edges):
        out.append(f"  {a} {arrows[style]}|{_mermaid_text(label)}| {b}")
    sup = sorted(n.key for n in g.nodes.values() if n.superseded)
    missing = sorted(n.key for n in g.nodes.values() if n.shape == "missing")
    out.append("  classDef superseded stroke-dasharray: 5 3,color:#777777")
    out.append("  classDef missing stroke:#cc0000,color:#cc0000")
    if sup:
        out.append(f"  class {','.join(sup)} superseded")
    if missing:
        out.append(f"  class {','.join(missing)} missing")
    out.append("```")
    return "\n".join(out) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_dot(g: Graph) -> str:
    out = ["digraph lifeline {", "  rankdir=LR;", '  node [shape=box, fontsize=10, fontname="Helvetica"];']
    out += _clustered(
        g, lambda line: [f'  subgraph "cluster_{line}" {{', f'    label="line {_dot_text(line)}";'], _dot_node, "  }"
    )
    styles = {"solid": "solid", "dotted": "dotted", "thick": "bold"}
    for a, b, label, style in sorted(g.edges):
        out.append(f'  "{a}" -> "{b}" [label="{_dot_text(label)}", style={styles[style]}];')
    out.append("}")
    return "\n".join(out) + "\n"


def check_origins(
    index: LineIndex, entries: Iterable[Entry]
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(anchored, forged) origin links of a line's entries.

    anchored: (copy id, source id, line) whose source exists in the named real line
    and agrees with the copy (same kind, author, agent, provider, model, summary, and
    the copy's body starts with the source's). forged: the source exists but the copy
    does not agree with it. A link whose line is not in this repository, or does not
    hold the id (a ledger imported from elsewhere), is neither: nothing can judge it.
    """
    anchored: list[tuple[str, str, str]] = []
    forged: list[tuple[str, str, str]] = []
    for e in entries:
        o = origin_of(e.body)
        if o is None:
            continue
        source = index.get(o["line"], o["id"])
        if source is None:
            continue
        same = all(
            getattr(source, f) == getattr(e, f) for f in ("kind", "author", "agent", "provider", "model", "summary")
        )
        if same and e.body.startswith(source.body):
            anchored.append((e.id, o["id"], o["line"]))
        else:
            forged.append((e.id, o["id"], o["line"]))
    return anchored, forged
