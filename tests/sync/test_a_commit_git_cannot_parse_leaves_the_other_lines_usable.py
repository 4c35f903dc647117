"""A commit git cannot parse on one line neither stops the other lines from being pulled nor
hides them from verify.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit.entries import make_entry, path_of
from kit.repos import bare, client, init_repo, ref
from kit.run import cli, git
from kit.tamper import build_tree, store_as_is

from git_lifeline.git.repo import open_repo
from git_lifeline.git.store import LineStore


def unparsable_commit_on_main(a: Path) -> str:
    """Put on refs/lifeline/main a commit whose committer time overflows (libgit2: 'invalid
    Unix timestamp'); its tree and entries are honest."""
    r = pygit2.Repository(str(a))
    tip = r.references["refs/lifeline/main"].target
    e1 = next(iter(LineStore(open_repo(str(a)), "main").load().entries.values()))
    e2 = make_entry(2, summary="Second", parents=[e1.id])
    tree = build_tree(r, {path_of(e1.id): e1.to_json(), path_of(e2.id): e2.to_json()})
    data = (
        f"tree {tree}\nparent {tip}\nauthor X <x@x> 1714560000 +0000\n"
        f"committer X <x@x> 99999999999999999999 +0000\n\nx\n"
    ).encode()
    commit = r.odb.write(pygit2.GIT_OBJECT_COMMIT, data)
    git(a, "update-ref", "refs/lifeline/main", str(commit))
    return str(commit)


def test_a_commit_git_cannot_parse_on_one_line_leaves_the_other_lines_pullable(tmp_path):
    remote = bare(tmp_path, "remote.git", hook=False)
    a = client(tmp_path, "a", remote)
    store_as_is(a, "main", make_entry(1, summary="Main"))
    store_as_is(a, "other", make_entry(5, summary="Other"))
    git(a, "push", "-q", "origin", "refs/lifeline/main", "refs/lifeline/other")
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "origin").code == 0
    unparsable_commit_on_main(a)
    store_as_is(a, "other", make_entry(6, summary="Other, later"))
    git(a, "push", "-q", "origin", "refs/lifeline/main", "refs/lifeline/other")
    res = cli(b, "pull", "origin")
    assert res.code == 1 and "--line" in res.err, res
    assert ref(b, "refs/lifeline/other") == ref(a, "refs/lifeline/other"), res


def test_verify_reports_a_commit_git_cannot_parse_and_still_checks_the_other_lines(tmp_path):
    a = init_repo(tmp_path / "a")
    store_as_is(a, "main", make_entry(1, summary="Main"))
    store_as_is(a, "other", make_entry(5, summary="Other"))
    unparsable_commit_on_main(a)
    res = cli(a, "verify")
    assert res.code == 1 and "line other" in res.out, res
