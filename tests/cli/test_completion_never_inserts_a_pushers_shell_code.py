"""A thread (or any candidate) named by a pusher, `x;touch pwned;#`, is completed quoted in
bash, zsh and fish: accepting the completion and pressing Enter runs no code of theirs.
The shells are the real ones, driven as tests/cli/test_completion.py drives them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kit.run import cli, subprocess_env
from kit.shells import GIT_BASH_COMPLETION, ZSH_DRIVER, bash_complete, script

HOSTILE = "x;touch pwned;#"


@pytest.fixture
def hostile_repo(repo):
    r = cli(repo, "checkpoint", "--thread", HOSTILE, "--next", "n")
    assert r.code == 0, r
    return repo


@pytest.mark.skipif(GIT_BASH_COMPLETION is None, reason="git's bash completion script is not installed")
def test_bash_quotes_a_hostile_thread_name(hostile_repo, tmp_path, git_dispatch):
    (got,) = bash_complete(hostile_repo, tmp_path, ["git-lifeline", "log", "--thread", "x"])
    assert len(got) == 1, got
    # the completed word as the shell then reads it: the name itself, no command run
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", f"printf '%s' {got[0]}"], cwd=tmp_path, capture_output=True
    )
    assert proc.stdout.decode() == HOSTILE and not (tmp_path / "pwned").exists(), (got, proc)


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_lets_compadd_quote_every_candidate(hostile_repo, tmp_path, git_dispatch):
    ours = tmp_path / "lifeline.zsh"
    ours.write_text(script("zsh"))
    driver = ZSH_DRIVER.replace(
        "        if (( seen )); then", '        [[ "$a" == -Q ]] && print -r -- "UNQUOTED"\n        if (( seen )); then'
    )
    driver += "words=(git-lifeline log --thread x); CURRENT=4; _git-lifeline; print -r -- '=='\n"
    env = subprocess_env({"OUR_COMPLETION": str(ours), "PATH": f"{git_dispatch}{os.pathsep}{os.environ['PATH']}"})
    proc = subprocess.run(["zsh", "-f", "-c", driver], cwd=hostile_repo, env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert HOSTILE in out and "UNQUOTED" not in out, out


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_offers_a_hostile_thread_name_as_one_escaped_word(hostile_repo, tmp_path, git_dispatch):
    ours = tmp_path / "lifeline.fish"
    ours.write_text(script("fish"))
    env = subprocess_env(
        {"PATH": f"{git_dispatch}{os.pathsep}{os.environ['PATH']}", "XDG_CONFIG_HOME": str(tmp_path / "fish-config")}
    )
    # fish escapes a candidate as it inserts it; `string escape` is that escaping
    fish = f"source '{ours}'; for c in (complete -C 'git-lifeline log --thread x'); string split -f1 \\t -- $c | string escape; end"
    proc = subprocess.run(["fish", "--no-config", "-c", fish], cwd=hostile_repo, env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    (word,) = proc.stdout.decode().splitlines()
    back = subprocess.run(["fish", "--no-config", "-c", f"printf '%s' {word}"], cwd=tmp_path, capture_output=True)
    assert back.stdout.decode() == HOSTILE and not (tmp_path / "pwned").exists()
    assert not Path(hostile_repo / "pwned").exists()
