"""verify: every kind of tampering with real git objects is reported, with exit 1."""

from __future__ import annotations

import json

import pygit2
import pytest
from kit.entries import make_entry, path_of, ts_at
from kit.home import AUTHOR, AUTHOR_EMAIL, AUTHOR_NAME
from kit.repos import init_repo, open_ledger
from kit.run import cli, git
from kit.tamper import add_commit, build_tree, rewrite_line

from git_lifeline.core.entry import new_entry

FAKE_ID = "e" * 64


def edited_blob(repo, oid, **changes) -> bytes:
    """The blob's JSON with some fields changed and everything else (the id too) left."""
    doc = json.loads(pygit2.Repository(str(repo))[oid].data)
    doc.update(changes)
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


@pytest.fixture
def line(ledger, repo):
    """A clean line of five entries, one commit each; returns them oldest first."""
    entries = [make_entry(i, kind="decision" if i % 2 else "note") for i in range(5)]
    for e in entries:
        ledger.append([e])
    return entries


def assert_reported(repo, code: str, fragment: str = "") -> None:
    res = cli(repo, "verify")
    assert res.code == 1, res
    assert "FAILED: line main" in res.out, res
    assert f"  {code}: " in res.out, res
    assert fragment in res.out, res
    assert "Traceback" not in res.err, res


def test_a_clean_ledger_verifies_with_exit_0(line, repo):
    res = cli(repo, "verify")
    assert res.code == 0, res
    assert "ok: line main: 5 entries, 5 commits verified" in res.out


def test_an_edited_blob_in_a_rewritten_chain_is_reported(line, repo):
    victim = line[1]

    def edit(n, files):
        if path_of(victim.id) in files:
            files[path_of(victim.id)] = edited_blob(repo, files[path_of(victim.id)][0], summary="Tampered")
        return files

    rewrite_line(repo, edit)
    assert_reported(repo, "bad-entry", f"content does not match its id {victim.id[:8]}")


def test_a_blob_renamed_to_another_path_is_reported(line, repo):
    victim = line[2]

    def rename(n, files):
        if path_of(victim.id) in files:
            files[path_of(FAKE_ID)] = files.pop(path_of(victim.id))
        return files

    rewrite_line(repo, rename)
    assert_reported(repo, "bad-entry", "stored under another id's path")


def test_an_entry_dropped_in_a_later_commit_is_reported(line, repo):
    victim = line[0]
    add_commit(repo, lambda files: {p: v for p, v in files.items() if p != path_of(victim.id)})
    assert_reported(repo, "removed", f"entry {victim.id[:8]} was removed")


def test_an_entry_rewritten_in_place_by_a_later_commit_is_reported(line, repo):
    victim = line[3]

    def restamp(files):
        files[path_of(victim.id)] = edited_blob(repo, files[path_of(victim.id)][0], ts="2001-01-01T00:00:00.000000Z")
        return files

    add_commit(repo, restamp)
    assert_reported(repo, "rewritten", f"entry {victim.id[:8]} was rewritten in place")


def test_rewritten_history_with_valid_entries_is_caught_by_the_reflog(line, repo):
    # Replace an old entry by a different, self-consistent one and re-create every
    # descendant: each commit is internally valid, only the ref's history can tell.
    victim, forged = line[1], make_entry(1, kind="decision", summary="A different decision")

    def swap(n, files):
        if path_of(victim.id) in files:
            files.pop(path_of(victim.id))
            files[path_of(forged.id)] = forged.to_json()
        return files

    rewrite_line(repo, swap)
    assert_reported(repo, "rewound", "rewound or rewritten")


def test_a_rewound_ref_is_caught_by_the_reflog(line, repo):
    git(repo, "update-ref", "refs/lifeline/main", "refs/lifeline/main~2")
    assert_reported(repo, "rewound")


@pytest.mark.parametrize(
    "path", ["README.md", "entries/notes.txt", "entries/ab/cd/short", "entries/" + FAKE_ID[:2] + "/" + FAKE_ID[2:]]
)
def test_a_foreign_file_in_the_tree_is_reported(line, repo, path):
    add_commit(repo, lambda files: {**files, path: b"not an entry\n"})
    assert_reported(repo, "foreign-file", path.split("/")[-1][:8])


@pytest.mark.parametrize("path", ["entries/ab", "entries/ab/cd/" + "0" * 60, "modules"])
def test_a_submodule_link_in_the_tree_is_reported_not_crashed_on(line, repo, path):
    missing_commit = pygit2.Oid(hex="1" * 40)  # a gitlink names a commit this repo need not have
    add_commit(repo, lambda files: {**files, path: (missing_commit, pygit2.GIT_FILEMODE_COMMIT)})
    assert_reported(repo, "foreign-file", path.split("/")[-1][:8])


def test_an_executable_entry_blob_is_reported(line, repo):
    def chmod(files):
        oid, _ = files[path_of(line[0].id)]
        files[path_of(line[0].id)] = (oid, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)
        return files

    add_commit(repo, chmod)
    assert_reported(repo, "foreign-file", line[0].id[4:12])


def test_an_invalid_json_blob_is_reported(line, repo):
    add_commit(repo, lambda files: {**files, path_of(FAKE_ID): b'{"kind": "decision", '})
    assert_reported(repo, "bad-entry", "not valid JSON")


def test_an_invalid_kind_in_a_blob_is_reported(line, repo):
    def add(files):
        files[path_of(FAKE_ID)] = edited_blob(repo, files[path_of(line[0].id)][0], kind="opinion", id=FAKE_ID)
        return files

    add_commit(repo, add)
    assert_reported(repo, "bad-entry", "unknown kind 'opinion'")


def test_an_entry_whose_parent_no_line_holds_is_reported(line, repo):
    orphan = new_entry(kind="fix", author=AUTHOR, summary="Orphan", body="its parent is gone", parents=[FAKE_ID])
    add_commit(repo, lambda files: {**files, path_of(orphan.id): orphan.to_json()})
    assert_reported(repo, "missing-parent", f"names parent {FAKE_ID[:8]}")


def test_a_parent_in_a_sibling_line_is_an_external_anchor_not_a_problem(ledger, repo):
    other = open_ledger(repo, line="research")
    anchor = other.append([make_entry(0, summary="Research finding")]).added[0]
    ledger.append([make_entry(1, parents=[anchor.id])])
    res = cli(repo, "verify")
    assert res.code == 0 and "1 external anchor(s)" in res.out, res


def test_a_shallow_clone_is_refused(line, repo, tmp_path):
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone), check=False)
    if not (clone / ".git").exists():  # the source has no branch: make an empty clone the same way
        init_repo(clone)
        git(clone, "remote", "add", "origin", f"file://{repo}")
    git(clone, "fetch", "-q", "--depth", "1", "origin", "refs/lifeline/main:refs/lifeline/main")
    assert (clone / ".git" / "shallow").exists()
    res = cli(clone, "verify")
    assert res.code == 1, res
    assert "shallow" in res.out and "Traceback" not in res.err, res


def diverged_merge(repo, pick_later: bool) -> str:
    """Two clones appended the same entry at different times, plus one entry each;
    a merge commit unites them keeping the earlier (or, when asked, the later) copy."""
    r = pygit2.Repository(str(repo))
    sig = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
    base_entry = make_entry(0)
    same_early, same_late = make_entry(1, ts=ts_at(1)), make_entry(1, ts=ts_at(9))
    assert same_early.id == same_late.id and same_early.to_json() != same_late.to_json()
    mine, theirs = make_entry(2), make_entry(3)

    def commit(entries, parents):
        tree = build_tree(r, {path_of(e.id): e.to_json() for e in entries})
        return r.create_commit(None, sig, sig, "test\n", tree, parents)

    base = commit([base_entry], [])
    left = commit([base_entry, same_early, mine], [base])
    right = commit([base_entry, same_late, theirs], [base])
    kept = same_late if pick_later else same_early
    merge = commit([base_entry, kept, mine, theirs], [left, right])
    git(repo, "update-ref", "refs/lifeline/main", str(merge))
    return str(merge)


def test_a_merge_keeping_the_earliest_copy_of_an_entry_verifies(repo):
    diverged_merge(repo, pick_later=False)
    res = cli(repo, "verify")
    assert res.code == 0 and "4 entries, 4 commits" in res.out, res


def test_a_merge_keeping_the_later_copy_of_an_entry_is_reported(repo):
    diverged_merge(repo, pick_later=True)
    assert_reported(repo, "rewritten", "was rewritten in place")
