"""Two-level fan-out trees of content-addressed blobs: `<id[0:2]>/<id[2:4]>/<id[4:]>`.

Every namespace (the ledger's `entries/`, the review trail's `records/`) stores its
blobs in such a tree. Here is what works on the tree itself, whatever the blobs mean:
placing, finding, inserting, diffing, and the union of two trees. Every walk skips
equal subtrees, so its cost follows the change, not the size of the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Protocol, runtime_checkable

from .libgit2 import pygit2

_ENTRY_PATH = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}")
_HEX = re.compile(r"[0-9a-f]+")


Tree = pygit2.Tree  # for the layers above, which annotate with it and never import pygit2


def name_of(item: pygit2.Object) -> str:
    """A tree entry's name (pygit2 types it Optional; an entry read from a tree has one)."""
    return item.name or ""


def tree_at(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Tree:
    """The tree `oid` names; KeyError (the oid) when the object is missing or not a tree."""
    obj = repo[oid]
    if not isinstance(obj, pygit2.Tree):
        raise KeyError(str(oid))
    return obj


def blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    """The bytes of blob `oid`; KeyError (the oid) when it is missing or not a blob.

    Read from the object database by its full id: no object is built around the bytes
    (verify reads every blob of a line, and `repo[oid]` cost a fifth more)."""
    kind, data = repo.odb.read(oid)
    if kind != pygit2.GIT_OBJECT_BLOB:
        raise KeyError(str(oid))
    return data


def commit_at(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Commit:
    """The commit `oid` names; KeyError (the oid) when it is missing or not a commit."""
    obj = repo[oid]
    if not isinstance(obj, pygit2.Commit):
        raise KeyError(str(oid))
    return obj


def entry_path(entry_id: str) -> tuple[str, str, str]:
    return entry_id[0:2], entry_id[2:4], entry_id[4:]


def is_entry_path(path: str) -> bool:
    return bool(_ENTRY_PATH.fullmatch(path))


def subtree(repo: pygit2.Repository, tree: Optional[pygit2.Tree], name: str) -> Optional[pygit2.Tree]:
    if tree is None or name not in tree:
        return None
    obj = repo[tree[name].id]
    return obj if isinstance(obj, pygit2.Tree) else None


def lookup(tree: Optional[pygit2.Tree], key: str) -> Optional[pygit2.Oid]:
    """The blob stored under a 64-hex id, or None."""
    return TreeLookup(tree).find(key)


class TreeLookup:
    """`lookup` of many ids in one tree: each first-level fan-out tree is read once, not
    once per id. (An import into a line of 100,000 looked each of its 125,000 ids up in
    the line's tree: 55 µs an id, most of it reading the same 256-entry trees again.)"""

    def __init__(self, tree: Optional[pygit2.Tree]):
        self.tree = tree
        self._firsts: dict[str, Optional[pygit2.Tree]] = {}

    def find(self, key: str) -> Optional[pygit2.Oid]:
        """The blob stored under a 64-hex id, or None."""
        tree = self.tree
        if tree is None:
            return None
        a, b, rest = entry_path(key)
        first, second = FANOUT_NAMES.get(a), FANOUT_NAMES.get(b)
        if first is None or second is None:  # not a hex id: the plain path lookup
            try:
                item = tree[f"{a}/{b}/{rest}"]
            except KeyError:
                return None
            return item.id if item.type_str == "blob" else None
        # pygit2 (1.21) keeps a reference to every name a Tree is indexed with, and a path
        # lookup ("a/b/c") leaks native memory too: ~240 bytes per lookup, a gigabyte over an
        # import into a million-entry line. The fan-out levels are indexed with the 256 shared
        # names below (a leaked reference to one of them costs nothing); the leaf is scanned.
        if first in self._firsts:
            level = self._firsts[first]
        else:
            level = self._firsts[first] = _child_tree(tree, first)
        node = _child_tree(level, second) if level is not None else None
        if node is None:
            return None
        for stored in node:
            if stored.name == rest:
                return stored.id if stored.type_str == "blob" else None
        return None


def _child_tree(node: pygit2.Tree, name: str) -> Optional[pygit2.Tree]:
    """The subtree `node` names `name` (one of FANOUT_NAMES), or None."""
    if name not in node:
        return None
    child = node[name]
    return child if isinstance(child, pygit2.Tree) else None


# The names of both fan-out levels, one str each: pygit2 (1.21) keeps a reference to every
# name a Tree is indexed with (see `lookup`), so only these shared ones index a fan-out Tree.
FANOUT_NAMES = {f"{i:02x}": f"{i:02x}" for i in range(256)}


def parse_tree(data: bytes) -> Optional[list[tuple[bytes, int, bytes]]]:
    """(name's bytes, mode, raw object id) of each entry of a tree object's bytes, in order;
    None when the bytes are not a well-formed tree (a mode of octal digits up to 0o177777,
    a space, a name, a NUL, a 20-byte id, each entry), as libgit2 refuses to parse one
    and a reader then finds nothing in it. Read from bytes, no pygit2 Tree is built:
    reading and iterating one kept native memory per entry (pygit2 1.21)."""
    out: list[tuple[bytes, int, bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        space = data.find(b" ", pos)
        nul = data.find(b"\0", space + 1) if space > pos else -1
        if nul < 0 or nul + 21 > end or not _OCTAL.fullmatch(data, pos, space):
            return None
        mode = int(data[pos:space], 8)
        if mode > 0o177777:
            return None
        out.append((data[space + 1 : nul], mode, data[nul + 1 : nul + 21]))
        pos = nul + 21
    return out


def mode_kind(mode: int) -> str:
    """The type of object a tree entry's mode names, as libgit2 tells it: "tree", "commit"
    (a gitlink), else "blob"."""
    kind = mode & 0o170000
    return "tree" if kind == 0o040000 else "commit" if kind == 0o160000 else "blob"


_OCTAL = re.compile(rb"[0-7]+")


def prefix_matches(repo: pygit2.Repository, tree: Optional[pygit2.Tree], prefix: str) -> list[str]:
    """Full ids under `tree` starting with `prefix` (at least 4 lowercase hex characters),
    sorted. Two tree reads whatever the size of the log, thanks to the fan-out."""
    if tree is None or len(prefix) < 4 or not _HEX.fullmatch(prefix):
        return []
    a, b, rest = entry_path(prefix)
    try:
        leaf = repo[tree[f"{a}/{b}"].id]
    except KeyError:
        return []
    if not isinstance(leaf, pygit2.Tree):
        return []
    return sorted(a + b + name_of(item) for item in leaf if name_of(item).startswith(rest))


def insert_fanout(repo: pygit2.Repository, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
    """A two-level fan-out tree = base + blobs {64-hex id: blob oid} (ab/cd/<rest>);
    only the touched subtrees are rewritten, so the cost follows the change."""
    groups: dict = {}
    for key, oid in blobs.items():
        a, b, rest = entry_path(key)
        groups.setdefault(a, {}).setdefault(b, {})[rest] = oid
    top = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for a, by_b in groups.items():
        sub_a = subtree(repo, base, a)
        tb_a = repo.TreeBuilder(sub_a) if sub_a is not None else repo.TreeBuilder()
        for b, leaves in by_b.items():
            sub_b = subtree(repo, sub_a, b)
            tb_b = repo.TreeBuilder(sub_b) if sub_b is not None else repo.TreeBuilder()
            for rest, oid in leaves.items():
                tb_b.insert(rest, oid, pygit2.GIT_FILEMODE_BLOB)
            tb_a.insert(b, tb_b.write(), pygit2.GIT_FILEMODE_TREE)
        top.insert(a, tb_a.write(), pygit2.GIT_FILEMODE_TREE)
    return top.write()


def diff_entry_trees(
    repo: pygit2.Repository, old: Optional[pygit2.Tree], new: Optional[pygit2.Tree], _depth: int = 0, _prefix: str = ""
) -> Iterator[tuple]:
    """Leaves that differ between two fan-out trees: (path, old_oid, new_oid, new_kind).

    Subtrees with equal oids are skipped, so the cost follows the size of the change,
    not of the log. Anything that is not where a blob belongs is yielded too, with its
    path, so callers can report it.
    """
    old_items = {name_of(e): e for e in old} if old is not None else {}
    new_items = {name_of(e): e for e in new} if new is not None else {}
    for name in sorted(old_items.keys() | new_items.keys()):
        o, n = old_items.get(name), new_items.get(name)
        # equal oids: skip. A tree's mode is fixed by its type, so only non-trees need the
        # mode compared (reading `filemode` builds an enum: it dominated range verification)
        if o is not None and n is not None and o.id == n.id and (o.type_str == "tree" or o.filemode == n.filemode):
            continue
        path = _prefix + name
        o_tree = o is not None and o.type_str == "tree"
        n_tree = n is not None and n.type_str == "tree"
        if _depth < 2 and (o is None or o_tree) and (n is None or n_tree):
            yield from diff_entry_trees(
                repo,
                tree_at(repo, o.id) if o is not None else None,
                tree_at(repo, n.id) if n is not None else None,
                _depth + 1,
                path + "/",
            )
            continue
        if _depth < 2 and (o_tree or n_tree):
            # a tree replaced by a file or the reverse: report both sides as leaves
            if o is not None and o_tree:
                yield from diff_entry_trees(repo, tree_at(repo, o.id), None, _depth + 1, path + "/")
            if n is not None and n_tree:
                yield from diff_entry_trees(repo, None, tree_at(repo, n.id), _depth + 1, path + "/")
            if o is not None and not o_tree:
                yield path, o.id, None, o.type_str
            if n is not None and not n_tree:
                yield path, None, n.id, n.type_str
            continue
        kind = None
        if n is not None:
            kind = (
                "blob"
                if n.type_str == "blob" and n.filemode in (pygit2.GIT_FILEMODE_BLOB,)
                else (n.type_str if n.type_str != "blob" else "blob-with-mode")
            )
        yield path, o.id if o is not None else None, n.id if n is not None else None, kind


@dataclass(frozen=True)
class Gained:
    """An object a tree holds at an entry's path where the older tree held none, or another."""

    entry_id: str
    oid: str
    kind: Optional[str]  # "blob" for a plain blob; diff_entry_trees' words otherwise
    replaced: bool  # the older tree held another object at that path


@dataclass
class TreeGain:
    """What a fan-out tree gained over an older one (tree_gain)."""

    entries: list[Gained] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # entry ids the older tree held and this one lacks
    foreign: list[str] = field(default_factory=list)  # changed paths where no entry belongs

    @property
    def only_added_blobs(self) -> bool:
        """Nothing but new plain blobs at entry paths: the newer tree extends the older."""
        return not (self.removed or self.foreign) and all(g.kind == "blob" and not g.replaced for g in self.entries)


def tree_gain(repo: pygit2.Repository, old: Optional[str], new: Optional[str]) -> TreeGain:
    """What tree `new` gained over tree `old` (tree ids; None: the empty tree), read by
    diff_entry_trees, so the cost follows the change. KeyError when an id names no tree.
    The one answer to "what did the tree gain" for pulls, the cache and the projection."""
    gain = TreeGain()
    old_tree = tree_at(repo, old) if old is not None else None
    new_tree = tree_at(repo, new) if new is not None else None
    for path, o, n, kind in diff_entry_trees(repo, old_tree, new_tree):
        if not is_entry_path(path):
            gain.foreign.append(path)
        elif n is None:
            gain.removed.append(path.replace("/", ""))
        else:
            gain.entries.append(Gained(path.replace("/", ""), str(n), kind, o is not None))
    return gain


# ---- union of two fan-out trees ---------------------------------------------------------
@dataclass
class Union:
    tree: Optional[pygit2.Oid]  # merged tree (None: both empty)
    incoming: list = field(default_factory=list)  # ids only the remote side had
    local_only: int = 0  # ids only our side had
    picked: list = field(default_factory=list)  # (id, kept blob, other blob): one id, two blobs
    corrupt: list = field(default_factory=list)  # (id or path, reason)


# pick(id, our leaf, their leaf, result) -> the blob to keep, or None (a reason was added to result.corrupt)
Pick = Callable[[str, pygit2.Object, pygit2.Object, Union], Optional[pygit2.Oid]]


@runtime_checkable
class ProgressBar(Protocol):
    """What a walk reports its steps to (a union, verify's commits)."""

    def update(self, n: int) -> None: ...


class NullProgress:
    """A progress context and bar that shows nothing."""

    def __enter__(self) -> NullProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        pass


def bar_of(opened: object) -> ProgressBar:
    """What a progress context gave (fanout.Progress), as a bar (one without `update`
    shows nothing)."""
    return opened if isinstance(opened, ProgressBar) else NullProgress()


def _items(tree: Optional[pygit2.Tree]) -> dict:
    return {name_of(e): e for e in tree} if tree is not None else {}


def _leaf_ids(repo: pygit2.Repository, obj: pygit2.Object, depth: int, prefix: str) -> list[str]:
    """Ids under a subtree taken whole from one side."""
    if depth == 2 or obj.type_str != "tree":
        return [prefix]
    out = []
    for e in tree_at(repo, obj.id):
        out.extend(_leaf_ids(repo, e, depth + 1, prefix + name_of(e)))
    return out


def union_trees(
    repo: pygit2.Repository,
    ours: Optional[pygit2.Tree],
    theirs: Optional[pygit2.Tree],
    pick: Pick,
    progress: Optional[ProgressBar] = None,
) -> Union:
    """Union of two fan-out trees, walking both and skipping equal subtrees; `pick`
    decides when both sides hold one id with different blobs."""
    result = Union(None)
    if ours is None and theirs is None:
        return result
    if ours is not None and (theirs is None or ours.id == theirs.id):
        result.tree = ours.id
        return result
    if ours is None:
        assert theirs is not None
        result.tree = theirs.id
        for e in theirs:
            result.incoming.extend(_leaf_ids(repo, e, 0, name_of(e)))
        return result
    assert theirs is not None
    result.tree = _union(repo, ours, theirs, 0, "", result, pick, progress)
    return result


def _union(
    repo: pygit2.Repository,
    ours: pygit2.Tree,
    theirs: pygit2.Tree,
    depth: int,
    prefix: str,
    result: Union,
    pick: Pick,
    progress: Optional[ProgressBar],
) -> pygit2.Oid:
    mine, other = _items(ours), _items(theirs)
    tb = repo.TreeBuilder(ours)
    for name in sorted(set(mine) | set(other)):
        a, b = mine.get(name), other.get(name)
        if depth == 0 and progress is not None:
            progress.update(1)
        if b is None:
            assert a is not None  # the name is on one side at least
            result.local_only += len(_leaf_ids(repo, a, depth, prefix + name))
            continue
        if a is None:
            tb.insert(name, b.id, b.filemode)
            result.incoming.extend(_leaf_ids(repo, b, depth, prefix + name))
            continue
        if a.id == b.id and a.filemode == b.filemode:
            continue
        path = prefix + name
        if depth < 2:
            if a.type_str == "tree" and b.type_str == "tree":
                tb.insert(
                    name,
                    _union(repo, tree_at(repo, a.id), tree_at(repo, b.id), depth + 1, path, result, pick, None),
                    pygit2.GIT_FILEMODE_TREE,
                )
            else:
                result.corrupt.append((path, "a directory on one side is a file on the other"))
            continue
        if (
            a.type_str != "blob"
            or b.type_str != "blob"
            or a.filemode != b.filemode
            or a.filemode != pygit2.GIT_FILEMODE_BLOB
        ):
            result.corrupt.append((path, "is not a plain blob on both sides"))
            continue
        kept = pick(path, a, b, result)
        if kept is not None and kept != a.id:
            tb.insert(name, kept, pygit2.GIT_FILEMODE_BLOB)
    return tb.write()
