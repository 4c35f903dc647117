"""`git lifeline <TAB>`: our completion plugged into git's own, in real shells.

Bash: git's completion script (the one git ships) and ours are sourced in a bash
subprocess, which calls git's entry point with COMP_WORDS as readline would. Fish: fish
itself completes the command line. Zsh: the script is parsed, and its function is run
with zsh's completion variables, collecting what it offers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from kit.run import cli, git, subprocess_env
from kit.shells import GIT_BASH_COMPLETION, ZSH_DRIVER, bash_complete, script


@pytest.fixture
def ledger_repo(repo, git_dispatch):
    """A line with a decision, an open item on a thread, a checkpoint; a second line; a remote."""

    def ok(*args):
        res = cli(repo, *args)
        assert res.code == 0, res
        return res.out

    d = json.loads(ok("log", "--kind", "decision", "--summary", "Database: PostgreSQL", "--body", "ACID.", "--json"))[
        "entry"
    ]["id"]
    o = json.loads(ok("log", "--kind", "open", "--summary", "Which queue?", "--body", "?", "--json"))["entry"]["id"]
    ok("checkpoint", "--thread", "infra", "--next", "pick a queue")
    ok("--line", "research", "log", "--kind", "note", "--summary", "Paper", "--body", "b")
    git(repo, "remote", "add", "upstream", str(repo))
    return repo, d, o


# ---- bash, through git's own completion ------------------------------------------------------
@pytest.mark.skipif(GIT_BASH_COMPLETION is None, reason="git's bash completion script is not installed")
def test_git_lifeline_tab_completes_through_gits_bash_completion(ledger_repo, tmp_path):
    # git's completion used to stop after `git lifeline`: nothing defined _git_lifeline
    repo, d, o = ledger_repo
    got = bash_complete(
        repo,
        tmp_path,
        ["git", "lifeline", "sh"],
        ["git", "lifeline", "re"],
        ["git", "lifeline", "list", "--ki"],
        ["git", "lifeline", "list", "--kind", "de"],
        ["git", "lifeline", "show", d[:3]],
        ["git", "lifeline", "close", ""],
        ["git", "lifeline", "--line", "re"],
        ["git", "lifeline", "log", "--thread", "in"],
        ["git", "lifeline", "completion", ""],
        ["git", "lifeline", "push", "up"],
        ["git", "lifeline", "--color=al"],
        ["git", "lifeline", "--line", "research", "show", ""],
        ["git-lifeline", "rev"],
        ["git-lifeline", "list", "--kind", "ch"],
    )
    assert got[0] == ["show"]
    assert got[1] == [
        "reaffirm",
        "recall",
        "reject",
        "remote-setup",
        "render",
        "resolve",
        "resume",
        "revert",
        "review",
        "revise",
    ]
    assert got[2] == ["--kind"]
    assert sorted(got[3]) == ["debt", "decision"]
    assert got[4] == [d[:8]]
    assert got[5] == [o[:8]]  # close offers only the open items
    assert got[6] == ["research"]
    assert got[7] == ["infra"]
    assert got[8] == ["bash", "zsh", "fish"]
    assert got[9] == ["upstream"]
    assert got[10] == ["always"]  # readline completes after the '='
    assert len(got[11]) == 1 and got[11][0] != d[:8]  # ids of the line named with --line
    assert got[12] == ["revert", "review", "revise"]
    assert got[13] == ["checkpoint"]
    assert sorted(got[1]) == got[1]


@pytest.mark.skipif(GIT_BASH_COMPLETION is None, reason="git's bash completion script is not installed")
def test_bash_completion_outside_a_repository_offers_commands_and_never_an_error(tmp_path, git_dispatch):
    got = bash_complete(tmp_path, tmp_path, ["git", "lifeline", "ver"], ["git", "lifeline", "show", ""])
    assert got == [["verify"], []]


def test_the_hidden_entry_point_never_fails(repo):
    for argv in (
        ["__complete"],
        ["__complete", "bash", "--"],
        ["__complete", "zsh", "--", "show", "--line", "x", ""],
        ["__complete", "bash", "--", "nonsense", "--kind", ""],
    ):
        res = cli(repo, *argv)
        assert res.code == 0 and "Traceback" not in res.err, (argv, res)
    res = cli(repo, "__complete", "fish", "--", "lifeline", "sh")  # a shell that hands over `git lifeline ...`
    assert res.out.startswith("show\tShow one entry")


# ---- fish -------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_git_lifeline_tab_completes_in_fish(ledger_repo, tmp_path, git_dispatch):
    repo, d, _ = ledger_repo
    ours = tmp_path / "lifeline.fish"
    ours.write_text(script("fish"))
    commands = "; ".join(
        f"complete -C '{line}'; echo =="
        for line in ("git lifeline sh", "git-lifeline list --kind de", "git -C . lifeline show " + d[:3])
    )
    env = subprocess_env(
        {"PATH": f"{git_dispatch}{os.pathsep}{os.environ['PATH']}", "XDG_CONFIG_HOME": str(tmp_path / "fish-config")}
    )
    proc = subprocess.run(
        ["fish", "--no-config", "-c", f"source '{ours}'; {commands}"],
        cwd=repo,
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    replies = [r.strip().split("\n") for r in proc.stdout.decode().split("==")[:-1]]
    assert replies[0][0].startswith("show\tShow one entry")
    assert sorted(r.split("\t")[0] for r in replies[1]) == ["debt", "decision"]
    assert replies[2] == [f"{d[:8]}\tdecision: Database: PostgreSQL"]


# ---- zsh --------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_script_is_valid_and_its_function_offers_the_candidates(repo, tmp_path, git_dispatch):
    ours = tmp_path / "lifeline.zsh"
    ours.write_text(script("zsh"))
    assert subprocess.run(["zsh", "-n", str(ours)], capture_output=True).returncode == 0
    env = subprocess_env({"OUR_COMPLETION": str(ours), "PATH": f"{git_dispatch}{os.pathsep}{os.environ['PATH']}"})
    proc = subprocess.run(["zsh", "-f", "-c", ZSH_DRIVER], cwd=repo, env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    replies = [r.strip().split("\n") for r in proc.stdout.decode().split("==")]
    assert sorted(replies[0]) == ["debt", "decision"]
    assert replies[1] == ["show"]
    assert replies[2] == [":files:"]
    assert "lifeline:the reasoning ledger" in replies[3]
