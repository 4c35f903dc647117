"""The CI templates a user copies (docs/ci/): the GitHub workflow passes actionlint, the
GitLab file is a job that runs on merge requests and the default branch, and the commands
of both run green in a real clone of a bare remote (no hooks, as on a hosted one) on a
branch that changes code a decision governs. Only the install step (the network) and the
comment step (GitHub's API) are left out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kit.home import gitenv  # noqa: F401
from kit.repos import init_repo, make_clone  # noqa: F401
from kit.run import ROOT, Via, cli, git

GITHUB = ROOT / "docs" / "ci" / "lifeline.yml"
GITLAB = ROOT / "docs" / "ci" / "lifeline.gitlab-ci.yml"


def actionlint() -> str | None:
    """The actionlint binary the test extra installs (x86_64 Linux wheels only)."""
    here = Path(sys.executable).parent / "actionlint"
    return str(here) if here.exists() else shutil.which("actionlint")


def test_the_github_workflow_template_passes_actionlint():
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed (the test extra ships it for x86_64 Linux only)")
    proc = subprocess.run([binary, "-no-color", str(GITHUB)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_gitlab_template_is_one_job_for_merge_requests_and_the_default_branch():
    doc = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    job = doc["lifeline"]
    rules = [r["if"] for r in job["rules"]]
    assert any("merge_request_event" in r for r in rules) and any("CI_DEFAULT_BRANCH" in r for r in rules)
    assert job["variables"]["GIT_DEPTH"] == "0", "staleness and pr need the whole code history"
    assert any("git lifeline verify" in line for line in job["script"])
    assert "lifeline-pr.md" in job["artifacts"]["paths"]


@pytest.fixture
def branch_changing_governed_code(gitenv):
    """A bare remote with code and a decision governing src/, and a clone on a branch whose
    commit edits src/ without linking the decision."""
    remote = init_repo(gitenv / "remote.git", "--bare")
    a = make_clone(str(remote), gitenv / "a", code=True)
    (a / "src").mkdir()
    (a / "src" / "db.py").write_text("ENGINE = 'postgres'\n", encoding="utf-8")
    git(a, "add", ".")
    git(a, "commit", "--quiet", "-m", "db")
    cli(
        a,
        *("log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID."),
        *("--paths", "src/"),
        expect=0,
        via=Via.GIT,
    )
    git(a, "push", "--quiet", "origin", "main")
    cli(a, "push", expect=0, via=Via.GIT)
    ci = gitenv / "ci"
    git(gitenv, "clone", "--quiet", remote.resolve().as_uri(), ci.name)
    git(ci, "checkout", "--quiet", "-b", "feature")
    (ci / "src" / "db.py").write_text("ENGINE = 'sqlite'\n", encoding="utf-8")
    git(ci, "commit", "--quiet", "-am", "Switch the engine")
    return ci


def run(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """One step as both CIs run it: bash, stop at the first failure."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_github_workflow_steps_run_green_and_report_the_touched_decision(branch_changing_governed_code):
    ci = branch_changing_governed_code
    summary = ci.parent / "summary.md"
    env = dict(os.environ, BASE_REF="main", GITHUB_STEP_SUMMARY=str(summary))
    steps = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))["jobs"]["ledger"]["steps"]
    commands = [s["run"] for s in steps if "run" in s and s.get("name", "").split()[0] not in ("Install", "Post")]
    assert len(commands) == 3, commands
    procs = [run(c, ci, env) for c in commands]
    assert [p.returncode for p in procs] == [0, 0, 0], [p.stdout + p.stderr for p in procs]
    assert "::warning" in procs[2].stdout and "src/db.py" in procs[2].stdout, procs[2].stdout
    assert "Database: PostgreSQL" in summary.read_text(encoding="utf-8")


def test_the_gitlab_job_script_runs_green_and_keeps_the_report(branch_changing_governed_code):
    ci = branch_changing_governed_code
    env = dict(os.environ, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    script = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))["lifeline"]["script"]
    procs = [run(c, ci, env) for c in script]
    assert [p.returncode for p in procs] == [0] * len(procs), [p.stdout + p.stderr for p in procs]
    assert "Database: PostgreSQL" in (ci / "lifeline-pr.md").read_text(encoding="utf-8")
