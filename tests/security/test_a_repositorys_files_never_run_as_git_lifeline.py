"""A repository's files never run as git-lifeline: not `mcp`, nor what doctor checks, nor what
init checks or writes for a client to start (on Python 3.10 too).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kit.repos import bare, configured_client, init_repo
from kit.run import Via, cli, git

from git_lifeline.app.integration import SAFE_PATH, safe_path_flags


def planted(tmp_path: Path) -> tuple:
    """A clone of a repository whose work tree holds a `git_lifeline` package and a `git_lifeline`
    shell script, each leaving a marker file when run; (clone, marker)."""
    marker = tmp_path / "ran"
    origin = init_repo(tmp_path / "origin")
    pkg = origin / "git_lifeline"
    (pkg / "mcp").mkdir(parents=True)
    for rel in ("__init__.py", "mcp/__init__.py"):
        (pkg / rel).write_text("")
    for rel in ("__main__.py", "mcp/__main__.py"):
        (pkg / rel).write_text(f"open({str(marker)!r}, 'a').write({rel!r} + '\\n')\n")
    (origin / "run-me").write_text(f"#!/bin/sh\necho sh >> '{marker}'\n")
    (origin / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"lifeline": {"command": "sh", "args": ["-m", "git_lifeline", "mcp"]}}})
    )
    git(origin, "add", "-A")
    git(origin, "-c", "user.name=E", "-c", "user.email=e@example.com", "commit", "-q", "-m", "x")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "victim"))
    return tmp_path / "victim", marker


def test_mcp_never_runs_a_git_lifeline_package_from_the_work_tree(tmp_path):
    repo, marker = planted(tmp_path)
    r = cli(repo, "mcp", "--check", via=Via.INSTALLED, input=b"", timeout=180)
    assert not marker.exists(), (marker.read_text(), r)


def test_doctor_never_starts_a_command_the_repositorys_mcp_json_names(tmp_path):
    repo, marker = planted(tmp_path)
    # `sh -m git_lifeline mcp --check` runs the work tree's file `git_lifeline` as a script
    (repo / "git_lifeline").rename(repo / "pkg")
    (repo / "run-me").rename(repo / "git_lifeline")
    cli(repo, "doctor", via=Via.INSTALLED, input=b"", timeout=180)
    cli(repo, "init", "--no-hooks", "--no-agents", via=Via.INSTALLED, input=b"", timeout=180)
    assert not marker.exists(), marker.read_text()


def test_init_checks_this_installation_without_importing_the_work_tree(tmp_path):
    repo, marker = planted(tmp_path)
    (repo / ".mcp.json").unlink()
    # no git-lifeline on PATH: init checks `<python> -m git_lifeline mcp --check`
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(shutil.which("git"), bindir / "git")
    cli(repo, "init", "--no-hooks", "--no-agents", via=Via.INSTALLED, input=b"", env={"PATH": str(bindir)}, timeout=180)
    assert not marker.exists(), marker.read_text()


def test_the_interpreter_form_init_writes_never_imports_the_work_tree_when_a_client_starts_it(tmp_path):
    repo, marker = planted(tmp_path)
    # untracked: init writes this machine's interpreter only into a file git does not track
    git(repo, "rm", "-q", "--cached", ".mcp.json")
    (repo / ".mcp.json").unlink()
    bindir = tmp_path / "bin"  # no git-lifeline on PATH: init writes `<python> -P -m git_lifeline mcp`
    bindir.mkdir()
    os.symlink(shutil.which("git"), bindir / "git")
    cli(repo, "init", "--no-hooks", "--no-agents", via=Via.INSTALLED, input=b"", env={"PATH": str(bindir)}, timeout=180)
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["lifeline"]
    assert entry["args"][:3] == [*SAFE_PATH, "-m", "git_lifeline"], entry
    started = subprocess.run(
        [entry["command"], *entry["args"], "--check"],
        cwd=str(repo),  # as a client does
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not marker.exists(), marker.read_text()
    assert started.returncode == 0, started


def python_3_10() -> str | None:
    """A Python 3.10 interpreter of this machine, if it has one (on PATH, or one of pyenv's)."""
    found = [shutil.which("python3.10") or ""]
    if shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30).stdout.strip()
        found += sorted(str(p) for p in Path(root).glob("versions/3.10.*/bin/python3.10"))
    for python in filter(None, found):
        if subprocess.run([python, "--version"], capture_output=True, timeout=30).returncode == 0:
            return python
    return None


@pytest.mark.skipif(python_3_10() is None, reason="no Python 3.10 on this machine")
def test_on_python_3_10_the_interpreter_form_keeps_the_work_tree_off_the_import_path(tmp_path):
    """3.10 has no -P: the flags init writes there must still keep a planted package from running
    when a client starts `<python> FLAGS -m git_lifeline` in the repository."""
    venv = tmp_path / "venv"
    subprocess.run([python_3_10(), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3.10/site-packages"))
    (site / "git_lifeline").mkdir()
    (site / "git_lifeline" / "__init__.py").write_text("")
    (site / "git_lifeline" / "__main__.py").write_text("print('installed')\n")
    repo, marker = planted(tmp_path)
    python = str(venv / "bin" / "python")
    plain = subprocess.run(
        [python, "-m", "git_lifeline", "mcp"], cwd=str(repo), capture_output=True, text=True, timeout=60
    )
    assert marker.exists(), "without the flags the planted package runs: this test could not see the attack"
    marker.unlink()
    flagged = subprocess.run(
        [python, *safe_path_flags((3, 10)), "-m", "git_lifeline", "mcp"],
        cwd=str(repo),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not marker.exists(), marker.read_text()
    assert flagged.stdout.strip() == "installed", (flagged, plain)


def test_doctor_shows_a_hostile_mcp_json_command_visibly(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"lifeline": {"command": "\x1b]0;owned\x07\x1b[2Jtool", "args": []}}})
    )
    r = cli(repo, "doctor")
    assert "tool" in r.out and "\x1b" not in r.out and "\x07" not in r.out, r
