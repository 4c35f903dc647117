"""Pull, pre-push, pre-receive and `git lifeline verify` judge a line with one engine:
what verify refuses, every gate refuses, and what verify accepts no gate refuses.

Two ways a line used to pass the gates while verify failed it:
* an entry whose parent exists only under a `refs/lifeline/*` ref that is not a line
  (its tree is not a ledger, or the blob at the parent's path is another entry);
* a promoted copy whose `origin:` block names a source it does not match.
Each is taken through the real faces: a pull from a remote, a push to a bare server
with the pre-receive hook, a push through the client's pre-push hook, and verify.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from kit.entries import make_entry, path_of
from kit.home import AUTHOR_EMAIL, AUTHOR_NAME
from kit.repos import client, git_push, init_repo, open_ledger
from kit.run import cli, git
from kit.tamper import build_tree, store_as_is

from git_lifeline.app import interop
from git_lifeline.app.draft import Draft
from git_lifeline.app.hook_files import install
from git_lifeline.core.entry import new_entry
from git_lifeline.git.lines import origin_block
from git_lifeline.git.repo import open_repo

NOT_A_LINE = ("tree-is-not-a-ledger", "blob-is-another-entry")


def hold_outside_any_line(repo: Path, entry, how: str) -> None:
    """Make `refs/lifeline/stash` hold `entry`'s id in a way that is not a line's."""
    r = pygit2.Repository(str(repo))
    if how == "tree-is-not-a-ledger":
        files = {path_of(entry.id): entry.to_json(), "README": b"not a ledger\n"}
    else:  # a ledger-shaped tree whose blob at the parent's path is some other entry
        files = {path_of(entry.id): make_entry(77, summary="Someone else").to_json()}
    sig = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
    commit = r.create_commit(None, sig, sig, "stash\n", build_tree(r, files), [])
    git(repo, "update-ref", "refs/lifeline/stash", str(commit))


def orphan_pair():
    parent = make_entry(1, summary="Only in the stash")
    child = make_entry(2, summary="Child of the stash", parents=[parent.id])
    return parent, child


def forged_copy():
    """A source entry of line research, and a copy whose origin names it but whose
    summary is not the source's."""
    source = make_entry(3, kind="note", summary="Finding: p99 doubles under load")
    copy = new_entry(
        kind=source.kind,
        author=source.author,
        summary="Finding: load has no effect",
        body=f"{source.body}\n\n{origin_block('research', source.id)}",
        ts=source.ts,
    )
    return source, copy


def ref(repo: Path, name: str):
    return git(repo, "rev-parse", "-q", "--verify", name, check=False) or None


# ---- a parent held only by a ref that is not a line ------------------------------------------
@pytest.mark.parametrize("how", NOT_A_LINE)
def test_verify_reports_a_parent_held_only_outside_any_line(tmp_path, how):
    repo = init_repo(tmp_path / "a")
    parent, child = orphan_pair()
    hold_outside_any_line(repo, parent, how)
    store_as_is(repo, "main", child)
    res = cli(repo, "--line", "main", "verify")
    assert res.code == 1 and "missing-parent" in res.out and parent.id[:8] in res.out, res


@pytest.mark.parametrize("how", NOT_A_LINE)
def test_pull_refuses_a_parent_held_only_outside_any_line(tmp_path, remote, how):
    a = client(tmp_path, "a", remote)
    parent, child = orphan_pair()
    store_as_is(a, "main", child)
    git(a, "push", "-q", "origin", "refs/lifeline/main")
    b = client(tmp_path, "b", remote)
    hold_outside_any_line(b, parent, how)
    res = cli(b, "pull", "origin")
    assert res.code == 1, res
    assert "missing-parent" in res.err and parent.id[:8] in res.err, res
    assert ref(b, "refs/lifeline/main") is None, "a refused pull moved the line"


@pytest.mark.parametrize("how", NOT_A_LINE)
def test_pre_receive_refuses_a_parent_held_only_outside_any_line(tmp_path, server, how):
    parent, child = orphan_pair()
    hold_outside_any_line(server, parent, how)
    a = client(tmp_path, "a", server)
    store_as_is(a, "main", child)
    code, err = git_push(a, "refs/lifeline/main", flags=("--no-verify",))
    assert code != 0 and "ledger update refused" in err, err
    assert "missing-parent" in err and parent.id[:8] in err, err
    assert ref(server, "refs/lifeline/main") is None


@pytest.mark.parametrize("how", NOT_A_LINE)
def test_pre_push_refuses_a_parent_held_only_outside_any_line(tmp_path, remote, git_dispatch, how):
    a = client(tmp_path, "a", remote)
    parent, child = orphan_pair()
    hold_outside_any_line(a, parent, how)
    store_as_is(a, "main", child)
    install(open_repo(str(a)), ["pre-push"])
    code, err = git_push(a, "refs/lifeline/main")
    assert code != 0 and "push refused" in err and "missing-parent" in err, err
    assert ref(remote, "refs/lifeline/main") is None


# ---- a promoted copy that does not match its origin --------------------------------------
def test_verify_reports_a_forged_origin(tmp_path):
    repo = init_repo(tmp_path / "a")
    source, copy = forged_copy()
    store_as_is(repo, "research", source)
    store_as_is(repo, "main", copy)
    res = cli(repo, "--line", "main", "verify")
    assert res.code == 1 and "bad-origin" in res.out and copy.id[:8] in res.out, res


def test_pull_refuses_a_forged_origin_whether_its_source_is_here_or_arrives_with_it(tmp_path, remote):
    a = client(tmp_path, "a", remote)
    source, copy = forged_copy()
    store_as_is(a, "research", source)
    store_as_is(a, "main", copy)
    git(a, "push", "-q", "origin", "refs/lifeline/research", "refs/lifeline/main")
    # both lines arrive in one pull: the source is judged where it is about to land
    b = client(tmp_path, "b", remote)
    res = cli(b, "pull", "origin")
    assert res.code == 1 and "bad-origin" in res.err and copy.id[:8] in res.err, res
    # the forged line is left out; the good line it names still comes in (one bad line
    # does not hold the others back, issue 14.11)
    assert ref(b, "refs/lifeline/main") is None and "--line" in res.err, res
    assert ref(b, "refs/lifeline/research") == ref(a, "refs/lifeline/research")
    # the source line is already here
    assert cli(b, "--line", "research", "pull", "origin").code == 0
    res = cli(b, "pull", "origin")
    assert res.code == 1 and "bad-origin" in res.err, res
    assert ref(b, "refs/lifeline/main") is None


def test_pre_receive_refuses_a_forged_origin(tmp_path, server):
    a = client(tmp_path, "a", server)
    source, copy = forged_copy()
    store_as_is(a, "research", source)
    code, err = git_push(a, "refs/lifeline/research")
    assert code == 0, err
    store_as_is(a, "main", copy)
    code, err = git_push(a, "refs/lifeline/main", flags=("--no-verify",))
    assert code != 0 and "bad-origin" in err and copy.id[:8] in err, err
    assert ref(server, "refs/lifeline/main") is None


def test_pre_push_refuses_a_forged_origin(tmp_path, remote, git_dispatch):
    a = client(tmp_path, "a", remote)
    source, copy = forged_copy()
    store_as_is(a, "research", source)
    store_as_is(a, "main", copy)
    install(open_repo(str(a)), ["pre-push"])
    code, err = git_push(a, "refs/lifeline/research", "refs/lifeline/main")
    assert code != 0 and "push refused" in err and "bad-origin" in err, err
    assert ref(remote, "refs/lifeline/main") is None


# ---- what verify accepts, every gate accepts -------------------------------------------------
def test_lines_that_anchor_each_other_pass_every_gate_when_they_travel_together(tmp_path, server):
    """A parent in another line and a genuine promoted copy: pushed in one push to a
    hooked server, and pulled in one pull, both lines are accepted."""
    a = client(tmp_path, "a", server)
    research = open_ledger(a, "research")
    finding = research.log(Draft(kind="note", summary="Finding: p99 doubles under load", body="Measured twice.")).entry
    main = open_ledger(a, "main")
    main.log(
        Draft(
            kind="decision", summary="Add a cache", body="Because of the finding.", parents=[f"research:{finding.id}"]
        )
    )
    interop.promote(main, "research", [finding.id])
    assert cli(a, "verify").code == 0
    code, err = git_push(a, "refs/lifeline/research", "refs/lifeline/main", flags=("--no-verify",))
    assert code == 0, err
    b = client(tmp_path, "b", server)
    res = cli(b, "pull", "origin")
    assert res.code == 0, res
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    assert cli(b, "verify").code == 0
