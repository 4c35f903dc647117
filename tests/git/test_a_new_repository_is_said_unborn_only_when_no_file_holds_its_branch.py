"""The code view a kept answer is for (git/stale_kept.code_view) says "unborn" for a
repository with no code commit yet, so a ledger kept before the first commit answers warm;
it must never say so where a file could still hold the branch (a packed ref, a ref file
git wrote oddly, a packed-refs file this reader does not know): then it says nothing."""

from __future__ import annotations

import pytest
from kit.repos import commit_file, init_repo
from kit.run import git

from git_lifeline.git.reffiles import UNBORN, head_view


def _view(repo):
    return head_view(str(repo / ".git"), str(repo / ".git"))


def test_a_repository_with_no_commit_is_unborn(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert _view(repo) == UNBORN


def test_a_branch_held_only_in_packed_refs_is_its_commit(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo)
    git(repo, "pack-refs", "--all")
    branch = git(repo, "symbolic-ref", "HEAD").strip()
    assert not (repo / ".git" / branch).exists()
    assert _view(repo) == git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("oddity", ["a-directory-at-the-ref", "unknown-packed-line", "a-symlinked-ref"])
def test_a_branch_a_file_might_hold_is_never_called_unborn(tmp_path, oddity):
    repo = init_repo(tmp_path / "repo")
    branch = git(repo, "symbolic-ref", "HEAD").strip()
    ref = repo / ".git" / branch
    if oddity == "a-directory-at-the-ref":
        (ref / "child").mkdir(parents=True)
    elif oddity == "unknown-packed-line":
        (repo / ".git" / "packed-refs").write_text("# pack-refs with: peeled\nsomething else\n")
    else:
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.symlink_to(tmp_path / "elsewhere")
    assert _view(repo) is None


@pytest.mark.parametrize(
    "head_file",
    [
        b"ref: refs/heads/main \n",  # git and libgit2 trim what follows the name
        b"ref: refs/heads/main\r\n",
        b"ref: refs/heads/main\t\n",
        b"ref: refs/heads/main\n\n",
    ],
)
def test_a_head_file_git_reads_past_its_trailing_whitespace_is_never_called_unborn(tmp_path, head_file):
    # the file names `main ` (no such file), but git reads `main`, which has a commit: a
    # staleness kept while the repository was new would be served for it, hiding the code
    # changed since
    repo = init_repo(tmp_path / "repo")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    commit_file(repo)
    (repo / ".git" / "HEAD").write_bytes(head_file)
    assert git(repo, "rev-parse", "--verify", "HEAD").strip()  # git: a commit, not unborn
    assert _view(repo) is None


@pytest.mark.parametrize("branch", ["refs/heads/.invalid", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/a b"])
def test_a_head_naming_a_branch_git_could_never_hold_is_never_called_unborn(tmp_path, branch):
    # (a reftable repository's HEAD names refs/heads/.invalid: its refs are in no file read here)
    repo = init_repo(tmp_path / "repo")
    (repo / ".git" / "HEAD").write_text(f"ref: {branch}\n")
    assert _view(repo) is None
