"""The post-commit hook stays quiet on a pulled line with a negative commit date and believes
no append dated beyond the configured clock skew.
"""

from __future__ import annotations

import time
from pathlib import Path

import pygit2
from kit.entries import make_entry, path_of
from kit.repos import bare, client, init_repo
from kit.run import GitOutput, cli, git
from kit.tamper import build_tree


def line_tip_dated(repo: Path, when: str) -> None:
    """One entry on refs/lifeline/main in a commit whose committer time is `when` (no gate
    looks at a ledger commit's own dates)."""
    r = pygit2.Repository(str(repo))
    e = make_entry(1, summary="An honest entry")
    tree = build_tree(r, {path_of(e.id): e.to_json()})
    data = (f"tree {tree}\nauthor X <x@x> 1714560000 +0000\ncommitter X <x@x> {when} +0000\n\nx\n").encode()
    git(repo, "update-ref", "refs/lifeline/main", str(r.odb.write(pygit2.GIT_OBJECT_COMMIT, data)))


def commit_with_hooks(repo: Path) -> GitOutput:
    (repo / "work.txt").write_text(str(time.time()))
    git(repo, "add", "work.txt")
    return git(repo, "commit", "-q", "-m", "work", check=False)


def test_post_commit_stays_quiet_when_a_pulled_line_has_a_negative_commit_date(tmp_path, git_dispatch):
    remote = bare(tmp_path, "remote.git", hook=False)
    a = client(tmp_path, "a", remote)
    line_tip_dated(a, "-5")
    git(a, "push", "-q", "origin", "refs/lifeline/main")
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "origin").code == 0
    assert cli(b, "hooks", "install").code == 0
    proc = commit_with_hooks(b)
    err = proc.err
    assert proc.code == 0
    assert "Illegal number" not in err and "integer expression" not in err, err


def test_post_commit_believes_no_append_dated_beyond_the_configured_clock_skew(tmp_path, git_dispatch):
    repo = init_repo(tmp_path / "a")
    git(repo, "config", "lifeline.maxClockSkew", "10m")
    line_tip_dated(repo, str(int(time.time()) + 12 * 3600))  # 12 h ahead: beyond 10 min, within a day
    assert cli(repo, "hooks", "install").code == 0
    proc = commit_with_hooks(repo)
    assert "since the last ledger entry" in proc.err, (proc.code, proc.err)
