"""CI: `verify` in a shallow code checkout whose ledger history is whole, and the jobs of
docs/CI.md run as written against a real shallow clone (`--depth 1` over file://) of a
bare remote holding a ledger and a review trail."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from kit.home import gitenv  # noqa: F401
from kit.repos import init_repo, make_clone  # noqa: F401
from kit.run import ROOT, Via, cli, git
from kit.tamper import tamper  # noqa: F401

CI_DOC = ROOT / "docs" / "CI.md"


def yaml_blocks() -> list:
    return re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(encoding="utf-8"), re.S)


def github_commands() -> list:
    """The `run:` commands of the workflow's steps, in order, but the install step's
    (this checkout's git-lifeline is already on PATH; installing needs the network)."""
    block = next(b for b in yaml_blocks() if "runs-on:" in b)
    steps = re.split(r"\n      - ", block.split("\n    steps:\n", 1)[1])
    out = []
    for step in steps:
        name = re.search(r"name: (.*)", step)
        run = re.search(r"^\s*run: (.*)$", step, re.M)
        if run and not (name and name.group(1).startswith("Install")):
            out.append(run.group(1))
    return out


def gitlab_commands() -> list:
    """The job's `script:` lines (its before_script installs git-lifeline)."""
    block = next(b for b in yaml_blocks() if "script:" in b and "runs-on:" not in b)
    script = block.split("\n  script:\n", 1)[1]
    return [m.group(1) for m in re.finditer(r"^    - (.*)$", script, re.M)]


@pytest.fixture
def hosted(gitenv):
    """A bare remote (no hooks, like a hosted one) with code, three entries and a proposal."""
    remote = init_repo(gitenv / "remote.git", "--bare")
    a = make_clone(str(remote), gitenv / "a", code=True)
    for i in range(3):
        (a / f"code{i}.py").write_text(f"x = {i}\n", encoding="utf-8")
        git(a, "add", ".")
        git(a, "commit", "--quiet", "-m", f"code {i}")
        cli(a, "log", "--kind", "decision", "--summary", f"Decision {i}", "--body", f"Why {i}.", expect=0, via=Via.GIT)
    cli(
        a,
        "propose",
        "--kind",
        "decision",
        "--summary",
        "Cache: LRU",
        "--body",
        "Bounded memory.",
        "--agent",
        "coder",
        expect=0,
        via=Via.GIT,
    )
    git(a, "push", "--quiet", "origin", "main")
    cli(a, "push", expect=0, via=Via.GIT)
    assert git(remote, "for-each-ref", "refs/lifeline-review/").raw  # the trail is on the remote
    return remote, a


def shallow_clone(remote: Path, where: Path) -> Path:
    git(where.parent, "clone", "--quiet", "--depth", "1", remote.resolve().as_uri(), where.name)
    assert (where / ".git" / "shallow").exists()
    return where


def run_job(commands: list, cwd: Path) -> list:
    """Each command as CI runs it (bash -e -o pipefail); the finished processes."""
    assert commands
    return [
        subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", cmd], cwd=cwd, capture_output=True, timeout=120
        )
        for cmd in commands
    ]


def test_the_github_actions_workflow_passes_on_a_shallow_checkout(hosted, gitenv):
    remote, _ = hosted
    commands = github_commands()
    assert commands[0].startswith("git fetch") and commands[-1] == "git lifeline verify"
    procs = run_job(commands, shallow_clone(remote, gitenv / "gh"))
    assert [p.returncode for p in procs] == [0] * len(procs), [p.stderr.decode() for p in procs]
    out = procs[-1].stdout.decode()
    assert "ok: line main: 3 entries" in out and "ok: review trail main" in out


def test_the_gitlab_job_passes_on_a_shallow_checkout(hosted, gitenv):
    remote, _ = hosted
    commands = gitlab_commands()
    assert commands[-1] == "git lifeline verify"
    procs = run_job(commands, shallow_clone(remote, gitenv / "gl"))
    assert [p.returncode for p in procs] == [0] * len(procs), [p.stderr.decode() for p in procs]
    assert "ok: line main: 3 entries" in procs[-1].stdout.decode()


def test_the_workflow_fails_when_the_hosted_ledger_was_tampered_with(hosted, gitenv):
    remote, a = hosted
    entry_id = json.loads(cli(a, "list", "--json", expect=0, via=Via.GIT).raw)[0]["id"]
    tamper(a, entry_id)  # a fast-forward rewriting an entry: a hosted remote takes it
    git(a, "push", "--quiet", "origin", "refs/lifeline/main")
    procs = run_job(github_commands(), shallow_clone(remote, gitenv / "gh"))
    assert procs[-1].returncode == 1 and entry_id[:8] in procs[-1].stdout.decode()


def test_verify_refuses_a_ledger_history_cut_by_a_shallow_fetch(hosted, gitenv):
    remote, _ = hosted
    clone = shallow_clone(remote, gitenv / "cut")
    git(clone, "fetch", "--quiet", "--depth", "1", "origin", "+refs/lifeline/*:refs/lifeline/*")
    res = cli(clone, "verify", expect=1, via=Via.GIT)
    assert "shallow clone cut the history" in res.out
    doc = json.loads(cli(clone, "verify", "--json", expect=1, via=Via.GIT).raw)
    assert doc["ok"] is False and [p["code"] for p in doc["lines"][0]["problems"]] == ["shallow"]


def test_verify_json_reports_every_line_and_review_trail(hosted, gitenv):
    remote, a = hosted
    doc = json.loads(cli(a, "verify", "--json", expect=0, via=Via.GIT).raw)
    assert doc["ok"] is True
    (line,) = doc["lines"]
    assert (line["line"], line["entries"], line["commits"], line["problems"]) == ("main", 3, 3, [])
    assert line["head"] == git(a, "rev-parse", "refs/lifeline/main")
    (trail,) = doc["trails"]
    assert trail["line"] == "main" and trail["ok"] and trail["records"] >= 1
