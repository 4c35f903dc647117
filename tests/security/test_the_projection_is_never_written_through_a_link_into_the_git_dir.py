"""LIFELINE.md is never written into the git dir through a link in the work tree."""

from __future__ import annotations

import os

from kit.repos import init_repo
from kit.run import cli, git


def test_the_projection_is_never_written_into_the_git_dir_through_a_link(tmp_path):
    repo = init_repo(tmp_path / "a")
    assert cli(repo, "init", "--no-agents").code == 0
    assert cli(repo, "hooks", "install").code == 0
    hook = repo / ".git" / "hooks" / "post-commit"
    before = hook.read_bytes()
    # a teammate committed LIFELINE.md as a link to .git/hooks/post-commit (inside the
    # work tree's directory, so "a link inside the work tree is followed")
    (repo / "LIFELINE.md").unlink(missing_ok=True)
    os.symlink(".git/hooks/post-commit", repo / "LIFELINE.md")
    git(repo, "add", "-f", "LIFELINE.md")
    git(repo, "commit", "-q", "-m", "Lifeline: docs link")
    res = cli(repo, "render")
    assert res.code != 0, res
    # the way out the tool itself suggests for a tracked file
    git(repo, "rm", "-q", "--cached", "LIFELINE.md")
    res = cli(repo, "log", "--kind", "note", "--summary", "a note", "--body", "why")
    assert res.code == 0, res
    assert hook.read_bytes() == before
    config = (repo / ".git" / "config").read_bytes()
    os.unlink(repo / "LIFELINE.md")
    os.symlink(".git/config", repo / "LIFELINE.md")
    assert cli(repo, "log", "--kind", "note", "--summary", "another", "--body", "why").code == 0
    assert (repo / ".git" / "config").read_bytes() == config
