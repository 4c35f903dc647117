"""Two tree names for one entry path (a duplicate, or a name with slashes) cannot carry an
unchecked copy of the entry: verify and pre-receive refuse the tree.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from kit.entries import make_entry
from kit.repos import bare, client, git_push, init_repo, ref
from kit.run import cli, git
from kit.tamper import SIG, blob_bytes


def push(repo: Path, *specs: str) -> tuple:
    """A push past the client's own pre-push hook: what the server alone refuses."""
    return git_push(repo, *specs, flags=("--no-verify",))


def raw_tree(repo: pygit2.Repository, items: list) -> pygit2.Oid:
    """A tree object written byte for byte: [(mode, name bytes, oid)] in the order given
    (what a pusher can send: git receive-pack does not fsck by default)."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(str(oid)) for mode, name, oid in items)
    return repo.odb.write(pygit2.GIT_OBJECT_TREE, data)


def two_copies(repo: Path, how: str):
    """A root commit on refs/lifeline/main whose tree holds two blobs of one entry at the same
    path as git prints it: a copy dated 2099 where readers find it, and an honest copy
    (under a duplicate name, or under one name holding slashes)."""
    r = pygit2.Repository(str(repo))
    e = make_entry(1, summary="Where work stopped")
    future = r.create_blob(blob_bytes(e, ts="2099-01-01T00:00:00.000000Z"))
    honest = r.create_blob(e.to_json())
    a, b, rest = e.id[:2], e.id[2:4], e.id[4:]
    if how == "duplicate-name":
        leaf = raw_tree(r, [("100644", rest.encode(), future), ("100644", rest.encode(), honest)])
        entries = raw_tree(r, [("40000", a.encode(), raw_tree(r, [("40000", b.encode(), leaf)]))])
    else:
        leaf = raw_tree(r, [("100644", rest.encode(), future)])
        entries = raw_tree(
            r,
            [
                ("40000", a.encode(), raw_tree(r, [("40000", b.encode(), leaf)])),
                ("100644", f"{a}/{b}/{rest}".encode(), honest),
            ],
        )
    root = raw_tree(r, [("40000", b"entries", entries)])
    commit = r.create_commit(None, SIG, SIG, "x\n", root, [])
    git(repo, "update-ref", "refs/lifeline/main", str(commit))
    return e, str(commit)


@pytest.mark.parametrize("how", ["duplicate-name", "name-with-slashes"])
def test_a_second_tree_name_for_one_entry_cannot_carry_an_unchecked_future_date(tmp_path, how):
    repo = init_repo(tmp_path / "a")
    two_copies(repo, how)
    res = cli(repo, "verify")
    assert res.code == 1, res


def test_pre_receive_refuses_a_tree_with_two_names_for_one_entry(tmp_path, git_dispatch):
    server = bare(tmp_path, "server.git", hook=True)
    a = client(tmp_path, "a", server)
    _e, commit = two_copies(a, "name-with-slashes")
    code, err = push(a, "refs/lifeline/main")
    assert code != 0, err
    assert ref(server, "refs/lifeline/main") is None
