"""The line in git: append-only, idempotent, safe under concurrent writers, readable by git."""

from __future__ import annotations

import re

from kit.entries import ENTRY_PATH_RE, make_entry
from kit.races import append_concurrently
from kit.repos import commit_file, entry_paths, head, init_repo, log_entry, open_ledger, snapshot
from kit.run import cli, git

from git_lifeline.app.draft import Draft
from git_lifeline.app.ledger import commit_message
from git_lifeline.git.store import LineStore
from git_lifeline.git.verify import verify_log
from git_lifeline.views import projection


def commit_count(repo, ref="refs/lifeline/main") -> int:
    return int(git(repo, "rev-list", "--count", ref))


def reflog(repo, ref="refs/lifeline/main") -> list:
    out = git(repo, "reflog", "show", "--format=%H", ref)
    return out.splitlines() if out else []


# ---- idempotence -------------------------------------------------------------------
def test_appending_the_same_content_twice_writes_one_commit_and_says_so(repo):
    args = ["log", "--kind", "decision", "--summary", "Use git", "--body", "It is everywhere."]
    first = cli(repo, *args)
    assert first.code == 0, first
    before = snapshot(repo)
    second = cli(repo, *args)
    assert second.code == 0, second
    assert "already recorded" in second.out and "nothing written" in second.out
    assert snapshot(repo) == before
    assert commit_count(repo) == 1


def test_a_used_dedup_key_with_other_content_is_a_conflict_naming_the_holder(repo):
    # issue 28, item 12: it exited 0 with "already recorded <id>", the id of the entry
    # that was not written
    first = cli(repo, "log", "--kind", "note", "--summary", "Nightly run 1", "--body", "ok", "--dedup-key", "run-1")
    assert first.code == 0, first
    before = snapshot(repo)
    second = log_entry(repo, "note", "Nightly run 1 (retry)", "ok again", "--dedup-key", "run-1", expect=None)
    holder = open_ledger(repo).entries()[0]
    assert second.code == 1, second
    assert "already recorded" not in second.out + second.err
    assert f"already held by {holder.id[:12]} (note: Nightly run 1)" in second.err and "nothing written" in second.err
    assert snapshot(repo) == before
    assert [e.summary for e in open_ledger(repo).entries()] == ["Nightly run 1"]


def test_the_same_entry_again_with_its_dedup_key_stays_a_no_op(repo):
    args = ("log", "--kind", "release", "--summary", "Release 1.2", "--body", "Shipped.", "--dedup-key", "release-1.2")
    first = cli(repo, *args)
    assert first.code == 0, first
    before = snapshot(repo)
    again = cli(repo, *args)
    assert again.code == 0 and "already recorded" in again.out, again
    assert snapshot(repo) == before


def test_in_process_append_of_known_entries_is_a_no_op(ledger):
    entries = [make_entry(i) for i in range(3)]
    first = ledger.append(entries)
    again = ledger.append(list(reversed(entries)) + entries)
    assert len(first.added) == 3 and first.commit
    assert again.added == [] and again.commit is None and len(again.existing) == 3
    assert ledger.head() == first.commit


# ---- concurrency -------------------------------------------------------------------
def test_concurrent_appends_never_fork_the_line_nor_lose_an_entry(repo):
    processes, each = 6, 15
    results = append_concurrently(repo, processes, each)
    assert all(code == 0 for code, _ in results), results
    assert not any("warning" in err for _, err in results), results  # a skipped refresh says why
    led = open_ledger(repo)
    summaries = sorted(e.summary for e in led.entries())
    assert summaries == sorted(f"worker {w} note {i}" for w in range(processes) for i in range(each))
    parents_per_commit = [
        len(line.split()) - 1 for line in git(repo, "rev-list", "--parents", "refs/lifeline/main").splitlines()
    ]
    assert max(parents_per_commit) <= 1, "a commit with two parents means the line forked"
    assert len(parents_per_commit) == processes * each
    assert len(reflog(repo)) == processes * each
    report = verify_log(led.store)
    assert report.ok, report.problems
    expected = projection.render("main", led.entries(), led.store.tree_id(led.head()))
    assert (repo / "LIFELINE.md").read_text(encoding="utf-8") == expected, "the projection lags the ref"


def test_a_late_projection_refresh_never_overwrites_a_newer_one(repo):
    # The interleaving of two writers: A moves the ref, B appends and renders, then
    # A's (late) refresh runs. The projection must still show the ref as it is now.
    led_a, led_b = open_ledger(repo), open_ledger(repo)
    led_a.append([make_entry(0)])
    prev = led_a.head()
    moved = led_a.store.append([make_entry(1)], commit_message)
    led_b.append([make_entry(2)])
    led_a.projection.refresh(prev, moved.added, moved.commit)
    expected = projection.render("main", led_b.entries(), led_b.store.tree_id(led_b.head()))
    assert (repo / "LIFELINE.md").read_text(encoding="utf-8") == expected


# ---- the reflog ------------------------------------------------------------------------
def test_reflog_records_every_move_of_the_line_ref(ledger, repo):
    heads = [ledger.append([make_entry(i)]).commit for i in range(3)]
    assert reflog(repo) == list(reversed(heads))
    assert (repo / ".git" / "logs" / "refs" / "lifeline" / "main").exists()


# ---- where it runs -------------------------------------------------------------------
def test_works_from_a_subdirectory_and_projects_at_the_top(repo):
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    res = cli(sub, "log", "--kind", "decision", "--summary", "From below", "--body", "works")
    assert res.code == 0, res
    assert head(repo)
    assert (repo / "LIFELINE.md").exists() and not (sub / "LIFELINE.md").exists()


def test_a_linked_worktree_writes_the_shared_line(tmp_path):
    main = init_repo(tmp_path / "main")
    commit_file(main)
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    res = cli(tmp_path / "wt", "log", "--kind", "decision", "--summary", "From a worktree", "--body", "shared")
    assert res.code == 0, res
    assert head(main) and head(main) == head(tmp_path / "wt")
    assert len(reflog(main)) == 1
    assert (tmp_path / "wt" / "LIFELINE.md").exists()
    listed = cli(main, "list")
    assert "From a worktree" in listed.out, listed
    assert verify_log(LineStore(open_ledger(main).gr)).ok


def test_a_bare_repository_keeps_the_line_and_writes_no_projection(tmp_path):
    bare = init_repo(tmp_path / "bare.git", "--bare")
    files_before = sorted(p.relative_to(bare) for p in bare.rglob("*") if "LIFELINE" in p.name)
    res = cli(bare, "log", "--kind", "decision", "--summary", "On a server", "--body", "bare")
    assert res.code == 0, res
    assert head(bare)
    assert files_before == [] and [p for p in tmp_path.rglob("*") if "LIFELINE" in p.name] == []
    assert cli(bare, "verify").code == 0


def test_a_sha256_repository_is_refused_with_a_clear_message(tmp_path):
    repo = init_repo(tmp_path / "sha256", "--object-format=sha256")
    before = snapshot(repo)
    for argv in (["log", "--kind", "note", "--summary", "s", "--body", "b"], ["list"], ["verify"]):
        res = cli(repo, *argv)
        assert res.code == 2, res
        assert "sha256" in res.err and "Traceback" not in res.err, res
    assert snapshot(repo) == before


def test_outside_a_repository_is_refused_with_a_clear_message(tmp_path):
    res = cli(tmp_path, "list")
    assert res.code == 2, res
    assert "not a git repository" in res.err and "Traceback" not in res.err


def test_without_a_git_identity_nothing_is_written(repo, tmp_path):
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    before = snapshot(repo)
    res = cli(repo, "log", "--kind", "note", "--summary", "s", "--body", "b", env={"GIT_CONFIG_GLOBAL": str(empty)})
    assert res.code == 2 and "no git identity" in res.err and "Traceback" not in res.err, res
    assert snapshot(repo) == before


def test_appends_and_verify_survive_git_gc_and_packed_refs(ledger, repo):
    ledger.append([make_entry(0)])
    ledger.append([make_entry(1)])
    git(repo, "gc", "-q")
    git(repo, "pack-refs", "--all")
    led = open_ledger(repo)
    led.append([make_entry(2)])
    assert [e.summary for e in led.entries()] == [f"Decision number {i}" for i in range(3)]
    assert len(reflog(repo)) == 3
    assert verify_log(led.store).ok


# ---- what git sees -----------------------------------------------------------------
def test_entries_sit_at_two_level_fanout_paths_named_by_their_id(ledger, repo):
    ids = {ledger.append([make_entry(i)]).added[0].id for i in range(5)}
    paths = entry_paths(repo)
    assert len(paths) == 5
    for p in paths:
        m = ENTRY_PATH_RE.fullmatch(p)
        assert m, p
    assert {"".join(ENTRY_PATH_RE.fullmatch(p).groups()) for p in paths} == ids
    assert git(repo, "ls-tree", "--name-only", "refs/lifeline/main") == "entries"
    blob = git(repo, "cat-file", "-p", f"refs/lifeline/main:{paths[0]}")
    assert blob.startswith('{"agent":')


def test_commit_reads_like_the_reasoning_log(ledger, repo):
    out = ledger.log(
        Draft(
            kind="decision",
            summary="Use PostgreSQL",
            body="We need transactions.\n\nKey: value",
            ts="2024-05-01T12:00:00.987654Z",
        )
    )
    fmt = "%s%n%(trailers:key=Lifeline-Id,valueonly,separator=)%n%at %ct"
    subject, trailer, times = git(repo, "log", "-1", f"--format={fmt}", "refs/lifeline/main").split("\n")
    assert subject == "decision: Use PostgreSQL"
    assert trailer == out.entry.id
    assert times == f"{int(out.entry.ts.timestamp())} {int(out.entry.ts.timestamp())}" == "1714564800 1714564800"
    full = git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")
    assert "We need transactions." in full


def test_commit_time_comes_from_the_new_entries_only(ledger, repo):
    late = make_entry(30)
    ledger.append([late])
    early = make_entry(5)
    ledger.append([late, early])  # `late` is already there: only `early` is written
    assert git(repo, "log", "-1", "--format=%at %ct", "refs/lifeline/main") == (
        f"{int(early.ts.timestamp())} {int(early.ts.timestamp())}"
    )


def test_body_from_stdin_keeps_its_bytes(repo):
    res = cli(
        repo,
        "log",
        "--kind",
        "decision",
        "--summary",
        "From stdin",
        "--body-file",
        "-",
        input="line one\r\nline two — ü\n".encode("utf-8"),
    )
    assert res.code == 0, res
    assert open_ledger(repo).entries()[0].body == "line one\r\nline two — ü"


def test_a_batch_commit_lists_every_new_id_as_a_trailer(ledger, repo):
    entries = [make_entry(i) for i in range(3)]
    ledger.append(entries)
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Lifeline-Id,valueonly)", "refs/lifeline/main")
    assert sorted(trailers.split()) == sorted(e.id for e in entries)


def test_lines_are_separate_refs(repo):
    assert cli(repo, "--line", "research", "log", "--kind", "note", "--summary", "n", "--body", "b").code == 0
    assert head(repo, "refs/lifeline/research") and not head(repo)
    assert (repo / "LIFELINE.research.md").exists()
    assert re.search(r"^research\s+1 entries", cli(repo, "lines").out, re.M)
