"""One corrupt line on a remote that runs no hook (GitHub, GitLab.com) used to block the
pull of every line (issue 14.11). Now the line that fails verification is left out whole,
with its review trail (nothing of it is written), a line that needs it (a parent in it) is
left out too, every other line comes in, the command exits 1 and its message names the
line, what failed, and `--line` to carry on with the good lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.repos import commit_file, head, init_repo, open_ledger
from kit.run import cli, git
from kit.tamper import tamper  # noqa: F401

from git_lifeline.app.draft import Draft

GOOD = ("main", "ops")


@pytest.fixture
def remote_with_a_bad_line(tmp_path):
    """A bare remote without hooks holding lines main and ops (good), research (its last
    commit rewrites an entry in place) and notes (an entry whose parent is only in the
    bad research line)."""
    a = init_repo(tmp_path / "a")
    commit_file(a)
    open_ledger(a).log(Draft(kind="bootstrap", summary="Project", body="why"))
    open_ledger(a, "ops").log(Draft(kind="note", summary="Runbook", body="steps"))
    victim = open_ledger(a, "research").log(Draft(kind="decision", summary="Paper A", body="read it")).entry
    fresh = open_ledger(a, "research").log(Draft(kind="note", summary="Paper B", body="b")).entry
    open_ledger(a, "notes").log(
        Draft(kind="note", summary="Follows paper B", body="n", parents=[f"research:{fresh.id[:12]}"])
    )
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(a, "remote", "add", "origin", str(bare))
    git(a, "push", "-q", "origin", "main", "refs/lifeline/*:refs/lifeline/*")
    tamper(a, victim.id, line="research")
    git(a, "push", "-q", "origin", "refs/lifeline/research:refs/lifeline/research")
    return bare, victim


def clone_of(bare: Path, path: Path) -> Path:
    git(path.parent, "clone", "-q", str(bare), str(path))
    return path


def assert_left_out_and_said(res, bare: Path, repo: Path, victim) -> None:
    assert res.code == 1, res
    assert "Traceback" not in res.err and "internal error" not in res.err, res
    for line in GOOD:
        assert head(repo, f"refs/lifeline/{line}") == head(bare, f"refs/lifeline/{line}"), line
    assert head(repo, "refs/lifeline/research") is None and head(repo, "refs/lifeline/notes") is None
    assert "line research" in res.err and victim.id[:8] in res.err and "tampered" in res.err, res
    assert "line notes" in res.err and "missing-parent" in res.err, res  # it needed the bad line
    assert "--line" in res.err and "The other lines were brought in (main, ops)" in res.err, res


def test_pull_brings_every_good_line_and_names_the_bad_one_with_line(remote_with_a_bad_line, tmp_path, record_counts):
    bare, victim = remote_with_a_bad_line
    b = clone_of(bare, tmp_path / "b")
    res = cli(b, "pull")
    assert_left_out_and_said(res, bare, b, victim)
    assert "line main: created from origin" in res.out and "line ops: created from origin" in res.out
    assert "### bootstrap: Project" in (b / "LIFELINE.md").read_text()
    again = cli(b, "pull", "--line", "ops")  # what the message suggests: a good line alone
    assert again.code == 0 and "line ops: up to date" in again.out, again
    record_counts(
        "one bad line on a hook-less remote, the others brought in (pull, sync, clone)", tried=1, held=1, lost=0
    )


def test_sync_pulls_and_pushes_the_good_lines_and_exits_1(remote_with_a_bad_line, tmp_path, record_counts):
    bare, victim = remote_with_a_bad_line
    b = clone_of(bare, tmp_path / "b")
    assert cli(b, "pull", "--line", "main").code == 0
    mine = open_ledger(b).log(Draft(kind="note", summary="From b", body="b")).entry
    res = cli(b, "sync")
    assert_left_out_and_said(res, bare, b, victim)
    assert mine.id in {e.id for e in open_ledger(bare).entries()}  # b's entry went out
    assert "line main: pushed" in res.out
    record_counts(
        "one bad line on a hook-less remote, the others brought in (pull, sync, clone)", tried=1, held=1, lost=0
    )


def test_clone_of_a_remote_with_a_bad_line_keeps_the_good_ones(remote_with_a_bad_line, tmp_path, record_counts):
    bare, victim = remote_with_a_bad_line
    res = cli(tmp_path, "clone", str(bare), "c")
    assert_left_out_and_said(res, bare, tmp_path / "c", victim)
    record_counts(
        "one bad line on a hook-less remote, the others brought in (pull, sync, clone)", tried=1, held=1, lost=0
    )


def test_a_pull_of_only_good_lines_is_unaffected(remote_with_a_bad_line, tmp_path):
    bare, _victim = remote_with_a_bad_line
    b = clone_of(bare, tmp_path / "b")
    res = cli(b, "pull", "--line", "main")
    assert res.code == 0 and res.err == "", res
    assert head(b, "refs/lifeline/main") == head(bare, "refs/lifeline/main")


def test_the_review_trail_of_a_line_left_out_is_left_out_too(remote_with_a_bad_line, tmp_path):
    """The trail is brought in after the lines; it used to come in even when its line had
    just been left out, so the clone held a trail of a line it refused."""
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.trails import ReviewTrail

    bare, victim = remote_with_a_bad_line
    w = clone_of(bare, tmp_path / "w")
    assert cli(w, "pull", "--line", "main").code == 0
    entry = open_ledger(w).entries()[0]
    ReviewTrail(open_repo(str(w)), "research").propose(entry, "Ana <ana@example.com>", "cli")
    git(w, "push", "-q", "origin", "refs/lifeline-review/research")
    b = clone_of(bare, tmp_path / "b")
    res = cli(b, "pull")
    assert_left_out_and_said(res, bare, b, victim)
    assert head(b, "refs/lifeline-review/research") is None
