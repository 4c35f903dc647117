"""verify reads git's diff of a line as it comes and keeps no set of every path: a path git
prints twice is caught because it comes no later than a greater one before it, and only
then is the diff read again. These trees print a path twice with other entries between
the two (a name holding slashes after every fan-out directory), and with the same blob
under both names, so that where a reader finds the entry cannot tell: only "named twice"
does. A path printed out of order but only once is judged by where a reader finds it."""

from __future__ import annotations

import pygit2
import pytest
from kit.entries import make_entry
from kit.home import AUTHOR_EMAIL, AUTHOR_NAME
from kit.repos import init_repo, open_ledger
from kit.run import cli, git

from git_lifeline.core.entry import abbrev

SIG = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)


def raw_tree(repo: pygit2.Repository, items: list) -> pygit2.Oid:
    """A tree object written byte for byte, in the order given (receive-pack does not fsck)."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(str(oid)) for mode, name, oid in items)
    return repo.odb.write(pygit2.GIT_OBJECT_TREE, data)


def fanout(repo: pygit2.Repository, blobs: dict) -> list:
    """The items of an entries tree holding `blobs` ({id: blob oid}) in the two-level fan-out."""
    firsts: dict = {}
    for entry_id, blob in sorted(blobs.items()):
        firsts.setdefault(entry_id[:2], {}).setdefault(entry_id[2:4], []).append(
            ("100644", entry_id[4:].encode(), blob)
        )
    items = []
    for a, seconds in sorted(firsts.items()):
        leaves = [("40000", b.encode(), raw_tree(repo, leaf)) for b, leaf in sorted(seconds.items())]
        items.append(("40000", a.encode(), raw_tree(repo, leaves)))
    return items


def commit_entries(repo_path, items: list, parents: list) -> str:
    r = pygit2.Repository(str(repo_path))
    root = raw_tree(r, [("40000", b"entries", raw_tree(r, items))])
    commit = r.create_commit(None, SIG, SIG, "x\n", root, parents)
    git(repo_path, "update-ref", "refs/lifeline/main", str(commit))
    return str(commit)


def entries_by_id(count: int) -> list:
    return sorted((make_entry(i) for i in range(count)), key=lambda e: e.id)


@pytest.mark.parametrize("on_top", [False, True], ids=["one-commit", "on-top-of-a-clean-commit"])
def test_one_blob_named_twice_with_entries_between_is_refused(tmp_path, on_top):
    repo = init_repo(tmp_path / "repo")
    r = pygit2.Repository(str(repo))
    entries = entries_by_id(6)
    blobs = {e.id: r.create_blob(e.to_json()) for e in entries}
    first = entries[0]
    # every fan-out directory, then the first entry's path again as one name holding slashes
    again = ("100644", f"{first.id[:2]}/{first.id[2:4]}/{first.id[4:]}".encode(), blobs[first.id])
    parents = [commit_entries(repo, fanout(r, {entries[-1].id: blobs[entries[-1].id]}), [])] if on_top else []
    commit_entries(repo, [*fanout(r, blobs), again], parents)
    res = cli(repo, "verify")
    assert res.code == 1, res
    assert f"entries/{first.id[:2]}/{first.id[2:4]}/{first.id[4:]} is named twice in one tree" in res.out + res.err


def test_a_path_out_of_order_but_named_once_is_judged_by_where_a_reader_finds_it(tmp_path):
    repo = init_repo(tmp_path / "repo")
    r = pygit2.Repository(str(repo))
    entries = entries_by_id(6)
    lone = entries[0]  # stored only under a name holding slashes, after every fan-out directory
    blobs = {e.id: r.create_blob(e.to_json()) for e in entries[1:]}
    hidden = ("100644", f"{lone.id[:2]}/{lone.id[2:4]}/{lone.id[4:]}".encode(), r.create_blob(lone.to_json()))
    commit_entries(repo, [*fanout(r, blobs), hidden], [])
    res = cli(repo, "verify")
    assert res.code == 1, res
    out = res.out + res.err
    assert f"is not where a reader finds {abbrev(lone.id)}" in out, out
    assert "named twice" not in out, out


def test_a_clean_line_written_by_the_tool_has_no_path_out_of_order(tmp_path):
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append(entries_by_id(30))
    assert cli(repo, "verify").code == 0
