"""Files a clone plants in the work tree are hostile input (issue 14.8).

A checkout can hold `LIFELINE.md` as a link to /dev/zero, a FIFO, a link to a file outside
the work tree, a policy or .mcp.json that never ends, a hooks path with a FIFO in it. The
tool reads no such file unbounded, reads and writes nothing through a link that leads out
of the work tree, and a remote's many lines put no files into a teammate's work tree.
Every case runs the real CLI in a real repository, under a memory cap and a time limit.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from kit.repos import commit_file, head, init_repo, open_ledger
from kit.run import cli, git, subprocess_env

from git_lifeline.app.draft import Draft

CAP_BYTES = 1 << 30  # an unbounded read of /dev/zero reaches it in about a second
DEADLINE = 60


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def capped_cli(cwd, *args: str):
    """The CLI as a user runs it, but with its address space capped and a deadline: an
    unbounded read ends in MemoryError (exit 3) or a timeout instead of a swapping box."""
    proc = subprocess.run(
        [sys.executable, "-m", "git_lifeline", *args],
        cwd=str(cwd),
        capture_output=True,
        env=subprocess_env(),
        timeout=DEADLINE,
        preexec_fn=_capped,
    )
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "internal error" not in err, err
    return proc.returncode, out, err


@pytest.fixture
def code_repo(tmp_path) -> Path:
    repo = init_repo(tmp_path / "repo")
    commit_file(repo)
    return repo


def entries(repo: Path, line: str = "main") -> list:
    return [e.summary for e in open_ledger(repo, line).entries()]


# ---- LIFELINE.md -------------------------------------------------------------------------
PLANTED = {
    "link-to-dev-zero": lambda repo, outside: os.symlink("/dev/zero", repo / "LIFELINE.md"),
    "fifo": lambda repo, outside: os.mkfifo(repo / "LIFELINE.md"),
    "link-out-of-the-tree": lambda repo, outside: os.symlink(outside, repo / "LIFELINE.md"),
    "directory": lambda repo, outside: (repo / "LIFELINE.md").mkdir(),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_planted_lifeline_md_is_neither_read_nor_written_and_the_entry_is_kept(
    code_repo, tmp_path, kind, record_counts
):
    outside = tmp_path / "victim.txt"
    outside.write_text("not yours\n")
    PLANTED[kind](code_repo, outside)
    code, out, err = capped_cli(code_repo, "log", "--kind", "note", "--summary", "After the plant", "--body", "b")
    assert code == 0, err
    assert entries(code_repo) == ["After the plant"]
    assert "LIFELINE.md" in err and "not written" in err  # said once, as a warning
    assert outside.read_text() == "not yours\n"
    assert os.path.islink(code_repo / "LIFELINE.md") == kind.startswith("link")
    # an explicit render refuses the same place, writing nothing
    code, out, err = capped_cli(code_repo, "render")
    assert code == 2 and "LIFELINE.md" in err, err
    assert outside.read_text() == "not yours\n"
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_a_link_inside_the_work_tree_is_followed_and_its_file_kept_level(code_repo, record_counts):
    (code_repo / "docs").mkdir()
    os.symlink("docs/ledger.md", code_repo / "LIFELINE.md")
    code, _out, err = capped_cli(code_repo, "log", "--kind", "note", "--summary", "Inside", "--body", "b")
    assert code == 0 and not err, err
    assert os.path.islink(code_repo / "LIFELINE.md")
    assert "### note: Inside" in (code_repo / "docs" / "ledger.md").read_text()
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_a_configured_projection_under_a_directory_link_out_of_the_tree_writes_nothing_there(
    code_repo, tmp_path, record_counts
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, code_repo / "docs")
    git(code_repo, "config", "lifeline.projection", "docs/LIFELINE.md")
    code, _out, err = capped_cli(code_repo, "log", "--kind", "note", "--summary", "Kept", "--body", "b")
    assert code == 0 and "leads out of the work tree" in err, err
    assert list(elsewhere.iterdir()) == []
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_a_projection_larger_than_the_read_limit_is_rendered_afresh_not_read(code_repo, record_counts):
    cli(code_repo, "log", "--kind", "note", "--summary", "First", "--body", "b")
    with open(code_repo / "LIFELINE.md", "ab") as f:  # sparse: 100 MB that cost no disk
        f.truncate(100 << 20)
    code, _out, err = capped_cli(code_repo, "log", "--kind", "note", "--summary", "Second", "--body", "b")
    assert code == 0, err
    text = (code_repo / "LIFELINE.md").read_text()
    assert len(text) < 10_000 and "### note: First" in text and "### note: Second" in text
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


# ---- the policy, .mcp.json, hooks --------------------------------------------------------
def test_a_policy_file_linked_to_dev_zero_does_not_hang_policy_or_writes(code_repo, record_counts):
    (code_repo / ".lifeline").mkdir()
    os.symlink("/dev/zero", code_repo / ".lifeline" / "policy.json")
    code, out, err = capped_cli(code_repo, "policy")
    assert code == 0 and "policy in effect" in out, err
    code, _out, err = capped_cli(code_repo, "log", "--kind", "note", "--summary", "Still writes", "--body", "b")
    assert code == 0, err
    assert entries(code_repo) == ["Still writes"]
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_a_policy_file_linked_out_of_the_tree_is_not_read(code_repo, tmp_path, record_counts):
    secret = tmp_path / "secret.json"
    secret.write_text('{"default": "direct"}\n')
    (code_repo / ".lifeline").mkdir()
    os.symlink(secret, code_repo / ".lifeline" / "policy.json")
    code, out, err = capped_cli(code_repo, "policy")
    assert code == 0, err
    assert "differs from HEAD" not in err  # the outside file was never read to compare
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_an_mcp_json_linked_to_dev_zero_is_left_alone_by_init(code_repo, record_counts):
    os.symlink("/dev/zero", code_repo / ".mcp.json")
    code, out, err = capped_cli(code_repo, "init", "--no-hooks")
    assert code == 0, err
    assert "left it untouched" in out
    assert os.readlink(code_repo / ".mcp.json") == "/dev/zero"
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


def test_a_fifo_in_a_work_tree_hooks_path_does_not_hang_hooks_install(code_repo, record_counts):
    (code_repo / ".hooks").mkdir()
    os.mkfifo(code_repo / ".hooks" / "pre-push")
    git(code_repo, "config", "core.hooksPath", ".hooks")
    code, _out, err = capped_cli(code_repo, "hooks", "status")
    assert code == 0, err
    record_counts("planted work-tree files, never followed or read unbounded", tried=1, held=1, lost=0)


# ---- projections of a remote's many lines ---------------------------------------------------
LINES = 60


@pytest.fixture
def many_lines(tmp_path):
    """A bare remote with a code branch, the main line and LINES other lines."""
    origin = init_repo(tmp_path / "origin")
    commit_file(origin)
    led = open_ledger(origin)
    led.log(Draft(kind="bootstrap", summary="Project", body="why"))
    for i in range(LINES):
        open_ledger(origin, f"line{i:04d}").log(Draft(kind="note", summary=f"on line {i}", body="b"))
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    git(origin, "push", "-q", str(bare), "refs/lifeline/*:refs/lifeline/*")
    return bare


def projections(repo: Path) -> list:
    return sorted(p.name for p in repo.iterdir() if p.name.startswith("LIFELINE"))


def test_cloning_a_remote_with_many_lines_writes_only_the_default_lines_projection(many_lines, tmp_path, record_counts):
    code, out, err = capped_cli(tmp_path, "clone", str(many_lines), "teammate")
    mate = tmp_path / "teammate"
    assert code == 0, err
    assert head(mate, "refs/lifeline/line0042") == head(many_lines, "refs/lifeline/line0042")
    assert projections(mate) == ["LIFELINE.md"]
    assert git(mate, "status", "--porcelain") == ""
    record_counts(
        "a remote's lines cloned without a projection file",
        tried=LINES,
        held=LINES - (len(projections(mate)) - 1),
        lost=0,
    )


def test_a_pull_keeps_the_projections_of_lines_worked_on_here_and_adds_no_other(many_lines, tmp_path):
    mate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(many_lines), str(mate))
    cli(mate, "pull", expect=0)
    # worked on here: written to (log --line), rendered, or configured
    assert cli(mate, "log", "--line", "line0001", "--kind", "note", "--summary", "mine", "--body", "b").code == 0
    assert cli(mate, "render", "--line", "line0002").code == 0
    git(mate, "config", "lifeline.line0003.projection", "docs/three.md")
    origin = tmp_path / "origin"
    for i in range(5):
        open_ledger(origin, f"line{i:04d}").log(Draft(kind="note", summary=f"more on {i}", body="b"))
    git(origin, "push", "-q", str(many_lines), "refs/lifeline/*:refs/lifeline/*")
    res = cli(mate, "pull")
    assert res.code == 0, res
    assert projections(mate) == ["LIFELINE.line0001.md", "LIFELINE.line0002.md", "LIFELINE.md"]
    assert "more on 1" in (mate / "LIFELINE.line0001.md").read_text()
    assert "more on 2" in (mate / "LIFELINE.line0002.md").read_text()
    assert "more on 3" in (mate / "docs" / "three.md").read_text()
    assert git(mate, "status", "--porcelain") == ""  # every file it made is ignored
