"""Hooks that stay out of the way, each through real git commands in temp repositories:
silent (and fast) while git replays commits, under husky, lefthook, the pre-commit
framework and a tracked core.hooksPath; and a team's own hook kept byte for byte."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from kit.home import gitenv  # noqa: F401
from kit.repos import open_ledger
from kit.run import ROOT, Via, cli, git

from git_lifeline.app.draft import Draft

HOUR_AGO = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
REMINDER = "since the last ledger entry"


@pytest.fixture
def repo(gitenv):
    r = gitenv / "repo"
    git(gitenv, "init", "--quiet", "-b", "main", str(r))
    commit(r, "base", "base.txt")
    open_ledger(r).log(Draft(kind="decision", summary="Baseline", body="why", ts=HOUR_AGO))
    return r


def commit(repo: Path, message: str, path: str = "file.txt", check: bool = True):
    p = repo / path
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8") as f:
        f.write(message + "\n")
    git(repo, "add", path)
    return git(repo, "commit", "--quiet", "-m", message, check=check)


def branch_of(repo: Path, name: str, n: int, path: str) -> None:
    git(repo, "checkout", "--quiet", "-b", name, "main")
    for i in range(n):
        commit(repo, f"{name} {i}", path)
    git(repo, "checkout", "--quiet", "main")


def lifeline_said(proc) -> bool:
    return "git-lifeline" in proc.err or "git-lifeline" in proc.out


# ---- silent while git replays ----------------------------------------------------------
@pytest.fixture
def starts(gitenv):
    """A file that gets a line each time git-lifeline starts: the git-lifeline on PATH
    is wrapped by a script that notes the start, then runs the real one. (How long a
    hook takes is measured in bench/bench.py, not here.)"""
    bindir = gitenv / "home" / "bin"
    real = bindir / "git-lifeline.real"
    (bindir / "git-lifeline").rename(real)
    log = gitenv / "starts"
    log.write_text("", encoding="utf-8")
    wrapper = bindir / "git-lifeline"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return log


def started(log: Path) -> list:
    return log.read_text(encoding="utf-8").splitlines()


def test_a_ten_commit_rebase_reminds_nothing_and_never_starts_the_tool(repo, starts):
    cli(repo, "hooks", "install", expect=0, via=Via.GIT)
    branch_of(repo, "feature", 10, "feature.txt")
    commit(repo, "main moves on", "main.txt")
    git(repo, "checkout", "--quiet", "feature")
    starts.write_text("", encoding="utf-8")
    proc = git(repo, "rebase", "--force-rebase", "main")
    assert not lifeline_said(proc), proc.err
    assert len(git(repo, "rev-list", "main..feature").split()) == 10
    assert started(starts) == []


def test_the_hook_run_by_hand_during_a_rebase_says_nothing_and_never_starts_the_tool(repo, starts):
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    hook = repo / ".git" / "hooks" / "post-commit"
    (repo / ".git" / "rebase-merge").mkdir()
    starts.write_text("", encoding="utf-8")
    proc = subprocess.run([str(hook)], cwd=repo, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == b""
    assert started(starts) == []


# ---- silent without starting the tool on ordinary commits that need no reminder -------
def test_a_commit_naming_a_ledger_entry_is_not_reminded_and_never_starts_the_tool(repo, starts):
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    entry = cli(repo, "list", "--format=%H", expect=0, via=Via.GIT).out.split()[0]
    starts.write_text("", encoding="utf-8")
    proc = commit(repo, f"Use the cache\n\nLifeline: {entry[:12]}")
    assert not lifeline_said(proc)
    assert started(starts) == []


def test_a_commit_no_newer_than_the_last_append_is_not_reminded_and_never_starts_the_tool(repo, starts):
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    starts.write_text("", encoding="utf-8")
    two_hours_ago = (datetime.now(timezone.utc) - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    p = repo / "old.txt"
    p.write_text("old\n", encoding="utf-8")
    git(repo, "add", "old.txt")
    proc = git(
        repo,
        "commit",
        "--quiet",
        "-m",
        "work dated before the entry",
        env=dict(os.environ, GIT_COMMITTER_DATE=two_hours_ago, GIT_AUTHOR_DATE=two_hours_ago),
    )
    assert not lifeline_said(proc)
    assert started(starts) == []


@pytest.mark.parametrize("setting", [("lifeline.remind", "off"), ("lifeline.remindAfter", "0")])
def test_reminders_turned_off_never_start_the_tool(repo, starts, setting):
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    git(repo, "config", *setting)
    starts.write_text("", encoding="utf-8")
    proc = commit(repo, "unrecorded work")
    assert not lifeline_said(proc)
    assert started(starts) == []


def test_a_commit_after_the_last_append_is_still_reminded(repo, starts):
    """The shell's silences never swallow a reminder that is due."""
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    starts.write_text("", encoding="utf-8")
    proc = commit(repo, "unrecorded work")
    assert REMINDER in proc.err
    assert started(starts) == ["hook post-commit"]


def test_a_newer_merge_at_a_lines_tip_does_not_silence_a_due_reminder(repo, starts):
    """A pull's merge is no append (the tool walks past it to the last append); a
    line tip the shell cannot judge is left to the tool, which reminds."""
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    tip = git(repo, "rev-parse", "refs/lifeline/main")
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}")
    later = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    dated = dict(os.environ, GIT_COMMITTER_DATE=later, GIT_AUTHOR_DATE=later)
    side = git(repo, "commit-tree", tree, "-p", tip, "-m", "side", env=dated)
    merge = git(repo, "commit-tree", tree, "-p", tip, "-p", side, "-m", "merge", env=dated)
    git(repo, "update-ref", "refs/lifeline/main", merge)
    starts.write_text("", encoding="utf-8")
    proc = commit(repo, "unrecorded work")
    assert REMINDER in proc.err
    assert started(starts) == ["hook post-commit"]


def test_an_append_dated_a_year_ahead_does_not_silence_reminders_for_a_year(repo, starts):
    """A teammate's clock a year ahead (or a crafted commit date) pulled into every clone
    must not count as 'recorded after your commit' — in the shell or in the tool."""
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    tip = git(repo, "rev-parse", "refs/lifeline/main")
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}")
    next_year = (datetime.now(timezone.utc) + timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ahead = git(
        repo,
        "commit-tree",
        tree,
        "-p",
        tip,
        "-m",
        "lifeline: append 1",
        env=dict(os.environ, GIT_COMMITTER_DATE=next_year, GIT_AUTHOR_DATE=next_year),
    ).out.strip()
    git(repo, "update-ref", "refs/lifeline/main", ahead)
    starts.write_text("", encoding="utf-8")
    proc = commit(repo, "unrecorded work")
    assert REMINDER in proc.err
    assert started(starts) == ["hook post-commit"]
    assert REMINDER in cli(repo, "hook", "post-commit", expect=0, via=Via.GIT).err


def test_a_newer_ref_that_is_no_line_does_not_silence_a_due_reminder(repo, starts):
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    tip = git(repo, "rev-parse", "refs/lifeline/main")
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}")
    later = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    newer = git(
        repo, "commit-tree", tree, "-m", "not a line", env=dict(os.environ, GIT_COMMITTER_DATE=later)
    ).out.strip()
    git(repo, "update-ref", "refs/lifeline/nested/name", newer)  # no valid line name has a slash
    proc = commit(repo, "unrecorded work")
    assert REMINDER in proc.err


def test_cherry_picks_reverts_am_and_a_concluded_merge_remind_nothing(repo, gitenv):
    cli(repo, "hooks", "install", expect=0, via=Via.GIT)
    branch_of(repo, "side", 3, "side.txt")
    proc = git(repo, "cherry-pick", "side~2")
    assert not lifeline_said(proc)
    proc = git(repo, "cherry-pick", "side~1", "side")
    assert not lifeline_said(proc)
    proc = git(repo, "revert", "--no-edit", "HEAD~1..HEAD")
    assert not lifeline_said(proc)
    patches = gitenv / "patches"
    git(repo, "format-patch", "--quiet", "-2", "side", "-o", str(patches))
    git(repo, "checkout", "--quiet", "-b", "applied", "main~3")
    proc = git(repo, "am", "--quiet", *sorted(str(p) for p in patches.iterdir()))
    assert not lifeline_said(proc)
    # a merge that stopped on a conflict, concluded by `git commit`
    git(repo, "checkout", "--quiet", "-b", "left", "main")
    commit(repo, "left side", "clash.txt")
    git(repo, "checkout", "--quiet", "-b", "right", "main")
    commit(repo, "right side", "clash.txt")
    assert git(repo, "merge", "left", check=False).code != 0
    (repo / "clash.txt").write_text("both\n", encoding="utf-8")
    git(repo, "add", "clash.txt")
    proc = git(repo, "commit", "--no-edit")
    assert not lifeline_said(proc)
    # new work still gets its reminder: the hook is there and alive
    assert REMINDER in commit(repo, "new work").err


def test_a_rebase_stopped_on_a_conflict_and_continued_reminds_nothing(repo):
    cli(repo, "hooks", "install", expect=0, via=Via.GIT)
    branch_of(repo, "topic", 2, "clash.txt")
    commit(repo, "main edits it too", "clash.txt")
    git(repo, "checkout", "--quiet", "topic")
    assert git(repo, "rebase", "main", check=False).code != 0
    (repo / "clash.txt").write_text("resolved\n", encoding="utf-8")
    git(repo, "add", "clash.txt")
    proc = git(repo, "-c", "core.editor=true", "rebase", "--continue", check=False)
    while (repo / ".git" / "rebase-merge").exists():  # the second pick clashes too
        assert not lifeline_said(proc)
        (repo / "clash.txt").write_text("resolved again\n", encoding="utf-8")
        git(repo, "add", "clash.txt")
        proc = git(repo, "-c", "core.editor=true", "rebase", "--continue", check=False)
    assert proc.code == 0 and not lifeline_said(proc)


def test_the_user_hook_still_runs_for_every_replayed_commit(repo, gitenv):
    hooks = repo / ".git" / "hooks"
    trace = gitenv / "trace"
    (hooks / "post-commit").write_text(f'#!/bin/sh\necho "$0" >> "{trace}"\n', encoding="utf-8")
    (hooks / "post-commit").chmod(0o755)
    cli(repo, "hooks", "install", expect=0, via=Via.GIT)
    branch_of(repo, "feature", 3, "f.txt")
    commit(repo, "main moves", "m.txt")
    git(repo, "checkout", "--quiet", "feature")
    trace.write_text("", encoding="utf-8")
    proc = git(repo, "rebase", "main")
    assert not lifeline_said(proc)
    # three replays, each run under its own name (not post-commit.lifeline-chained)
    assert [Path(p).name for p in trace.read_text().splitlines()] == ["post-commit"] * 3


def test_the_tool_itself_is_silent_when_called_during_a_rebase(repo):
    """What a hook manager runs (`git lifeline hook post-commit`, no shell script of
    ours in between) is silent too: a real rebase runs it after every pick."""
    branch_of(repo, "feature", 3, "f.txt")
    commit(repo, "main moves", "m.txt")
    git(repo, "checkout", "--quiet", "feature")
    proc = git(repo, "rebase", "--exec", "git lifeline hook post-commit", "main")
    assert proc.code == 0 and REMINDER not in proc.err
    assert REMINDER in cli(repo, "hook", "post-commit", expect=0, via=Via.GIT).err


# ---- hook managers ---------------------------------------------------------------------
HUSKY_HOOKS = (
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-rebase",
    "post-rewrite",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-auto-gc",
)
HUSKY_STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"'
HUSKY_RUNNER = """#!/usr/bin/env sh
# what husky 9 runs: the project's .husky/<name of this hook>, found from $0
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
"""


def husky_install(repo: Path) -> None:
    """What `npm install` does in a project using husky 9 (its `prepare` script): point
    core.hooksPath at .husky/_ and write a stub there for every hook, over what is there."""
    git(repo, "config", "core.hooksPath", ".husky/_")
    d = repo / ".husky" / "_"
    d.mkdir(parents=True, exist_ok=True)
    (d / ".gitignore").write_text("*", encoding="utf-8")
    (d / "h").write_text(HUSKY_RUNNER, encoding="utf-8")
    for name in HUSKY_HOOKS:
        stub = d / name
        existed = stub.exists()
        stub.write_text(HUSKY_STUB, encoding="utf-8")  # like writeFileSync: content over, mode kept
        if not existed:
            stub.chmod(0o755)


def test_husky_hooks_run_ours_and_theirs_and_survive_npm_install(repo, gitenv):
    trace = gitenv / "husky-trace"
    (repo / ".husky").mkdir()
    (repo / ".husky" / "post-commit").write_text(f'echo "husky post-commit ran" >> "{trace}"\n', encoding="utf-8")
    git(repo, "add", ".husky/post-commit")
    git(repo, "commit", "--quiet", "--no-verify", "-m", "husky hook")
    husky_install(repo)
    stub = (repo / ".husky" / "_" / "post-commit").read_bytes()
    out = cli(repo, "hooks", "install", expect=0, via=Via.GIT).out
    assert "installed post-commit" in out and ".husky/_" in out
    proc = commit(repo, "work under husky")
    assert REMINDER in proc.err and trace.read_text() == "husky post-commit ran\n"
    # npm install rewrites every stub, ours included; installing again just works
    husky_install(repo)
    proc = cli(repo, "hooks", "install", expect=0, via=Via.GIT)
    assert "kept aside" not in proc.out  # the same stub: nothing to keep twice
    trace.write_text("", encoding="utf-8")
    proc = commit(repo, "more work under husky")
    assert REMINDER in proc.err and trace.read_text() == "husky post-commit ran\n"
    # a rebase stays quiet, husky's own hook still runs
    branch_of(repo, "feature", 2, "f.txt")
    git(repo, "checkout", "--quiet", "feature")
    commit_count = len(trace.read_text().splitlines())
    proc = git(repo, "rebase", "--force-rebase", "main")
    assert not lifeline_said(proc) and len(trace.read_text().splitlines()) == commit_count + 2
    cli(repo, "hooks", "uninstall", expect=0, via=Via.GIT)
    assert (repo / ".husky" / "_" / "post-commit").read_bytes() == stub
    assert git(repo, "status", "--porcelain", "--ignored", "--", ".husky").raw == b"!! .husky/_/\n"


LEFTHOOK_HOOK = """#!/bin/sh
if [ "$LEFTHOOK" = "0" ]; then
  exit 0
fi
call_lefthook()
{
  lefthook "$@"
}
call_lefthook run "post-commit" "$@"
"""
LEFTHOOK_RUNNER = """#!/bin/sh
# stands in for the lefthook binary: `run HOOK` runs each `run:` command of lefthook.yml
# listed under HOOK
[ "$1" = run ] || exit 2
hook=$2; shift 2
awk -v h="$hook:" '$0 == h {on=1; next} /^[^ ]/ {on=0} on && $1 == "run:" {sub(/^ *run: */, ""); print}' \
  lefthook.yml | while IFS= read -r cmd; do sh -c "$cmd" || exit $?; done
"""


def test_under_lefthook_the_reminder_comes_on_new_work_only(repo, gitenv):
    bindir = gitenv / "home" / "bin"
    (bindir / "lefthook").write_text(LEFTHOOK_RUNNER, encoding="utf-8")
    (bindir / "lefthook").chmod(0o755)
    (repo / "lefthook.yml").write_text(
        "post-commit:\n  commands:\n    lifeline:\n      run: git lifeline hook post-commit\n", encoding="utf-8"
    )
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text(LEFTHOOK_HOOK, encoding="utf-8")
    hook.chmod(0o755)
    proc = commit(repo, "work under lefthook")
    assert REMINDER in proc.err
    branch_of(repo, "feature", 3, "f.txt")
    git(repo, "checkout", "--quiet", "feature")
    proc = git(repo, "rebase", "--force-rebase", "main~1")
    assert proc.code == 0 and REMINDER not in proc.err


def pre_commit_hook(hook_id: str) -> dict:
    """The fields of one hook of .pre-commit-hooks.yaml (a flat `key: value` list)."""
    text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    block = re.split(rf"^- id: {hook_id}$", text, maxsplit=1, flags=re.M)[1].split("\n- id: ", 1)[0]
    return dict(m.groups() for m in re.finditer(r"^  (\w+): (.*)$", block, re.M))


def test_the_pre_commit_framework_shows_the_reminder_without_verbose(repo):
    spec = pre_commit_hook("lifeline-remind")
    assert spec["stages"] == "[post-commit]" and "verbose" not in spec
    argv = spec["entry"].split()
    # the framework shows a hook's output when it fails: the reminder exits 1 ...
    commit(repo, "new work")
    proc = subprocess.run(argv, cwd=repo, capture_output=True)
    assert proc.returncode == 1 and REMINDER in proc.stderr.decode()
    # ... and passes in silence when there is nothing to say, or while git replays
    (repo / ".git" / "rebase-merge").mkdir()
    proc = subprocess.run(argv, cwd=repo, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == b""
    assert pre_commit_hook("lifeline-verify")["verbose"] == "true"  # push notes shown too


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="the pre-commit framework is not installed")
def test_the_real_pre_commit_framework_prints_the_reminder(repo):
    spec = pre_commit_hook("lifeline-remind")
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        f"  - id: lifeline-remind\n    name: {spec['name']}\n    entry: {spec['entry']}\n"
        "    language: system\n    stages: [post-commit]\n    pass_filenames: false\n    always_run: true\n",
        encoding="utf-8",
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "--quiet", "-m", "framework config")
    subprocess.run(["pre-commit", "install", "--hook-type", "post-commit"], cwd=repo, check=True, capture_output=True)
    proc = commit(repo, "work under the framework")
    assert REMINDER in proc.out + proc.err


# ---- tracked hooks and a team's own hooks ----------------------------------------------
def test_a_tracked_hook_in_core_hooks_path_is_never_renamed(repo):
    d = repo / ".githooks"
    d.mkdir()
    (d / "pre-push").write_text("#!/bin/sh\nexec make check\n", encoding="utf-8")
    (d / "pre-push").chmod(0o755)
    git(repo, "add", ".githooks")
    git(repo, "commit", "--quiet", "-m", "team hooks")
    git(repo, "config", "core.hooksPath", ".githooks")
    before = (d / "pre-push").read_bytes()
    out = cli(repo, "hooks", "install", expect=0, via=Via.GIT).out
    assert "pre-push is tracked by the repository" in out and 'git lifeline hook pre-push "$@"' in out
    assert "installed post-commit" in out
    assert (d / "pre-push").read_bytes() == before and not (d / "pre-push.lifeline-chained").exists()
    assert git(repo, "status", "--porcelain", "--", ".githooks/pre-push").raw == b""
    assert "a hook tracked by the repository" in cli(repo, "hooks", "status", expect=0, via=Via.GIT).out
    out = cli(repo, "hooks", "uninstall", expect=0, via=Via.GIT).out
    assert (d / "pre-push").read_bytes() == before and not (d / "post-commit").exists()


def test_a_team_hook_that_calls_git_lifeline_is_kept_and_restored_byte_for_byte(repo):
    hook = repo / ".git" / "hooks" / "pre-push"
    team = (
        b"#!/bin/sh\r\n# team checks, and git-lifeline's\r\n"
        b'git lifeline hook pre-push "$@" || exit $?\r\nmake lint \xff\xfe\r\n'
    )
    hook.write_bytes(team)
    hook.chmod(0o750)
    out = cli(repo, "hooks", "install", expect=0, via=Via.GIT).out
    assert "runs your previous hook first: pre-push.lifeline-chained" in out
    assert (hook.parent / "pre-push.lifeline-chained").read_bytes() == team
    assert "not installed" not in cli(repo, "hooks", "status", expect=0, via=Via.GIT).out.split("post-commit")[0]
    cli(repo, "hooks", "uninstall", expect=0, via=Via.GIT)
    assert hook.read_bytes() == team and stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert not (hook.parent / "pre-push.lifeline-chained").exists()


def test_a_symlinked_hook_is_kept_as_the_same_symlink(repo, gitenv):
    shared = gitenv / "shared-hook"
    shutil.copy(ROOT / "hooks" / "post-commit", shared)  # even one pointing at our own script
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.symlink_to(shared)
    cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT)
    chained = hook.parent / "post-commit.lifeline-chained"
    assert chained.is_symlink() and os.readlink(chained) == str(shared) and not hook.is_symlink()
    cli(repo, "hooks", "uninstall", expect=0, via=Via.GIT)
    assert hook.is_symlink() and os.readlink(hook) == str(shared)


@pytest.mark.parametrize("release", ["first", "before-the-recorded-check"])
def test_hooks_installed_by_an_earlier_release_are_upgraded_not_chained(repo, release):
    from git_lifeline.app.hook_files import _first_script_text, script_text

    earlier = (
        _first_script_text("post-commit") if release == "first" else script_text("post-commit", recorded_check=False)
    )
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text(earlier, encoding="utf-8")
    hook.chmod(0o755)
    out = cli(repo, "hooks", "install", "post-commit", expect=0, via=Via.GIT).out
    assert "updated post-commit" in out and "chained" not in out
    assert hook.read_text(encoding="utf-8") == (ROOT / "hooks" / "post-commit").read_text(encoding="utf-8")
    cli(repo, "hooks", "uninstall", expect=0, via=Via.GIT)
    assert not hook.exists()
