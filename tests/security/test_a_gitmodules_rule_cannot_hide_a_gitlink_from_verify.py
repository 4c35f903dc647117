"""A .gitmodules ignore rule cannot hide a gitlink in a line from verify's shape check."""

from __future__ import annotations

import pygit2
from kit.entries import make_entry, path_of
from kit.repos import init_repo
from kit.run import cli, git
from kit.tamper import SIG, build_tree, store_as_is


def test_a_gitmodules_ignore_rule_cannot_hide_a_gitlink_in_a_line_from_verify(tmp_path):
    repo = init_repo(tmp_path / "a")
    good = make_entry(1, summary="Good")
    store_as_is(repo, "main", good)
    r = pygit2.Repository(str(repo))
    tip = r[r.references["refs/lifeline/main"].target]
    fake = make_entry(2, summary="Not an entry")
    gitlink = pygit2.Oid(hex="12345678" * 5)
    tree = build_tree(r, {path_of(good.id): good.to_json(), path_of(fake.id): (gitlink, pygit2.GIT_FILEMODE_COMMIT)})
    commit = r.create_commit(None, SIG, SIG, "x\n", tree, [tip.id])
    git(repo, "update-ref", "refs/lifeline/main", str(commit))
    assert cli(repo, "verify").code == 1
    # a .gitmodules checked out from a code branch says "ignore = all" for that path
    (repo / ".gitmodules").write_text(f'[submodule "x"]\n\tpath = {path_of(fake.id)}\n\turl = ./x\n\tignore = all\n')
    res = cli(repo, "verify")
    assert res.code == 1 and "foreign-file" in res.out, res
