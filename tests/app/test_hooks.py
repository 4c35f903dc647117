"""Hooks, each exercised by a real `git commit` / `git push` in temp repos:
pre-push, post-commit, commit-msg, pre-receive (on a real bare server repo),
installation that chains to users' hooks, core.hooksPath, linked worktrees."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from kit.home import gitenv  # noqa: F401
from kit.repos import init_repo, make_clone, open_ledger, ref  # noqa: F401
from kit.run import ROOT, Via, cli, git
from kit.tamper import entry_blobs, tamper  # noqa: F401

from git_lifeline.app.draft import Draft

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def at(seconds: int, git_format: bool = False) -> str:
    """A time `seconds` after the test started: entries and commits share one clock."""
    t = NOW + timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ" if git_format else "%Y-%m-%dT%H:%M:%S.%fZ")


T = at(0)


def commit(repo, message, *more, date=None, path="file.txt", check=True):
    p = Path(repo) / path
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8") as f:
        f.write(message + "\n")
    git(repo, "add", path)
    date = date or at(10, git_format=True)
    env = dict(os.environ, GIT_COMMITTER_DATE=date, GIT_AUTHOR_DATE=date)
    args = ["commit", "--quiet", "-m", message]
    for m in more:
        args += ["-m", m]
    return git(repo, *args, env=env, check=check)


def entry(repo, summary, t=T, **kw):
    return (
        open_ledger(repo)
        .log(Draft(kind=kw.pop("kind", "decision"), summary=summary, body=f"why {summary}", ts=t, **kw))
        .entry
    )


def install(repo, *names):
    from git_lifeline.app.hook_files import install as do_install
    from git_lifeline.git.repo import open_repo

    return do_install(open_repo(str(repo)), list(names) or None)


@pytest.fixture
def pair(gitenv):
    remote = init_repo(gitenv / "remote.git", "--bare")
    a = make_clone(str(remote), gitenv / "a", code=True)
    git(a, "push", "--quiet", "origin", "main")
    return remote, a


def write_user_hook(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


# ---- installation ------------------------------------------------------------------
def test_install_chains_to_existing_hook_and_uninstall_restores_it(pair, tmp_path):
    remote, a = pair
    hook = a / ".git" / "hooks" / "pre-push"
    trace = tmp_path / "user-hook.log"
    user_script = f'echo "user hook: $1" >> "{trace}"\ncat >> "{trace}"\nexit 0\n'
    write_user_hook(hook, user_script)
    original = hook.read_bytes()
    out = cli(a, "hooks", "install", expect=0, via=Via.GIT).out
    assert "installed pre-push (runs your previous hook first: pre-push.lifeline-chained)" in out
    assert (a / ".git" / "hooks" / "pre-push.lifeline-chained").read_bytes() == original
    assert "installed" in cli(a, "hooks", "status", expect=0, via=Via.GIT).out
    commit(a, "code change")
    git(a, "push", "--quiet", "origin", "main")
    text = trace.read_text()
    assert "user hook: origin" in text and "refs/heads/main" in text  # same args and stdin
    # a failing user hook still blocks the push
    write_user_hook(a / ".git" / "hooks" / "pre-push.lifeline-chained", "exit 7\n")
    commit(a, "more code")
    assert git(a, "push", "--quiet", "origin", "main", check=False).code != 0
    (a / ".git" / "hooks" / "pre-push.lifeline-chained").write_bytes(original)
    out = cli(a, "hooks", "uninstall", expect=0, via=Via.GIT).out
    assert "restored your previous hook" in out
    assert hook.read_bytes() == original
    assert not (a / ".git" / "hooks" / "pre-push.lifeline-chained").exists()
    assert not (a / ".git" / "hooks" / "post-commit").exists()


def test_install_is_idempotent_and_never_clobbers_a_second_foreign_hook(pair):
    remote, a = pair
    install(a)
    assert "already installed" in cli(a, "hooks", "install", expect=0, via=Via.GIT).out
    hooks = a / ".git" / "hooks"
    write_user_hook(hooks / "post-commit.lifeline-chained", "exit 0\n")
    write_user_hook(hooks / "post-commit", "echo mine\n")  # the user replaced ours meanwhile
    before = {p.name: p.read_bytes() for p in hooks.iterdir()}
    assert "not installed (another hook is there)" in cli(a, "hooks", "status", expect=0, via=Via.GIT).out
    out = cli(a, "hooks", "install", expect=0, via=Via.GIT).out
    assert "kept aside as post-commit.lifeline-chained.1" in out
    # every byte is still there: the newest hook runs first, the older one is kept aside
    assert (hooks / "post-commit.lifeline-chained").read_bytes() == before["post-commit"]
    assert (hooks / "post-commit.lifeline-chained.1").read_bytes() == before["post-commit.lifeline-chained"]
    # ours deleted by hand: uninstall still gives the user's hook its name back
    (hooks / "post-commit").unlink()
    from git_lifeline.app.hook_files import uninstall
    from git_lifeline.git.repo import open_repo

    assert [c.action for c in uninstall(open_repo(str(a)), ["post-commit"])] == ["restored"]
    assert (hooks / "post-commit").read_bytes() == before["post-commit"]


def test_install_honours_relative_core_hooks_path(pair):
    remote, a = pair
    git(a, "config", "core.hooksPath", ".githooks")
    install(a)
    assert (a / ".githooks" / "post-commit").exists()
    assert not (a / ".git" / "hooks" / "post-commit").exists()
    entry(a, "Earlier")
    proc = commit(a, "work without a why")
    assert "since the last ledger entry" in proc.err


def test_install_from_linked_worktree_uses_the_shared_hooks_dir(pair):
    remote, a = pair
    wt = a.parent / "wt"
    git(a, "worktree", "add", "--quiet", str(wt), "-b", "feature")
    out = cli(wt, "hooks", "install", expect=0, via=Via.GIT).out
    assert str((a / ".git" / "hooks").resolve()) in out
    assert (a / ".git" / "hooks" / "post-commit").exists()
    entry(wt, "Shared ledger")
    proc = commit(wt, "work in the linked worktree")
    assert "since the last ledger entry" in proc.err


def test_shipped_hook_scripts_match_what_install_writes():
    from git_lifeline.app.hook_files import HOOKS, script_text

    for name in HOOKS:
        shipped = ROOT / "hooks" / name
        assert shipped.read_text(encoding="utf-8") == script_text(name)
        assert shipped.stat().st_mode & stat.S_IXUSR
    spec = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "stages: [pre-push]" in spec and "entry: git-lifeline hook pre-push" in spec


def test_hook_script_without_the_tool_lets_client_hooks_pass_and_fails_server_closed(tmp_path):
    sh = shutil.which("sh")
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))  # the scripts need only shell builtins here
    client = subprocess.run(
        [sh, str(ROOT / "hooks" / "pre-push"), "origin", "url"], input=b"", capture_output=True, env=env
    )
    assert client.returncode == 0 and b"check was skipped" in client.stderr
    server = subprocess.run([sh, str(ROOT / "hooks" / "pre-receive")], input=b"", capture_output=True, env=env)
    assert server.returncode == 1 and b"refusing ledger updates" in server.stderr


def test_init_offers_hooks_and_prints_what_it_installed(pair):
    remote, a = pair
    out = cli(a, "init", expect=0, via=Via.GIT).out  # not a terminal: never installs unasked
    assert "hooks: not installed" in out and not (a / ".git" / "hooks" / "pre-push").exists()
    out = cli(a, "init", "--hooks", expect=0, via=Via.GIT).out
    assert "installed pre-push" in out and "installed post-commit" in out
    assert (a / ".git" / "hooks" / "pre-push").exists()
    assert "hooks: pre-push, post-commit installed" in cli(a, "init", expect=0, via=Via.GIT).out


# ---- pre-push ----------------------------------------------------------------------
def test_pre_push_refuses_a_tampered_ledger_with_the_entry_named(pair):
    remote, a = pair
    install(a)
    e = entry(a, "Database: PostgreSQL")
    git(a, "push", "--quiet", "origin", "refs/lifeline/main")
    tamper(a, e.id)
    proc = git(a, "push", "origin", "refs/lifeline/main", check=False)
    err = proc.err
    assert proc.code != 0
    assert "push refused" in err and e.id[:8] in err and "git lifeline verify" in err
    assert ref(remote, "refs/lifeline/main") != ref(a, "refs/lifeline/main")


def test_pre_push_refuses_deleting_or_rewinding_a_line(pair):
    remote, a = pair
    install(a)
    first = entry(a, "One")
    entry(a, "Two", t=at(1))
    git(a, "push", "--quiet", "origin", "refs/lifeline/main")
    proc = git(a, "push", "origin", ":refs/lifeline/main", check=False)
    assert proc.code != 0 and "append-only" in proc.err
    first_commit = git(a, "rev-parse", "refs/lifeline/main~1")
    proc = git(a, "push", "--force", "origin", f"{first_commit}:refs/lifeline/main", check=False)
    assert proc.code != 0 and "not a fast-forward" in proc.err
    assert first.id in entry_blobs(remote)
    assert ref(remote, "refs/lifeline/main") == ref(a, "refs/lifeline/main")


def test_pre_push_reminds_when_code_goes_out_but_ledger_entries_do_not(pair):
    remote, a = pair
    install(a, "pre-push")
    entry(a, "Not pushed yet")
    commit(a, "code")
    proc = git(a, "push", "origin", "main")
    assert "line main has 1 entry not pushed to origin; run: git lifeline push origin" in proc.err
    cli(a, "push", expect=0, via=Via.GIT)  # our own push passes its own pre-push check
    commit(a, "more code")
    proc = git(a, "push", "origin", "main")
    assert "not pushed" not in proc.err


def test_pre_push_under_pre_commit_framework_checks_lines_without_stdin(pair):
    remote, a = pair
    e = entry(a, "Checked without a ref list")
    tamper(a, e.id)
    env = dict(os.environ, PRE_COMMIT_REMOTE_NAME="origin")
    proc = cli(a, "hook", "pre-push", env=env, input=b"", expect=1, via=Via.GIT)
    assert e.id[:8] in proc.err
    assert "unknown hook" in cli(a, "hooks", "install", "pre-commitx", expect=2, via=Via.GIT).err
    # a healthy line and a code push: the framework run reminds about unpushed entries
    git(a, "update-ref", "refs/lifeline/main", "refs/lifeline/main~1")
    env["PRE_COMMIT_REMOTE_BRANCH"] = "refs/heads/main"
    proc = cli(a, "hook", "pre-push", env=env, input=b"", expect=0, via=Via.GIT)
    assert "run: git lifeline push origin" in proc.err


# ---- post-commit -------------------------------------------------------------------
def test_post_commit_reminds_after_threshold_with_a_ready_command(pair):
    remote, a = pair
    install(a, "post-commit")
    entry(a, "Baseline")
    git(a, "config", "lifeline.remindAfter", "2")
    assert "ledger" not in commit(a, "first change", date=at(10, git_format=True)).err
    err = commit(a, "Switch cache to LRU", date=at(20, git_format=True)).err
    assert "2 commits since the last ledger entry" in err
    assert "git lifeline log --kind decision --summary 'Switch cache to LRU'" in err
    assert len(err.strip().splitlines()) == 1
    # a new entry resets the count
    entry(a, "Why LRU", t=at(30))
    assert "ledger" not in commit(a, "third", date=at(40, git_format=True)).err


def test_post_commit_is_quiet_when_disabled_and_never_blocks(pair):
    remote, a = pair
    install(a, "post-commit")
    git(a, "config", "lifeline.remindAfter", "0")
    assert commit(a, "quiet please").err == ""
    git(a, "config", "lifeline.remindAfter", "lots")  # a bad setting must not stop a commit
    before = ref(a, "HEAD")
    proc = commit(a, "still commits")
    assert proc.code == 0 and ref(a, "HEAD") != before
    git(a, "config", "--unset", "lifeline.remindAfter")
    git(a, "config", "lifeline.remind", "false")
    assert commit(a, "quiet again").err == ""


def test_post_commit_counts_a_lifeline_trailer_as_recorded_why(pair):
    remote, a = pair
    install(a, "post-commit")
    e = entry(a, "Linked")
    err = commit(a, "linked work", f"Lifeline: {e.id}", date=at(10, git_format=True)).err
    assert "ledger" not in err


# ---- commit-msg and why ------------------------------------------------------------
def test_commit_msg_expands_prefix_and_refuses_unknown_entry(pair):
    remote, a = pair
    install(a, "commit-msg")
    e = entry(a, "Use SQLite FTS5 for recall")
    commit(a, "add recall", f"Lifeline: {e.id[:8]}")
    body = git(a, "log", "-1", "--format=%B").out
    assert f"Lifeline: {e.id}" in body
    before = ref(a, "HEAD")
    proc = commit(a, "bogus link", "Lifeline: deadbeef00", check=False)
    assert proc.code != 0 and "names no entry" in proc.err
    assert ref(a, "HEAD") == before


def test_why_lists_entries_linked_to_commits_touching_a_path_newest_first(pair):
    remote, a = pair
    old = entry(a, "Parser: hand-written", t=at(-7200))
    new = entry(a, "Parser: handle CRLF", t=at(-3600))
    other = entry(a, "Docs tone", t=at(-1800))
    commit(a, "parser v1", f"Lifeline: {old.id}", path="src/parser.py", date=at(0, git_format=True))
    commit(a, "docs", f"Lifeline: {other.id}", path="docs/x.md", date=at(600, git_format=True))
    commit(a, "parser crlf", f"Lifeline: {new.id[:10]}", path="src/parser.py", date=at(1200, git_format=True))
    commit(a, "parser tidy", path="src/parser.py", date=at(1800, git_format=True))
    out = cli(a, "why", "src/parser.py", expect=0, via=Via.GIT).out.splitlines()
    assert [line.split()[0] for line in out] == [new.short, old.short]
    assert "parser crlf" in out[0]
    sha = git(a, "rev-parse", "HEAD~2")
    assert other.short in cli(a, "why", sha, expect=0, via=Via.GIT).out
    assert "neither a path" in cli(a, "why", "no/such/thing", expect=2, via=Via.GIT).err


# ---- pre-receive (server side) -----------------------------------------------------
def test_pre_receive_rejects_tampered_rewound_deleted_and_misnamed_ledger_updates(gitenv):
    server = init_repo(gitenv / "server.git", "--bare")
    out = cli(server, "hooks", "install", expect=0, via=Via.GIT).out
    assert "installed pre-receive" in out
    c = make_clone(str(server), gitenv / "c", code=True)
    git(c, "push", "--quiet", "origin", "main")  # code passes through untouched
    e1 = entry(c, "Accepted")
    git(c, "push", "--quiet", "origin", "refs/lifeline/main")
    assert ref(server, "refs/lifeline/main") == ref(c, "refs/lifeline/main")
    good = ref(server, "refs/lifeline/main")

    tamper(c, e1.id)  # a fast-forward that rewrites an entry
    proc = git(c, "push", "--no-verify", "origin", "refs/lifeline/main", check=False)
    err = proc.err
    assert proc.code != 0 and "ledger update refused" in err and e1.id[:8] in err
    assert ref(server, "refs/lifeline/main") == good

    git(c, "update-ref", "refs/lifeline/main", good)
    entry(c, "Second", t=at(5))
    git(c, "push", "--quiet", "origin", "refs/lifeline/main")
    newer = ref(server, "refs/lifeline/main")
    proc = git(c, "push", "--no-verify", "--force", "origin", f"{good}:refs/lifeline/main", check=False)
    assert proc.code != 0 and "not a fast-forward" in proc.err
    assert ref(server, "refs/lifeline/main") == newer

    proc = git(c, "push", "--no-verify", "origin", ":refs/lifeline/main", check=False)
    assert proc.code != 0 and "deleting a ledger line" in proc.err
    proc = git(c, "push", "--no-verify", "origin", "refs/lifeline/main:refs/lifeline/a/b", check=False)
    assert proc.code != 0 and "not a valid line name" in proc.err
    assert ref(server, "refs/lifeline/main") == newer and ref(server, "refs/lifeline/a/b") is None
    # a new, valid line is welcome
    open_ledger(c, "ops").log(Draft(kind="note", summary="Ops", body="runbook", ts=T))
    git(c, "push", "--quiet", "--no-verify", "origin", "refs/lifeline/ops")
    assert ref(server, "refs/lifeline/ops") == ref(c, "refs/lifeline/ops")
