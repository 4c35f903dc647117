"""A line of the ledger as git objects: one ref, one commit per append, one blob per entry.

Layout (docs/FORMAT.md is the normative description):
    refs/lifeline/<line> -> commit -> tree { entries/<id[0:2]>/<id[2:4]>/<id[4:]> : blob }
Each blob is the entry's canonical JSON. Every commit's tree is the full snapshot of
the line, so any commit answers "what was the ledger then" and a merge is a union.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional

import pygit2

from .errors import ConflictError, InputError, LifelineError
from .gitrepo import GitRepo
from .model import HEX64, MIN_PREFIX, Entry

REF_PREFIX = "refs/lifeline/"
ENTRIES_DIR = "entries"
FORMAT_VERSION = "1"
DEFAULT_LINE = "main"
LINE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
_HEX = re.compile(r"[0-9a-f]+")
_CAS_ATTEMPTS = 64
_LOOSE_SAMPLE_DIR = "17"  # git gc --auto estimates loose objects from this one fan-out dir
_LOOSE_SAMPLE_LIMIT = 27  # ~ gc.auto (6700) / 256


def validate_line(name: str) -> str:
    if not isinstance(name, str) or not LINE_RE.fullmatch(name):
        raise InputError(
            f"invalid line name {name!r}: use 1-63 letters, digits, '-' or '_', "
            "starting with a letter or digit")
    return name


def entry_path(entry_id: str) -> tuple[str, str, str]:
    return entry_id[0:2], entry_id[2:4], entry_id[4:]


@dataclass
class LoadResult:
    """Entries read from one commit, plus whatever could not be read as an entry."""

    entries: dict = field(default_factory=dict)  # id -> Entry
    blobs: dict = field(default_factory=dict)    # id -> blob oid (hex)
    problems: list = field(default_factory=list)  # (path, message)


@dataclass
class AppendResult:
    added: list            # entries newly written
    existing: list         # entries already present (idempotent no-op)
    commit: Optional[str]  # the new head, or None when nothing was written


class LineStore:
    """Reads and appends one line (`refs/lifeline/<line>`)."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        self.gr = gr
        self.repo: pygit2.Repository = gr.repo
        self.line = validate_line(line)
        self.ref_name = REF_PREFIX + line

    # ---- refs -------------------------------------------------------------
    def head(self) -> Optional[str]:
        try:
            ref = self.repo.lookup_reference(self.ref_name)
        except (KeyError, pygit2.InvalidSpecError):
            return None
        target = ref.target
        if not isinstance(target, pygit2.Oid):
            raise LifelineError(f"{self.ref_name} is a symbolic ref; a line ref must point at a commit")
        return str(target)

    def entries_tree(self, commit_id: Optional[str]) -> Optional[pygit2.Tree]:
        """The `entries/` tree of a commit (None for an empty line)."""
        if commit_id is None:
            return None
        obj = self.repo[commit_id]
        if not isinstance(obj, pygit2.Commit):
            raise LifelineError(f"{self.ref_name} points at a {obj.type_str}, not a commit")
        tree = obj.tree
        if ENTRIES_DIR not in tree:
            return None
        sub = self.repo[tree[ENTRIES_DIR].id]
        return sub if isinstance(sub, pygit2.Tree) else None

    def entries_tree_id(self, commit_id: Optional[str]) -> Optional[str]:
        tree = self.entries_tree(commit_id)
        return str(tree.id) if tree is not None else None

    # ---- lookups ----------------------------------------------------------
    def _lookup_blob(self, tree: Optional[pygit2.Tree], entry_id: str) -> Optional[pygit2.Oid]:
        if tree is None:
            return None
        a, b, rest = entry_path(entry_id)
        try:
            return tree[f"{a}/{b}/{rest}"].id
        except KeyError:
            return None

    def has(self, entry_id: str, commit_id: Optional[str] = None) -> bool:
        tree = self.entries_tree(commit_id if commit_id else self.head())
        return self._lookup_blob(tree, entry_id) is not None

    def get(self, entry_id: str, commit_id: Optional[str] = None) -> Optional[Entry]:
        tree = self.entries_tree(commit_id if commit_id else self.head())
        oid = self._lookup_blob(tree, entry_id)
        return Entry.from_json(self.repo[oid].data) if oid is not None else None

    def resolve(self, prefix: str, commit_id: Optional[str] = None) -> str:
        """Full id for a full id or a unique prefix of at least MIN_PREFIX hex chars.

        Costs a couple of tree reads whatever the ledger size, thanks to the fan-out.
        """
        p = prefix.strip().lower()
        if len(p) < MIN_PREFIX or not _HEX.fullmatch(p):
            raise InputError(
                f"invalid id {prefix!r}: give a full id or a prefix of at least {MIN_PREFIX} hex characters")
        tree = self.entries_tree(commit_id if commit_id else self.head())
        matches = []
        if tree is not None:
            a, b, rest = entry_path(p)
            try:
                leaf = self.repo[tree[f"{a}/{b}"].id]
            except KeyError:
                leaf = None
            if isinstance(leaf, pygit2.Tree):
                matches = [a + b + item.name for item in leaf if item.name.startswith(rest)]
        if not matches:
            raise InputError(f"no entry {prefix!r} in line {self.line!r}")
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in sorted(matches)[:5])
            raise InputError(f"ambiguous id prefix {prefix!r} in line {self.line!r}: matches {shown}")
        return matches[0]

    # ---- reading everything ----------------------------------------------
    def iter_blobs(self, commit_id: Optional[str] = None) -> Iterator[tuple[str, str, pygit2.Object]]:
        """(path, id-from-path, object) for every object under entries/."""
        tree = self.entries_tree(commit_id if commit_id is not None else self.head())
        if tree is None:
            return
        for a in tree:
            sub_a = self.repo[a.id]
            if not isinstance(sub_a, pygit2.Tree):
                yield a.name, a.name, sub_a
                continue
            for b in sub_a:
                sub_b = self.repo[b.id]
                if not isinstance(sub_b, pygit2.Tree):
                    yield f"{a.name}/{b.name}", a.name + b.name, sub_b
                    continue
                for c in sub_b:
                    yield f"{a.name}/{b.name}/{c.name}", a.name + b.name + c.name, self.repo[c.id]

    def load(self, commit_id: Optional[str] = None) -> LoadResult:
        """Every readable entry of a commit; unreadable ones become problems, never crashes."""
        result = LoadResult()
        for path, pid, obj in self.iter_blobs(commit_id):
            problem = None
            if not isinstance(obj, pygit2.Blob):
                problem = "not a blob"
            elif not HEX64.fullmatch(pid) or len(path) != 66:
                problem = "path is not an entry id"
            if problem is None:
                try:
                    entry = Entry.from_json(obj.data)
                except LifelineError as exc:
                    problem = f"unreadable entry: {exc}"
                else:
                    if entry.id != pid:
                        problem = f"stored id {entry.id[:12]} differs from its path"
            if problem is not None:
                result.problems.append((f"{ENTRIES_DIR}/{path}", problem))
                continue
            result.entries[pid] = entry
            result.blobs[pid] = str(obj.id)
        return result

    # ---- writing ----------------------------------------------------------
    def _insert(self, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
        """New entries tree = base + blobs {id: blob oid}; rewrites only touched subtrees."""
        groups: dict = {}
        for entry_id, oid in blobs.items():
            a, b, rest = entry_path(entry_id)
            groups.setdefault(a, {}).setdefault(b, {})[rest] = oid
        top = self.repo.TreeBuilder(base) if base is not None else self.repo.TreeBuilder()
        for a, by_b in groups.items():
            sub_a = self._subtree(base, a)
            tb_a = self.repo.TreeBuilder(sub_a) if sub_a is not None else self.repo.TreeBuilder()
            for b, leaves in by_b.items():
                sub_b = self._subtree(sub_a, b)
                tb_b = self.repo.TreeBuilder(sub_b) if sub_b is not None else self.repo.TreeBuilder()
                for rest, oid in leaves.items():
                    tb_b.insert(rest, oid, pygit2.GIT_FILEMODE_BLOB)
                tb_a.insert(b, tb_b.write(), pygit2.GIT_FILEMODE_TREE)
            top.insert(a, tb_a.write(), pygit2.GIT_FILEMODE_TREE)
        return top.write()

    def _subtree(self, tree: Optional[pygit2.Tree], name: str) -> Optional[pygit2.Tree]:
        if tree is None or name not in tree:
            return None
        obj = self.repo[tree[name].id]
        return obj if isinstance(obj, pygit2.Tree) else None

    def root_tree(self, entries_tree_oid: pygit2.Oid) -> pygit2.Oid:
        tb = self.repo.TreeBuilder()
        tb.insert(ENTRIES_DIR, entries_tree_oid, pygit2.GIT_FILEMODE_TREE)
        return tb.write()

    def _ensure_reflog(self) -> None:
        # git and libgit2 write a reflog for refs outside heads/remotes/notes only
        # when the log file already exists; create it so every move is recorded.
        log = self.gr.common_dir / "logs" / self.ref_name
        if not log.exists():
            log.parent.mkdir(parents=True, exist_ok=True)
            log.touch()

    def signature(self, when: int) -> pygit2.Signature:
        name, email = self.gr.identity()
        return pygit2.Signature(name, email, when, 0)

    def append(self, entries: list, message_for, existing_check=None) -> AppendResult:
        """Append entries in one commit; compare-and-swap on the ref, retried.

        `message_for(new_entries)` builds the commit message from what is really new.
        `existing_check(entry, head)` may report an entry as already present (dedup_key).
        Entries already in the line are skipped, so appending twice is a no-op.
        """
        if not entries:
            return AppendResult([], [], None)
        sig_time = max(int(e.ts.timestamp()) for e in entries)
        sig = self.signature(sig_time)
        blob_oids = {e.id: self.repo.create_blob(e.to_json()) for e in entries}
        self._ensure_reflog()
        for attempt in range(_CAS_ATTEMPTS):
            head = self.head()
            base = self.entries_tree(head)
            new, existing = [], []
            seen = set()
            for e in entries:
                if e.id in seen:
                    continue
                seen.add(e.id)
                if self._lookup_blob(base, e.id) is not None or (existing_check and existing_check(e, head)):
                    existing.append(e)
                else:
                    new.append(e)
            if not new:
                return AppendResult([], existing, None)
            tree = self.root_tree(self._insert(base, {e.id: blob_oids[e.id] for e in new}))
            parents = [pygit2.Oid(hex=head)] if head else []
            commit = self.repo.create_commit(None, sig, sig, message_for(new), tree, parents)
            if self._move_ref(head, commit, f"lifeline: append {len(new)}"):
                self._maybe_gc()
                return AppendResult(new, existing, str(commit))
            time.sleep(random.uniform(0.001, 0.004) * min(attempt + 1, 10))
        raise ConflictError(f"{self.ref_name} kept moving under concurrent writers; nothing was written, try again")

    def _move_ref(self, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
        """Compare-and-swap: move the ref from `old` to `new`; False when someone else won."""
        self._ensure_reflog()
        try:
            if old is None:
                self.repo.create_reference_direct(self.ref_name, new, False, message=message)
                return True
            ref = self.repo.lookup_reference(self.ref_name)
            if str(ref.target) != old:
                return False
            ref.set_target(new, message)
            return True
        except (pygit2.AlreadyExistsError, KeyError):
            return False
        except pygit2.GitError as exc:
            text = str(exc)
            if "does not match" in text or "lock" in text.lower() or "exists" in text:
                return False
            raise LifelineError(f"cannot update {self.ref_name}: {text}") from None

    def move_ref(self, old: Optional[str], new: str, message: str) -> bool:
        return self._move_ref(old, pygit2.Oid(hex=new), message)

    def _maybe_gc(self) -> None:
        # libgit2 never runs git's auto-gc; loose objects would pile up (6 per append).
        # Sample one fan-out directory the way `git gc --auto` does, and only then spawn it.
        sample = self.gr.common_dir / "objects" / _LOOSE_SAMPLE_DIR
        try:
            count = len(os.listdir(sample))
        except OSError:
            return
        if count > _LOOSE_SAMPLE_LIMIT and os.environ.get("GIT_LIFELINE_NO_GC") != "1":
            self.gr.git(["gc", "--auto", "--quiet"], check=False)


def list_lines(gr: GitRepo) -> list:
    """Names of the repository's lines (refs/lifeline/<name>), sorted."""
    names = []
    for ref in gr.repo.references.iterator():
        name = ref.name
        if name.startswith(REF_PREFIX):
            line = name[len(REF_PREFIX):]
            if LINE_RE.fullmatch(line):
                names.append(line)
    return sorted(names)


_ENTRY_PATH = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}")


def is_entry_path(path: str) -> bool:
    return bool(_ENTRY_PATH.fullmatch(path))


def diff_entry_trees(repo: pygit2.Repository, old: Optional[pygit2.Tree], new: Optional[pygit2.Tree],
                     _depth: int = 0, _prefix: str = "") -> Iterator[tuple]:
    """Leaves that differ between two entries trees: (path, old_oid, new_oid, new_kind).

    Subtrees with equal oids are skipped, so the cost follows the size of the change,
    not of the ledger. Anything that is not where an entry blob belongs is yielded
    too, with its path, so callers can report it.
    """
    old_items = {e.name: e for e in old} if old is not None else {}
    new_items = {e.name: e for e in new} if new is not None else {}
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
            yield from diff_entry_trees(repo, repo[o.id] if o is not None else None,
                                        repo[n.id] if n is not None else None, _depth + 1, path + "/")
            continue
        if _depth < 2 and (o_tree or n_tree):
            # a tree replaced by a file or the reverse: report both sides as leaves
            if o_tree:
                yield from diff_entry_trees(repo, repo[o.id], None, _depth + 1, path + "/")
            if n_tree:
                yield from diff_entry_trees(repo, None, repo[n.id], _depth + 1, path + "/")
            if o is not None and not o_tree:
                yield path, o.id, None, o.type_str
            if n is not None and not n_tree:
                yield path, None, n.id, n.type_str
            continue
        kind = None
        if n is not None:
            kind = "blob" if n.type_str == "blob" and n.filemode in (pygit2.GIT_FILEMODE_BLOB,) else (
                n.type_str if n.type_str != "blob" else "blob-with-mode")
        yield path, o.id if o is not None else None, n.id if n is not None else None, kind
