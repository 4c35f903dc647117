"""Verification judges the objects a line holds, never what git's replace refs substitute for
them: locally and at the server's pre-receive. Real repositories and real git.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit.entries import make_entry, path_of
from kit.repos import bare, client, git_push, init_repo, ref
from kit.run import cli, git
from kit.tamper import SIG, blob_bytes, build_tree, store_as_is


def push(repo: Path, *specs: str) -> tuple:
    """A push past the client's own pre-push hook: what the server alone refuses."""
    return git_push(repo, *specs, flags=("--no-verify",))


def tampered_on_top(repo: Path) -> tuple:
    """(good entry, tampered commit, the same commit with an honest tree) on refs/lifeline/main:
    the tampered commit's new blob does not hash to its id."""
    good = make_entry(1, summary="Good")
    store_as_is(repo, "main", good)
    r = pygit2.Repository(str(repo))
    tip = r.references["refs/lifeline/main"].target
    second = make_entry(2, summary="Second")
    bad_tree = build_tree(
        r, {path_of(good.id): good.to_json(), path_of(second.id): blob_bytes(second, summary="TAMPERED")}
    )
    honest_tree = build_tree(r, {path_of(good.id): good.to_json(), path_of(second.id): second.to_json()})
    bad = r.create_commit(None, SIG, SIG, "x\n", bad_tree, [tip])
    honest = r.create_commit(None, SIG, SIG, "x\n", honest_tree, [tip])
    return good, str(bad), str(honest), str(bad_tree), str(honest_tree)


def test_verify_judges_the_objects_a_line_holds_not_their_replacements(tmp_path):
    repo = init_repo(tmp_path / "a")
    _good, bad, _honest, bad_tree, honest_tree = tampered_on_top(repo)
    git(repo, "update-ref", "refs/lifeline/main", bad)
    git(repo, "replace", bad_tree, honest_tree)  # `git diff-tree` reads the honest tree in its place
    res = cli(repo, "verify")
    assert res.code == 1 and "bad-entry" in res.out, res


def test_a_replace_ref_pushed_to_the_server_cannot_carry_a_tampered_entry_past_pre_receive(tmp_path, git_dispatch):
    server = bare(tmp_path, "server.git", hook=True)
    a = client(tmp_path, "a", server)
    _good, bad, honest, _bt, _ht = tampered_on_top(a)
    code, err = push(a, "refs/lifeline/main")
    assert code == 0, err
    git(a, "update-ref", "refs/lifeline/main", bad)
    # refs/replace/* is not ours to guard, so the server takes it; the hook's git then read
    # the honest commit wherever the tampered one was named
    code, err = push(a, f"{honest}:refs/replace/{bad}")
    assert code == 0, err
    code, err = push(a, "refs/lifeline/main")
    assert code != 0 and "bad-entry" in err, err
    assert ref(server, "refs/lifeline/main") != bad
