"""Where a reader finds each path a range adds (verify.py's tree-name check).

git prints a tree entry named "13/c5/<60 hex>" directly in the tree dir, or a name given
twice in one tree, as an entry's path; a reader (trees.lookup) does not find that blob
there. git's own fsck refuses such trees, but receive-pack does not run it by default;
judged by path alone, the copy readers see could carry what the copy checked did not (a
date, a secret). TipNames takes git's diff of the range as it comes and reads each leaf
tree of the tip once, as raw bytes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from ..core.entry import abbrev
from .blobs import read_blobs
from .checks import Problem, batch_read_min
from .command import GitCommandError
from .fanout import FanoutLog
from .libgit2 import pygit2
from .trees import FANOUT_NAMES, is_entry_path, mode_kind, parse_tree
from .verify_diff import TreeChange


@dataclass
class _Suspect:
    """A path that came in no later than the greatest before it: named twice, or not."""

    at: int  # its place among the named paths
    path: str
    key: str
    new: bytes
    found: Optional[bytes]


READ_AHEAD_MIN = 1 << 14  # changes in a group from which its leaf trees are read ahead


class TipNames:
    """Tree entries that git prints as an entry's path but a reader does not find there:
    a name holding slashes ("13/c5/<60 hex>" directly in the tree dir) or a name given
    twice in one tree. git's own fsck refuses such trees, but receive-pack does not run it
    by default; judged by path alone, the copy readers see could carry what the copy
    checked did not (a date, a secret).

    Each leaf tree of the tip is read once, as raw bytes, and its names scanned (the first
    of a name wins, as in trees.lookup); the fan-out levels are found by name as a reader
    finds them. git prints a well-formed tree's paths in strictly increasing order, so a
    path named twice comes no later than the greatest before it: only such paths are kept,
    and only then is the diff read again to tell which came before."""

    def __init__(self, log: FanoutLog, tree: Optional[pygit2.Tree]):
        self.repo = log.repo
        self.gr = log.gr
        self.tree = tree
        self.prefix = log.ns.tree_dir + "/"
        self._found: list[Problem | _Suspect] = []
        self._count = 0
        self._last = ""
        # first-level name -> {second-level name: leaf tree id (raw), None: not a tree}, or
        # None where that tree is not plainly a fan-out tree (then libgit2 finds each name)
        self._firsts: dict[str, Optional[dict[str, Optional[bytes]]]] = {}
        self._leaf_id: Optional[bytes] = None
        self._leaf: dict[bytes, Optional[bytes]] = {}
        self._fetched: dict[bytes, bytes] = {}  # leaf tree id (raw) -> its bytes, read ahead

    def check(self, changes: list[TreeChange]) -> None:
        prefix = self.prefix
        for status, _mode, new, path in changes:
            if status == "D" or not path.startswith(prefix) or not is_entry_path(path[len(prefix) :]):
                continue
            key = path[len(prefix) :].replace("/", "")
            found = self._stored(key)
            at, self._count = self._count, self._count + 1
            if path <= self._last:
                self._found.append(_Suspect(at, path, key, bytes.fromhex(new), found))
                continue
            self._last = path
            if found != bytes.fromhex(new):
                self._found.append(_not_found(path, key))

    def problems(self, again: Callable[[], Iterator[list[TreeChange]]]) -> list[Problem]:
        suspects = {s.path for s in self._found if isinstance(s, _Suspect)}
        first: dict[str, int] = {}
        if suspects:
            at = 0
            for changes in again():
                for status, _mode, _new, path in changes:
                    if status == "D" or not path.startswith(self.prefix):
                        continue
                    if not is_entry_path(path[len(self.prefix) :]):
                        continue
                    if path in suspects:
                        first.setdefault(path, at)
                    at += 1
        out: list[Problem] = []
        for p in self._found:
            if not isinstance(p, _Suspect):
                out.append(p)
            elif first.get(p.path, -1) < p.at:  # named before (or git could not tell: refused)
                out.append(Problem("foreign-file", f"{p.path} is named twice in one tree"))
            elif p.found != p.new:
                out.append(_not_found(p.path, p.key))
        return out

    def read_ahead(self, changes: list[list[TreeChange]]) -> None:
        """Read the leaf trees these changes name in one `git cat-file --batch`, when they
        are many: libgit2's read (`odb.read`) keeps native memory of about the object's
        size (a leaf holds ~15 entries of 88 bytes at 1M: ~85 MB in all); below
        READ_AHEAD_MIN changes the leaves are small and libgit2 reads them for less CPU."""
        self._fetched = {}
        if sum(len(piece) for piece in changes) < READ_AHEAD_MIN:
            return
        wanted: dict[str, None] = {}
        for piece in changes:
            for status, _mode, _new, path in piece:
                if status != "D" and path.startswith(self.prefix) and is_entry_path(path[len(self.prefix) :]):
                    key = path[len(self.prefix) :]
                    leaf = self._leaf_of(key[0:2], key[3:5])
                    if leaf is not None:
                        wanted[leaf.hex()] = None
        if len(wanted) < batch_read_min():
            return
        with contextlib.suppress(GitCommandError):
            for oid, data in read_blobs(self.gr, list(wanted), kind=b"tree"):
                if data is not None:
                    self._fetched[bytes.fromhex(oid)] = data

    def _stored(self, key: str) -> Optional[bytes]:
        """The blob a reader finds under entry id `key` in the tip (raw id), or None."""
        leaf = self._leaf_of(key[0:2], key[2:4])
        if leaf != self._leaf_id or leaf is None:
            self._leaf_id, self._leaf = leaf, self._leaf_blobs(leaf)
        return self._leaf.get(key[4:].encode("ascii"))

    def _leaf_of(self, a: str, b: str) -> Optional[bytes]:
        """The id of the leaf tree a reader finds at `a`/`b` in the tip, or None."""
        first = self._firsts.get(a, _UNREAD)
        if first is _UNREAD:
            first = self._firsts[a] = self._first_level(a)
        if first is not None:
            return first.get(b)
        child = _fanout_child(_fanout_child(self.tree, a), b)  # as libgit2 finds it
        return child.id.raw if child is not None else None

    def _first_level(self, a: str) -> Optional[dict[str, Optional[bytes]]]:
        """A first-level fan-out tree's names, read as raw bytes: when its names are plain
        (two ASCII characters each, in strictly increasing order), any lookup finds what
        libgit2's binary search does; None otherwise (the caller asks libgit2 name by name)."""
        child = _fanout_child(self.tree, a)
        if child is None:
            return {}
        try:
            kind, data = self.repo.odb.read(child.id)
        except (KeyError, ValueError, pygit2.GitError):
            return {}  # missing: nothing is found in it
        items = parse_tree(data) if kind == pygit2.GIT_OBJECT_TREE else None
        if items is None:
            return {}
        names = [name for name, _mode, _oid in items]
        if any(len(n) != 2 or not n.isascii() for n in names):
            return None
        if any(x >= y for x, y in zip(names, names[1:], strict=False)):
            return None
        return {name.decode("ascii"): (oid if mode_kind(mode) == "tree" else None) for name, mode, oid in items}

    def _leaf_blobs(self, leaf: Optional[bytes]) -> dict[bytes, Optional[bytes]]:
        """name -> raw blob id (None: not a blob) of a leaf tree, the first of a name
        winning (as trees.lookup scans a leaf); empty for a missing tree or one that does
        not parse."""
        if leaf is None:
            return {}
        data = self._fetched.pop(leaf, None)
        if data is None:
            try:
                kind, data = self.repo.odb.read(pygit2.Oid(raw=leaf))
            except (KeyError, ValueError, pygit2.GitError):
                return {}
            if kind != pygit2.GIT_OBJECT_TREE:
                return {}
        out: dict[bytes, Optional[bytes]] = {}
        if _plain_leaf(data):  # what this tool writes: the general parse would find the same
            for at in range(0, len(data), _PLAIN):
                out.setdefault(data[at + 7 : at + 67], data[at + 68 : at + 88])
            return out
        for name, mode, oid in parse_tree(data) or ():
            if name not in out:
                out[name] = oid if mode_kind(mode) == "blob" else None
        return out


_UNREAD: dict[str, Optional[bytes]] = {}  # a first-level tree not read yet (compared by identity)
_PLAIN = 88  # bytes of a leaf entry as this tool writes it: "100644 ", 60 hex, NUL, 20-byte id


def _plain_leaf(data: bytes) -> bool:
    """Every entry "100644 <60 bytes without a NUL>\0<20 bytes>", end to end."""
    if not data or len(data) % _PLAIN:
        return False
    return all(
        data.startswith(b"100644 ", at) and data.find(b"\0", at + 7, at + 68) == at + 67
        for at in range(0, len(data), _PLAIN)
    )


def _not_found(path: str, key: str) -> Problem:
    return Problem(
        "foreign-file",
        f"{path} is not where a reader finds {abbrev(key)} (a tree "
        "entry name holding a slash, or one name given twice)",
    )


def _fanout_child(tree: Optional[pygit2.Tree], name: str) -> Optional[pygit2.Tree]:
    """The fan-out subtree `tree` names `name` (two hex digits), or None."""
    shared = FANOUT_NAMES.get(name)
    if tree is None or shared is None:
        return None
    try:
        if shared not in tree:
            return None
        child = tree[shared]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return child if isinstance(child, pygit2.Tree) else None
