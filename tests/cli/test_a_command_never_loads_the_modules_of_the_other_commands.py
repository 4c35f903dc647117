"""Start-up pays for the command that runs, not for all of them: the group loads a command's
module of cli/ when it is asked for it (cli/main.py's COMMANDS), so `log` never imports the
modules of `review`, `sync` or `mcp`, and `--version` opens no repository library at all.
`--help` and completion still list every command (tests/cli/test_cli.py, test_completion.py)."""

from __future__ import annotations

import subprocess
import sys

from kit.run import subprocess_env

from git_lifeline.cli.main import COMMANDS

# Runs the real CLI in this process and writes, on exit, every module it imported.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\nloaded: " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = ["git-lifeline", *sys.argv[1:]]
from git_lifeline.cli import run
run()
"""


def loaded(cwd, *args: str) -> set:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=str(cwd), capture_output=True, text=True, env=subprocess_env()
    )
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("loaded: "), proc.stderr
    return set(last[len("loaded: ") :].split())


def command_modules(names: set) -> set:
    return {f"git_lifeline.cli.{COMMANDS[name][0]}" for name in names}


def test_log_imports_the_module_of_log_and_of_no_other_command(repo):
    got = loaded(repo, "log", "--kind", "note", "--summary", "Lazy commands", "--body", "Because.")
    assert command_modules({"log"}) <= got
    others = command_modules(set(COMMANDS)) - command_modules({"log"})
    assert not others & got, sorted(others & got)


def test_version_imports_no_command_module_and_no_repository_library(tmp_path):
    got = loaded(tmp_path, "--version")
    assert not command_modules(set(COMMANDS)) & got, sorted(command_modules(set(COMMANDS)) & got)
    assert "pygit2" not in got


def test_log_of_a_plain_entry_imports_neither_the_verifier_nor_the_truth_nor_the_context(repo):
    """A `log` was 1.4x the start-up of its libraries alone: it imported the gates and the
    verifier (through git/sync.py), the truth and the context's modules, none of which a
    plain entry's write runs (docs/PERFORMANCE.md, "Start-up of `log`")."""
    got = loaded(repo, "log", "--kind", "note", "--summary", "Lazy reads", "--body", "Because.")
    unneeded = {
        "git_lifeline.git.sync",
        "git_lifeline.git.verify",
        "git_lifeline.git.checks",
        "git_lifeline.git.lines",
        "git_lifeline.git.trails",
        "git_lifeline.git.history",
        "git_lifeline.core.truth",
        "git_lifeline.core.dates",
        "git_lifeline.views.context",
        "git_lifeline.app.context_run",
    }
    assert not unneeded & got, sorted(unneeded & got)


def test_a_read_with_nothing_fetched_imports_no_verifier(repo):
    """Every read catches up through git/sync.py (app/catch_up.py); it imported the verifier
    and the gates at module level, though only what was fetched is ever verified."""
    got = loaded(repo, "context")
    assert "git_lifeline.git.sync" in got  # the read did ask what was fetched
    assert not {"git_lifeline.git.verify", "git_lifeline.git.checks"} & got
