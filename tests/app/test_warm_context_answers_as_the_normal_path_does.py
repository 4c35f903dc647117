"""The warm `context` (cli/fast.py -> app/warm_context.py, no click, no pygit2) prints byte
for byte what the click command prints, with the same exit code, in every situation: it
answers only when the cache is current for exactly the line's head, and otherwise the
normal path runs. Each case runs the installed entry point (`git_lifeline.cli.run`, what
`git-lifeline` and `python -m git_lifeline` start) next to the click command alone
(`git_lifeline.cli.main.run`) and records which modules the entry point loaded, so a case
also says whether the warm path answered.

Cases that change the repository's state on their first run (a stale or damaged cache is
repaired by the normal path) run on twins: two repositories built the same way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kit.entries import make_entry
from kit.repos import commit_file, head, init_repo, open_ledger
from kit.run import ROOT, git, subprocess_env
from kit.warm import build, cache_file, click_only, code_path_ledger, edit_cache_keeping_its_stamp, entry_point

from git_lifeline.git import reffiles


@pytest.fixture
def warm(tmp_path) -> Path:
    return build(tmp_path / "repo")


@pytest.fixture
def twins(tmp_path) -> tuple:
    return build(tmp_path / "a" / "repo"), build(tmp_path / "b" / "repo")


# ---- the goal's guard: no click, no pygit2 --------------------------------------------------
def test_a_warm_context_imports_neither_pygit2_nor_click(warm):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "git_lifeline", "context"],
        cwd=str(warm),
        capture_output=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert proc.returncode == 0 and b"Decision number 5" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
    assert "git_lifeline.app.warm_context" in imported
    assert not {m for m in imported if m.split(".")[0] in ("pygit2", "click")}


def test_a_fresh_cache_is_answered_warm_with_the_normal_paths_bytes(warm):
    fast, slow = entry_point(warm, "context"), click_only(warm, "context")
    assert fast.warm and fast.same_as(slow) and fast.code == 0 and b"Which queue to use" in fast.out


# ---- whatever is not "fresh for exactly this head" goes the normal way ----------------------
def test_a_head_that_moved_after_the_cache_was_built_shows_the_new_entry(twins):
    for repo in twins:  # written by the library: the cache and its tip still at the old head
        open_ledger(repo).store.append(
            [make_entry(7, summary="A decision made after the cache")], lambda new: "lifeline: add 1 entry"
        )
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"A decision made after the cache" in fast.out
    assert entry_point(twins[0], "context").warm  # the normal path left the tip for the new head


def test_a_deleted_cache_is_rebuilt_by_the_normal_path(twins):
    for repo in twins:
        shutil.rmtree(repo / ".git" / "lifeline")
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and fast.code == 0


@pytest.mark.parametrize("damage", ["bytes", "stamp", "tip-elsewhere", "tip-garbage", "tip-symlink"])
def test_a_damaged_cache_or_tip_is_never_served_warm(twins, damage):
    for repo in twins:
        path = cache_file(repo)
        tip = Path(str(path) + ".tip")
        if damage == "bytes":
            with open(path, "r+b") as f:
                f.seek(200)
                f.write(b"\xff" * 64)
        elif damage == "stamp":
            Path(str(path) + ".stamp").write_text("{}")
        elif damage == "tip-elsewhere":  # the tip names another tree for this very head
            commit, tree = tip.read_text().split()
            tip.write_text(f"{commit} {'0' * 40}\n")
        elif damage == "tip-garbage":
            tip.write_text("not a tip\n")
        else:
            other = repo.parent / "tip"
            shutil.copy(tip, other)
            tip.unlink()
            tip.symlink_to(other)
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow)


def test_a_cache_built_by_another_version_is_not_served_warm(twins):
    # as a release with another schema would leave it, stamp and all
    edit_cache_keeping_its_stamp(twins, "UPDATE meta SET value='0' WHERE key='version'")
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow)


def test_a_damaged_row_met_while_rendering_sends_it_the_normal_way(twins):
    # a row edited in place, the stamp forged to match: only the served check sees it
    edit_cache_keeping_its_stamp(
        twins, "UPDATE entries SET json=replace(json, 'Decision number 5', 'Decision number X')"
    )
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"did not match the ledger" in fast.err


# ---- where the ref and the repository are ---------------------------------------------------
def test_packed_refs_are_read_warm(warm):
    git(warm, "pack-refs", "--all")
    assert not (warm / ".git" / "refs" / "lifeline" / "main").exists()
    fast, slow = entry_point(warm, "context"), click_only(warm, "context")
    assert fast.warm and fast.same_as(slow)


def test_a_linked_worktree_is_answered_warm(warm):
    git(warm, "commit", "-q", "--allow-empty", "-m", "code")
    git(warm, "worktree", "add", "-q", str(warm.parent / "wt"))
    wt = warm.parent / "wt"
    (wt / "sub").mkdir()
    fast, slow = entry_point(wt / "sub", "context"), click_only(wt / "sub", "context")
    assert fast.warm and fast.same_as(slow) and b"Which queue to use" in fast.out


def test_git_dir_set_is_answered_warm_from_anywhere(warm, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_DIR": str(warm / ".git")}
    fast, slow = entry_point(elsewhere, "context", env=env), click_only(elsewhere, "context", env=env)
    assert fast.warm and fast.same_as(slow)


@pytest.mark.parametrize("var", ["GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE"])
def test_git_variables_it_cannot_honour_send_it_the_normal_way(warm, var):
    env = {var: str(warm / ".git") if var != "GIT_NAMESPACE" else "ns"}
    fast, slow = entry_point(warm, "context", env=env), click_only(warm, "context", env=env)
    assert not fast.warm and fast.same_as(slow)


def test_a_ref_file_that_is_a_symlink_is_not_followed(twins):
    for repo in twins:
        ref = repo / ".git" / "refs" / "lifeline" / "main"
        target = repo.parent / "ref-target"
        target.write_bytes(ref.read_bytes())
        ref.unlink()
        ref.symlink_to(target)
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow)


def test_a_repository_with_an_extension_goes_the_normal_way(warm):
    git(warm, "config", "extensions.somethingNew", "true")
    git(warm, "config", "core.repositoryformatversion", "1")
    fast, slow = entry_point(warm, "context"), click_only(warm, "context")
    assert not fast.warm and fast.same_as(slow)


def test_a_decision_that_names_code_paths_is_answered_warm_with_its_staleness(tmp_path):
    repo = code_path_ledger(tmp_path / "repo")
    fast, slow = entry_point(repo, "context"), click_only(repo, "context")
    assert fast.warm and fast.same_as(slow) and b"code changed since" in fast.out


def test_a_code_commit_after_the_kept_staleness_is_shown_by_the_normal_path(tmp_path):
    twins = [code_path_ledger(tmp_path / name / "repo") for name in ("a", "b")]
    for repo in twins:
        commit_file(repo, "src/more.py", "x = 1\n" * 40)
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow) and b"41 lines changed" in fast.out
    assert entry_point(twins[0], "context").warm  # the normal path kept it for the new HEAD


@pytest.mark.parametrize("damage", ["garbage", "another-head", "shallow"])
def test_staleness_kept_for_anything_else_is_never_served_warm(tmp_path, damage):
    twins = [code_path_ledger(tmp_path / name / "repo") for name in ("a", "b")]
    for repo in twins:
        kept = repo / ".git" / "lifeline" / "main.stale"
        if damage == "garbage":
            kept.write_text("{not json")
        elif damage == "another-head":
            kept.write_text(kept.read_text().replace(head(repo), "0" * 40))
        else:  # a shallow clone's cut: the same HEAD answers differently
            (repo / ".git" / "shallow").write_text(git(repo, "rev-parse", "HEAD~1").strip() + "\n")
    fast, slow = entry_point(twins[0], "context"), click_only(twins[1], "context")
    assert not fast.warm and fast.same_as(slow)


def test_a_decision_naming_code_paths_before_the_first_code_commit_is_answered_warm(tmp_path):
    # a ledger kept before the project's first commit (HEAD unborn): every warm `context`
    # of a realistic ledger went the normal way (275 ms at 100k entries, 11 ms warm)
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1, body="paths: src/**\n\nBecause.")])
    assert click_only(repo, "context").code == 0  # the normal path keeps its answer
    fast, slow = entry_point(repo, "context"), click_only(repo, "context")
    assert fast.warm and fast.same_as(slow)
    commit_file(repo)  # the first code commit is another view: the normal path answers
    assert not entry_point(repo, "context").warm
    assert entry_point(repo, "context").warm


def test_a_head_file_with_trailing_whitespace_never_hides_the_code_changed_since(tmp_path):
    # staleness kept while the repository was new ("unborn"), then code commits on main
    # and a HEAD file git reads past its trailing blank (`main \n` is main): read as still
    # unborn, the kept answer hid "code changed since" from both paths
    repo = init_repo(tmp_path / "repo")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    open_ledger(repo).append([make_entry(1, body="paths: src/**\n\nBecause.")])
    assert click_only(repo, "context").code == 0  # kept for the unborn view
    commit_file(repo, "src/app.py", "x = 1\n" * 30)
    (repo / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main \n")
    fast, slow = entry_point(repo, "context"), click_only(repo, "context")
    assert fast.same_as(slow) and b"code changed since" in fast.out


def test_a_missing_line_goes_the_normal_way(tmp_path):
    repo = init_repo(tmp_path / "repo")
    fast, slow = entry_point(repo, "context"), click_only(repo, "context")
    assert not fast.warm and fast.same_as(slow)


# ---- every argument shape: the same answer, warm or not ---------------------------------------
SHAPES = [
    (("context",), True),
    (("context", "--budget", "600"), True),
    (("context", "--budget=600"), True),
    (("context", "--budget", "0600"), True),
    (("context", "--budget-tokens", "150"), True),
    (("context", "--budget-tokens=150"), True),
    (("context", "--format", "anthropic"), True),
    (("context", "--format=openai"), True),
    (("context", "--format", "gemini", "--budget", "900"), True),
    (("--line", "main", "context"), True),
    (("--line=main", "context"), True),
    (("context", "--line", "main"), True),
    (("context", "--line=main", "--format", "generic"), True),
    (("context", "--budget", "0"), False),  # nothing fits: the normal path says so
    (("context", "--budget", "5"), False),
    (("context", "--budget", "-1"), False),
    (("context", "--budget", "+5"), False),
    (("context", "--budget", "abc"), False),
    (("context", "--budget", ""), False),
    (("context", "--budget"), False),
    (("context", "--budget", "5", "--budget", "600"), False),
    (("context", "--budget", "600", "--budget-tokens", "100"), False),
    (("context", "--format", "xml"), False),
    (("context", "--format", "Generic"), False),
    (("context", "--line", "nope"), False),
    (("context", "--line", "bad name"), False),
    (("context", "--line", ""), False),
    (("--line", "main", "context", "--line", "main"), False),
    (("context", "--query", "queue"), False),
    (("context", "--thread", "main"), False),
    (("context", "--as-of", "2030-01-01"), False),
    (("context", "extra"), False),
    (("context", "--"), False),
    (("context", "--help"), False),
    (("context", "-h"), False),
    (("--no-pager", "context"), False),
    (("-q", "context"), False),
    (("--color", "context"), False),
    (("contex",), False),
    (("log",), False),
    ((), False),
]


@pytest.mark.parametrize("args,answered", SHAPES, ids=[" ".join(a) or "(none)" for a, _ in SHAPES])
def test_every_argument_shape_gives_the_normal_paths_answer(warm, args, answered):
    fast, slow = entry_point(warm, *args), click_only(warm, *args)
    assert fast.same_as(slow)
    assert fast.warm == answered


def test_every_option_of_context_and_of_the_group_is_answered_alike(warm):
    """Options added later are covered too: each is tried with a value of its type."""
    from git_lifeline.cli.common import all_commands
    from git_lifeline.cli.main import main

    group = [p for p in main.params if p.name not in ("version",)]
    command = all_commands(main)["context"].params
    tried = []
    for where, params in (("before", group), ("after", command)):
        for p in params:
            for opt in p.opts:
                if not opt.startswith("--"):
                    continue
                if getattr(p, "is_flag", False):
                    value: tuple = ()
                elif p.type.name == "integer":
                    value = ("700",)
                elif p.type.name == "choice":
                    value = (p.type.choices[-1],)
                else:  # --line, --query, --thread, --as-of: a word each takes
                    value = ("main",)
                args = (opt, *value, "context") if where == "before" else ("context", opt, *value)
                fast, slow = entry_point(warm, *args), click_only(warm, *args)
                assert fast.same_as(slow), args
                tried.append((args, fast.warm))
    assert len(tried) >= 10
    assert {a for a, w in tried if w} <= {
        ("--line", "main", "context"),
        ("context", "--budget", "700"),
        ("context", "--budget-tokens", "700"),
        ("context", "--format", "gemini"),
        ("context", "--line", "main"),
    }


# ---- the reader of the files, against git itself -------------------------------------------
def test_the_ref_reader_agrees_with_git_or_says_nothing(warm):
    common = str(warm / ".git")
    want = git(warm, "rev-parse", "refs/lifeline/main")
    assert reffiles.read_ref(common, "refs/lifeline/main") == want
    git(warm, "pack-refs", "--all")
    assert reffiles.read_ref(common, "refs/lifeline/main") == want
    assert reffiles.read_ref(common, "refs/lifeline/other") is None
    loose = warm / ".git" / "refs" / "lifeline" / "main"
    loose.parent.mkdir(parents=True, exist_ok=True)
    for content in (b"ref: refs/heads/main\n", want.encode() + b"\n\n", want.upper().encode() + b"\n", b"garbage"):
        loose.write_bytes(content)
        assert reffiles.read_ref(common, "refs/lifeline/main") is None, content
    loose.unlink()
    os.mkfifo(loose)
    assert reffiles.read_ref(common, "refs/lifeline/main") is None  # and it does not wait on the FIFO
    loose.unlink()
    for bad in ("refs/lifeline/../../HEAD", "refs//main", "main"):
        assert reffiles.read_ref(common, bad) is None


def test_the_locator_finds_what_open_repo_opens_or_says_nothing(warm, tmp_path):
    from git_lifeline.git.repo import open_repo

    git(warm, "commit", "-q", "--allow-empty", "-m", "code")
    git(warm, "worktree", "add", "-q", str(tmp_path / "wt"))
    (warm / "deep" / "er").mkdir(parents=True)
    for start in (warm, warm / "deep" / "er", tmp_path / "wt"):
        gr = open_repo(str(start))
        assert reffiles.locate(str(start), {}) == (str(gr.git_dir), str(gr.common_dir), str(gr.workdir))
    bare = init_repo(tmp_path / "bare.git", "--bare")
    assert reffiles.locate(str(bare), {}) is None
    assert reffiles.locate(str(warm / ".git"), {}) is None  # inside the git dir: libgit2's call
    assert reffiles.locate(str(tmp_path / "nowhere-at-all"), {}) is None
    assert reffiles.locate(str(ROOT), {"GIT_DIR": str(bare)}) is None  # a git dir not named .git


# ---- git's config, listed without the subprocess module ------------------------------------
def test_a_config_larger_than_a_pipe_is_listed_whole_and_a_warning_means_not_sure(tmp_path):
    from git_lifeline.git import command

    repo = init_repo(tmp_path / "repo")
    big = "x" * 300_000  # several pipe buffers
    with open(repo / ".git" / "config", "a", encoding="utf-8") as f:
        f.write(f"[lifeline]\n\tbig = {big}\n\tother = 1\n")
    values = command.read_config(str(repo / ".git"), str(repo))
    assert values["lifeline.big"] == [big] and values["lifeline.other"] == ["1"]
    assert command.read_config_strictly(str(repo / ".git"), str(repo)) == values
    git(repo, "config", "extensions.somethingNew", "true")
    git(repo, "config", "core.repositoryformatversion", "1")  # git now warns and skips the repo's config
    assert "lifeline.big" not in command.read_config(str(repo / ".git"), str(repo))
    assert command.read_config_strictly(str(repo / ".git"), str(repo)) is None


def test_no_git_on_path_is_said_plainly(tmp_path, monkeypatch):
    from git_lifeline.errors import LifelineError
    from git_lifeline.git import command

    repo = init_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LifelineError, match="git executable was not found"):
        command.read_config(str(repo / ".git"), str(repo))


def test_a_directory_that_is_gone_is_not_called_a_missing_git(tmp_path):
    # subprocess raises the same FileNotFoundError for a missing cwd as for a missing program
    from git_lifeline.errors import LifelineError
    from git_lifeline.git import command

    with pytest.raises(LifelineError, match="the directory is gone"):
        command.run_git(["status"], cwd=str(tmp_path / "removed"))


def test_a_repository_that_ignores_case_goes_the_normal_way(warm):
    # Where the file system ignores case, --line Main reads main's ref file and cache: the
    # normal path refuses that name (Workspace.ledger), the warm one must not answer it.
    git(warm, "config", "core.ignorecase", "true")
    for args in (("context",), ("context", "--line", "Main")):
        fast, slow = entry_point(warm, *args), click_only(warm, *args)
        assert not fast.warm and fast.same_as(slow), args
