"""Rewriting real git objects the way an attacker (or a bug) would: a line's files as a map,
a tree written from one, a line's history re-created through a transform, one more commit,
an entry's content changed in place under its id."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Callable, Union

import pygit2
from pygit2.enums import FileMode, SortMode

from git_lifeline.core.entry import Entry
from git_lifeline.git.repo import open_repo
from git_lifeline.git.store import LineStore
from kit.entries import EntryField
from kit.home import AUTHOR_EMAIL, AUTHOR_NAME
from kit.run import git

# the signature of the commits a test makes by hand
SIG = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
# a tree's blobs: path -> (blob id, file mode)
Files = dict[str, tuple[pygit2.Oid, FileMode]]
# what a transform gives back: an existing blob (id, mode), or new content for a new blob
NewFiles = Mapping[str, Union[tuple[pygit2.Oid, FileMode], bytes, str]]


def flatten(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Files:
    """{path: (oid, filemode)} for every blob under a tree."""
    out: Files = {}
    for item in tree:
        assert item.name is not None
        path = prefix + item.name
        if item.type_str == "tree":
            subtree = repo[item.id]
            assert isinstance(subtree, pygit2.Tree)
            out.update(flatten(repo, subtree, path + "/"))
        else:
            out[path] = (item.id, item.filemode)
    return out


def build_tree(repo: pygit2.Repository, files: NewFiles) -> pygit2.Oid:
    """Write a nested tree from {path: (oid, mode)} (or {path: bytes} for new blobs)."""
    index = pygit2.Index()
    for path, value in sorted(files.items()):
        if isinstance(value, (bytes, str)):
            data = value.encode("utf-8") if isinstance(value, str) else value
            value = (repo.create_blob(data), FileMode.BLOB)
        oid, mode = value
        index.add(pygit2.IndexEntry(path, oid, mode))
    return index.write_tree(repo)


def rewrite_line(repo_path: Path, transform: Callable[[int, Files], NewFiles], ref: str = "refs/lifeline/main") -> str:
    """Re-create the commit chain of `ref`, passing each commit's files (oldest first,
    numbered from 0) through `transform`, then move the ref with real `git update-ref`
    (so the reflog records it). Untouched commits keep their ids. Returns the new head."""
    repo = pygit2.Repository(str(repo_path))
    tip = repo.references[ref].target
    commits = list(repo.walk(tip, SortMode.TOPOLOGICAL | SortMode.REVERSE))
    mapping: dict[pygit2.Oid, pygit2.Oid] = {}
    for n, c in enumerate(commits):
        parents = [mapping.get(p, p) for p in c.parent_ids]
        tree = build_tree(repo, transform(n, flatten(repo, c.tree)))
        mapping[c.id] = repo.create_commit(None, c.author, c.committer, c.message, tree, parents)
    new_head = str(mapping[commits[-1].id])
    git(repo_path, "update-ref", "-m", "test: rewrite", ref, new_head)
    return new_head


def add_commit(repo_path: Path, transform: Callable[[Files], NewFiles], ref: str = "refs/lifeline/main") -> str:
    """Put one more commit on `ref` whose files are transform(files of the head)."""
    repo = pygit2.Repository(str(repo_path))
    tip = repo[repo.references[ref].target]
    assert isinstance(tip, pygit2.Commit)
    tree = build_tree(repo, transform(flatten(repo, tip.tree)))
    new = repo.create_commit(None, SIG, SIG, "test: extra commit\n", tree, [tip.id])
    git(repo_path, "update-ref", "-m", "test: add commit", ref, str(new))
    return str(new)


def entry_blobs(path: Path, line: str = "main") -> dict[str, str]:
    """{entry id: blob oid} of a line."""
    out: dict[str, str] = {}
    for _path, pid, obj in LineStore(open_repo(str(path)), line).iter_blobs():
        assert obj is not None, f"the blob of {pid} is missing"
        out[pid] = str(obj.id)
    return out


def tamper(path: Path, entry_id: str, line: str = "main", summary: str = "tampered") -> str:
    """Append a commit that rewrites an entry's content in place (keeping its id)."""
    store = LineStore(open_repo(str(path)), line)
    head = store.head()
    assert head is not None, f"{line} has no head to tamper with"
    entry = store.read(entry_id)
    assert entry is not None, f"{entry_id} is not on {line}"
    doc = entry.to_json().replace(b'"summary":"', f'"summary":"{summary} '.encode(), 1)
    blob = store.repo.create_blob(doc)
    tree = store.root_tree(store.insert(store.tree(head), {entry_id: blob}))
    sig = pygit2.Signature("Mallory", "m@example.com")
    commit = store.repo.create_commit(None, sig, sig, "innocent", tree, [pygit2.Oid(hex=head)])
    assert store.move_ref(head, str(commit), "tamper")
    return str(commit)


def store_as_is(repo: Path, line: str, *entries: Entry) -> str:
    """Store entries as they are (no parent or origin checks: what an old client or a
    hand-made commit can write); the new head."""
    result = LineStore(open_repo(str(repo)), line).append(list(entries), lambda new: "test: stored as is\n")
    assert result.commit
    return result.commit


def blob_bytes(entry: Entry, **changes: EntryField) -> bytes:
    """The entry's blob with some fields changed (a copy of the same id, or a tampered one)."""
    doc = json.loads(entry.to_json())
    doc.update(changes)
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()
