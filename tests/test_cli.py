"""The command line as users and scripts meet it: help, the manual, pipes, exit codes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, cli, git_lifeline, make_entry, subprocess_env

from git_lifeline import __version__
from git_lifeline.cli.main import main

MAN_PAGE = ROOT / "man" / "git-lifeline.1"
COMMANDS = sorted(main.commands)
VISIBLE = sorted(name for name, cmd in main.commands.items() if not cmd.hidden)  # what -h lists


def man_page_commands(text: str) -> set:
    """Command names the man page documents under `.SS` headings or `.TP` tags."""
    names = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SS "):
            tag = line[4:]
        elif line.startswith(".TP") and i + 1 < len(lines):
            tag = lines[i + 1]
        else:
            continue
        tag = re.sub(r"\\f[BIRP]|\\f\(..|\\&|^\.[BIR]{1,2} ", "", tag).replace('"', "").replace("\\-", "-")
        words = tag.split()
        while words[:2] == ["git", "lifeline"] or words[:1] == ["git-lifeline"]:
            words = words[2:] if words[0] == "git" else words[1:]
        if words and not words[0].startswith("-"):
            names.add(words[0])
    return names


def test_short_help_lists_every_command():
    res = cli(ROOT, "-h")
    assert res.code == 0, res
    assert res.out.startswith("Usage: git-lifeline [OPTIONS] COMMAND [ARGS]...")
    for name in VISIBLE:
        assert re.search(rf"^  {name}\s", res.out, re.M), name


def test_short_help_through_git_dispatch(repo, git_dispatch):
    res = git_lifeline(repo, "-h")
    assert res.code == 0 and "Usage: git-lifeline" in res.out, res
    sub = git_lifeline(repo, "log", "-h")
    assert sub.code == 0 and "--summary" in sub.out, sub


def test_version_is_reported():
    res = cli(ROOT, "--version")
    assert res.code == 0 and __version__ in res.out, res


def test_an_unknown_command_is_a_usage_error(repo):
    res = cli(repo, "frobnicate")
    assert res.code == 2 and "No such command" in res.err and "Traceback" not in res.err, res


def test_man_page_parser_reads_ss_and_tp_tags():
    sample = ('.SH COMMANDS\n.SS "git lifeline log"\ntext\n.SS \\fBlist\\fR [\\-\\-json]\n'
              ".TP\n.B verify\nchecks\n.TP\n.B \\-\\-json\nan option\n.TP\n\\fBgit lifeline show\\fR \\fIID\\fR\n")
    assert man_page_commands(sample) == {"log", "list", "verify", "show"}


@pytest.mark.xfail(condition=not MAN_PAGE.read_text(encoding="utf-8").strip(), strict=True,
                   reason="man page not written yet")
def test_every_command_is_documented_in_the_man_page():
    documented = man_page_commands(MAN_PAGE.read_text(encoding="utf-8"))
    assert set(COMMANDS) <= documented, f"undocumented: {sorted(set(COMMANDS) - documented)}"


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"]])
def test_piping_into_head_exits_quietly(ledger, repo, git_dispatch, argv):
    # Long summaries: the output is far larger than a pipe buffer, so the writer
    # really meets a closed pipe after `head -1` exits.
    ledger.append([make_entry(i, summary=f"Entry {i:03d} " + "w" * 280) for i in range(200)])
    proc = subprocess.run(["sh", "-c", f"git lifeline {' '.join(argv)} | head -1"], cwd=str(repo),
                          capture_output=True, env=subprocess_env(), timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.count(b"\n") == 1
    assert proc.stderr == b"", proc.stderr.decode("utf-8", "replace")


def _installed_man_page():
    import sys
    return Path(sys.prefix) / "share" / "man" / "man1" / "git-lifeline.1"


@pytest.mark.skipif(shutil.which("man") is None, reason="man-db is not installed (.ci/run installs it)")
@pytest.mark.parametrize("argv", [["help", "lifeline"], ["lifeline", "--help"]])
def test_git_help_opens_the_installed_man_page(tmp_path, argv):
    import os
    import subprocess
    import sys
    page = _installed_man_page()
    assert page.exists(), "the package must install man/git-lifeline.1 into share/man/man1"
    assert page.read_bytes() == (ROOT / "man" / "git-lifeline.1").read_bytes(), \
        "the installed man page is stale: reinstall the package"
    env = dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80",
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("MANPATH", None)
    proc = subprocess.run(["git", *argv], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, proc.stderr
    assert "GIT-LIFELINE(1)" in out and "reasoning ledger" in out
