"""Findings of a security review of the recent changes (diff-tree verification, the
post-commit hook's shell silences, LIFELINE.md's writer, recall, sync).

Each test is named after the failure it prevents, with real repositories and real git;
each failed before its fix (docs/RELIABILITY.md counts them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest
from helpers import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    build_tree,
    cli,
    client,
    git,
    init_repo,
    make_entry,
    path_of,
    subprocess_env,
)

from git_lifeline.app.hook_files import install
from git_lifeline.git.repo import open_repo
from git_lifeline.git.store import LineStore

SIG = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)


# ---- helpers ----------------------------------------------------------------------------
def append(repo: Path, line: str, *entries) -> str:
    result = LineStore(open_repo(str(repo)), line).append(list(entries), lambda new: "test: stored as is\n")
    assert result.commit
    return result.commit


def bare(tmp_path: Path, name: str, hook: bool) -> Path:
    path = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", str(path))
    if hook:
        install(open_repo(str(path)), ["pre-receive"])
    return path


def push(repo: Path, *specs: str) -> tuple:
    proc = subprocess.run(
        ["git", "push", "--no-verify", "origin", *specs],
        cwd=str(repo),
        capture_output=True,
        env=subprocess_env(),
        timeout=120,
    )
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def ref(repo: Path, name: str):
    return git(repo, "rev-parse", "-q", "--verify", name, check=False) or None


def blob_bytes(entry, **changes) -> bytes:
    """The entry's blob with some fields changed (a copy of the same id, or a tampered one)."""
    doc = json.loads(entry.to_json())
    doc.update(changes)
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()


def raw_tree(repo: pygit2.Repository, items: list) -> pygit2.Oid:
    """A tree object written byte for byte: [(mode, name bytes, oid)] in the order given
    (what a pusher can send: git receive-pack does not fsck by default)."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(str(oid)) for mode, name, oid in items)
    return repo.odb.write(pygit2.GIT_OBJECT_TREE, data)


# ---- 1. verification judged the objects git's replace refs substitute ---------------------
def tampered_on_top(repo: Path) -> tuple:
    """(good entry, tampered commit, the same commit with an honest tree) on refs/lifeline/main:
    the tampered commit's new blob does not hash to its id."""
    good = make_entry(1, summary="Good")
    append(repo, "main", good)
    r = pygit2.Repository(str(repo))
    tip = r.references["refs/lifeline/main"].target
    second = make_entry(2, summary="Second")
    bad_tree = build_tree(
        r, {path_of(good.id): good.to_json(), path_of(second.id): blob_bytes(second, summary="TAMPERED")}
    )
    honest_tree = build_tree(r, {path_of(good.id): good.to_json(), path_of(second.id): second.to_json()})
    bad = r.create_commit(None, SIG, SIG, "x\n", bad_tree, [tip])
    honest = r.create_commit(None, SIG, SIG, "x\n", honest_tree, [tip])
    return good, str(bad), str(honest), str(bad_tree), str(honest_tree)


def test_verify_judges_the_objects_a_line_holds_not_their_replacements(tmp_path):
    repo = init_repo(tmp_path / "a")
    _good, bad, _honest, bad_tree, honest_tree = tampered_on_top(repo)
    git(repo, "update-ref", "refs/lifeline/main", bad)
    git(repo, "replace", bad_tree, honest_tree)  # `git diff-tree` reads the honest tree in its place
    res = cli(repo, "verify")
    assert res.code == 1 and "bad-entry" in res.out, res


def test_a_replace_ref_pushed_to_the_server_cannot_carry_a_tampered_entry_past_pre_receive(tmp_path, git_dispatch):
    server = bare(tmp_path, "server.git", hook=True)
    a = client(tmp_path, "a", server)
    _good, bad, honest, _bt, _ht = tampered_on_top(a)
    code, err = push(a, "refs/lifeline/main")
    assert code == 0, err
    git(a, "update-ref", "refs/lifeline/main", bad)
    # refs/replace/* is not ours to guard, so the server takes it; the hook's git then read
    # the honest commit wherever the tampered one was named
    code, err = push(a, f"{honest}:refs/replace/{bad}")
    assert code == 0, err
    code, err = push(a, "refs/lifeline/main")
    assert code != 0 and "bad-entry" in err, err
    assert ref(server, "refs/lifeline/main") != bad


# ---- 2. a .gitmodules rule hid a gitlink from the shape check --------------------------------
def test_a_gitmodules_ignore_rule_cannot_hide_a_gitlink_in_a_line_from_verify(tmp_path):
    repo = init_repo(tmp_path / "a")
    good = make_entry(1, summary="Good")
    append(repo, "main", good)
    r = pygit2.Repository(str(repo))
    tip = r[r.references["refs/lifeline/main"].target]
    fake = make_entry(2, summary="Not an entry")
    gitlink = pygit2.Oid(hex="12345678" * 5)
    tree = build_tree(r, {path_of(good.id): good.to_json(), path_of(fake.id): (gitlink, pygit2.GIT_FILEMODE_COMMIT)})
    commit = r.create_commit(None, SIG, SIG, "x\n", tree, [tip.id])
    git(repo, "update-ref", "refs/lifeline/main", str(commit))
    assert cli(repo, "verify").code == 1
    # a .gitmodules checked out from a code branch says "ignore = all" for that path
    (repo / ".gitmodules").write_text(f'[submodule "x"]\n\tpath = {path_of(fake.id)}\n\turl = ./x\n\tignore = all\n')
    res = cli(repo, "verify")
    assert res.code == 1 and "foreign-file" in res.out, res


# ---- 3. two tree names for one entry path --------------------------------------------------
def two_copies(repo: Path, how: str):
    """A root commit on refs/lifeline/main whose tree holds two blobs of one entry at the same
    path as git prints it: a copy dated 2099 where readers find it, and an honest copy
    (under a duplicate name, or under one name holding slashes)."""
    r = pygit2.Repository(str(repo))
    e = make_entry(1, summary="Where work stopped")
    future = r.create_blob(blob_bytes(e, ts="2099-01-01T00:00:00.000000Z"))
    honest = r.create_blob(e.to_json())
    a, b, rest = e.id[:2], e.id[2:4], e.id[4:]
    if how == "duplicate-name":
        leaf = raw_tree(r, [("100644", rest.encode(), future), ("100644", rest.encode(), honest)])
        entries = raw_tree(r, [("40000", a.encode(), raw_tree(r, [("40000", b.encode(), leaf)]))])
    else:
        leaf = raw_tree(r, [("100644", rest.encode(), future)])
        entries = raw_tree(
            r,
            [
                ("40000", a.encode(), raw_tree(r, [("40000", b.encode(), leaf)])),
                ("100644", f"{a}/{b}/{rest}".encode(), honest),
            ],
        )
    root = raw_tree(r, [("40000", b"entries", entries)])
    commit = r.create_commit(None, SIG, SIG, "x\n", root, [])
    git(repo, "update-ref", "refs/lifeline/main", str(commit))
    return e, str(commit)


@pytest.mark.parametrize("how", ["duplicate-name", "name-with-slashes"])
def test_a_second_tree_name_for_one_entry_cannot_carry_an_unchecked_future_date(tmp_path, how):
    repo = init_repo(tmp_path / "a")
    two_copies(repo, how)
    res = cli(repo, "verify")
    assert res.code == 1, res


def test_pre_receive_refuses_a_tree_with_two_names_for_one_entry(tmp_path, git_dispatch):
    server = bare(tmp_path, "server.git", hook=True)
    a = client(tmp_path, "a", server)
    _e, commit = two_copies(a, "name-with-slashes")
    code, err = push(a, "refs/lifeline/main")
    assert code != 0, err
    assert ref(server, "refs/lifeline/main") is None


# ---- 4. a commit git cannot parse on one line ----------------------------------------------
def unparsable_commit_on_main(a: Path) -> str:
    """Put on refs/lifeline/main a commit whose committer time overflows (libgit2: 'invalid
    Unix timestamp'); its tree and entries are honest."""
    r = pygit2.Repository(str(a))
    tip = r.references["refs/lifeline/main"].target
    e1 = next(iter(LineStore(open_repo(str(a)), "main").load().entries.values()))
    e2 = make_entry(2, summary="Second", parents=[e1.id])
    tree = build_tree(r, {path_of(e1.id): e1.to_json(), path_of(e2.id): e2.to_json()})
    data = (
        f"tree {tree}\nparent {tip}\nauthor X <x@x> 1714560000 +0000\n"
        f"committer X <x@x> 99999999999999999999 +0000\n\nx\n"
    ).encode()
    commit = r.odb.write(pygit2.GIT_OBJECT_COMMIT, data)
    git(a, "update-ref", "refs/lifeline/main", str(commit))
    return str(commit)


def test_a_commit_git_cannot_parse_on_one_line_leaves_the_other_lines_pullable(tmp_path):
    remote = bare(tmp_path, "remote.git", hook=False)
    a = client(tmp_path, "a", remote)
    append(a, "main", make_entry(1, summary="Main"))
    append(a, "other", make_entry(5, summary="Other"))
    git(a, "push", "-q", "origin", "refs/lifeline/main", "refs/lifeline/other")
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "origin").code == 0
    unparsable_commit_on_main(a)
    append(a, "other", make_entry(6, summary="Other, later"))
    git(a, "push", "-q", "origin", "refs/lifeline/main", "refs/lifeline/other")
    res = cli(b, "pull", "origin")
    assert res.code == 1 and "--line" in res.err, res
    assert ref(b, "refs/lifeline/other") == ref(a, "refs/lifeline/other"), res


def test_verify_reports_a_commit_git_cannot_parse_and_still_checks_the_other_lines(tmp_path):
    a = init_repo(tmp_path / "a")
    append(a, "main", make_entry(1, summary="Main"))
    append(a, "other", make_entry(5, summary="Other"))
    unparsable_commit_on_main(a)
    res = cli(a, "verify")
    assert res.code == 1 and "line other" in res.out, res


# ---- 5. the post-commit hook's shell silences ----------------------------------------------
def line_tip_dated(repo: Path, when: str) -> None:
    """One entry on refs/lifeline/main in a commit whose committer time is `when` (no gate
    looks at a ledger commit's own dates)."""
    r = pygit2.Repository(str(repo))
    e = make_entry(1, summary="An honest entry")
    tree = build_tree(r, {path_of(e.id): e.to_json()})
    data = (f"tree {tree}\nauthor X <x@x> 1714560000 +0000\ncommitter X <x@x> {when} +0000\n\nx\n").encode()
    git(repo, "update-ref", "refs/lifeline/main", str(r.odb.write(pygit2.GIT_OBJECT_COMMIT, data)))


def commit_with_hooks(repo: Path) -> subprocess.CompletedProcess:
    (repo / "work.txt").write_text(str(time.time()))
    git(repo, "add", "work.txt")
    return subprocess.run(
        ["git", "commit", "-q", "-m", "work"], cwd=str(repo), capture_output=True, env=subprocess_env(), timeout=120
    )


def test_post_commit_stays_quiet_when_a_pulled_line_has_a_negative_commit_date(tmp_path, git_dispatch):
    remote = bare(tmp_path, "remote.git", hook=False)
    a = client(tmp_path, "a", remote)
    line_tip_dated(a, "-5")
    git(a, "push", "-q", "origin", "refs/lifeline/main")
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "origin").code == 0
    assert cli(b, "hooks", "install").code == 0
    proc = commit_with_hooks(b)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "Illegal number" not in err and "integer expression" not in err, err


def test_post_commit_believes_no_append_dated_beyond_the_configured_clock_skew(tmp_path, git_dispatch):
    repo = init_repo(tmp_path / "a")
    git(repo, "config", "lifeline.maxClockSkew", "10m")
    line_tip_dated(repo, str(int(time.time()) + 12 * 3600))  # 12 h ahead: beyond 10 min, within a day
    assert cli(repo, "hooks", "install").code == 0
    proc = commit_with_hooks(repo)
    assert "since the last ledger entry" in proc.stderr.decode("utf-8", "replace"), proc


# ---- 6. LIFELINE.md written through a link into the git dir -----------------------------------
def test_the_projection_is_never_written_into_the_git_dir_through_a_link(tmp_path):
    repo = init_repo(tmp_path / "a")
    assert cli(repo, "init", "--no-agents").code == 0
    assert cli(repo, "hooks", "install").code == 0
    hook = repo / ".git" / "hooks" / "post-commit"
    before = hook.read_bytes()
    # a teammate committed LIFELINE.md as a link to .git/hooks/post-commit (inside the
    # work tree's directory, so "a link inside the work tree is followed")
    (repo / "LIFELINE.md").unlink(missing_ok=True)
    os.symlink(".git/hooks/post-commit", repo / "LIFELINE.md")
    git(repo, "add", "-f", "LIFELINE.md")
    git(repo, "commit", "-q", "-m", "Lifeline: docs link")
    res = cli(repo, "render")
    assert res.code != 0, res
    # the way out the tool itself suggests for a tracked file
    git(repo, "rm", "-q", "--cached", "LIFELINE.md")
    res = cli(repo, "log", "--kind", "note", "--summary", "a note", "--body", "why")
    assert res.code == 0, res
    assert hook.read_bytes() == before
    config = (repo / ".git" / "config").read_bytes()
    os.unlink(repo / "LIFELINE.md")
    os.symlink(".git/config", repo / "LIFELINE.md")
    assert cli(repo, "log", "--kind", "note", "--summary", "another", "--body", "why").code == 0
    assert (repo / ".git" / "config").read_bytes() == config


# ---- 7. recall's cost follows the question's length ------------------------------------------
def test_a_megabyte_question_is_refused_clearly_instead_of_holding_recall_for_minutes(tmp_path):
    """No bound on the question made concepts() cost ~0.5 ms a word and each concept one
    more FTS query: a 1 MB question from an agent held the MCP tool for minutes. It is now
    refused at once with a message saying the limit; a paragraph is still answered."""
    repo = init_repo(tmp_path / "a")
    append(repo, "main", make_entry(1, summary="Database: PostgreSQL"))
    script = (
        "import sys; from git_lifeline.app.workspace import Workspace; from git_lifeline.errors import InputError\n"
        "led = Workspace.open(sys.argv[1]).ledger()\n"
        "q = ' '.join(f'w{i}q' for i in range(150_000)) + ' postgres'\n"
        "try:\n    led.recall(q)\nexcept InputError as exc:\n    print('refused:', exc)\n"
        "print(len(led.recall('which database, PostgreSQL or not? ' * 100)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(repo)], capture_output=True, env=subprocess_env(), timeout=120
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "refused: the question is" in out and "at most 4000" in out, out
    assert out.strip().splitlines()[-1] == "1", out
