"""Sync through normal remotes: fetch into tracking refs, create / fast-forward /
merge per line, never-forced push, clone, remote-setup; convergence of several
clones over a bare file:// remote and over a real `git daemon`."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pygit2
import pytest
from kit.home import gitenv  # noqa: F401
from kit.repos import init_repo, make_clone, open_ledger, open_workspace, ref  # noqa: F401
from kit.run import Via, cli, git
from kit.servers import git_daemon  # noqa: F401
from kit.tamper import entry_blobs, tamper  # noqa: F401

from git_lifeline.app import exchange  # noqa: E402
from git_lifeline.app.draft import Draft
from git_lifeline.git.verify import verify_log  # noqa: E402

T0 = datetime(2024, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
KINDS = ["decision", "decision", "note", "open", "feature", "fix", "incident"]


def ts(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def log(path, summary, kind="decision", body=None, t=None, line=None, parents=None, author=None):
    return (
        open_ledger(path, line)
        .log(Draft(kind=kind, summary=summary, body=body or f"why {summary}", ts=t, parents=parents, author=author))
        .entry
    )


def pull(path):
    return exchange.pull(open_workspace(path)).lines


def push(path):
    result = exchange.push(open_workspace(path))
    assert not result.rejected, result
    return result


def sync(path):
    result = exchange.sync_with(open_workspace(path)).push
    assert not result.rejected, result


@pytest.fixture
def trio(gitenv):
    """A bare remote with a code branch and a ledger, and two clones of it."""
    remote = init_repo(gitenv / "remote.git", "--bare")
    a = make_clone(str(remote), gitenv / "a", code=True)
    git(a, "push", "--quiet", "origin", "main")
    log(a, "Project", kind="bootstrap", t=ts(0))
    push(a)
    b = make_clone(str(remote), gitenv / "b")
    return remote, a, b


# ---- convergence -------------------------------------------------------------------
def _random_history(rng: random.Random, clones: list, steps: int) -> None:
    shared_body = "the same content recorded on several clones at different times"
    for step in range(steps):
        c = clones[rng.randrange(len(clones))]
        op = rng.choice(["append", "append", "append", "pull", "push", "sync"])
        ws = open_workspace(c)
        led = ws.ledger()
        if op == "append":
            if rng.random() < 0.15:
                # same id everywhere, different ts: the tie-break must pick one blob on every clone
                led.log(
                    Draft(
                        kind="note",
                        summary="Shared note",
                        body=shared_body,
                        author="Team <t@example.com>",
                        ts=ts(1000 + rng.randrange(500)),
                    )
                )
                continue
            existing = [e.id for e in led.entries()]
            parents = [rng.choice(existing)] if existing and rng.random() < 0.3 else []
            kind = rng.choice(KINDS)
            if parents and rng.random() < 0.3:
                kind = "correction"
            led.log(
                Draft(
                    kind=kind,
                    summary=f"step {step} on {c.name}",
                    body=f"because {rng.random():.6f}",
                    ts=ts(rng.randrange(10_000)),
                    parents=parents,
                )
            )
        elif op == "pull":
            exchange.pull(ws)
        elif op == "push":
            exchange.push(ws)  # may be refused (someone pushed first): that is fine here
        else:
            exchange.sync_with(ws)


def _assert_converged(clones: list, remote_url_owner: Path) -> None:
    blobs = [entry_blobs(c) for c in clones]
    assert all(b == blobs[0] for b in blobs), "clones hold different entry sets or blobs"
    assert entry_blobs(remote_url_owner) == blobs[0]
    contexts = [cli(c, "context", expect=0, via=Via.GIT).raw for c in clones]
    assert contexts[0] and all(ctx == contexts[0] for ctx in contexts)
    for c in clones:
        report = verify_log(open_ledger(c).store)
        assert report.ok, report.problems


def test_diverged_clones_converge_to_identical_context_over_file_remote(gitenv):
    rng = random.Random(1234)
    remote = init_repo(gitenv / "remote.git", "--bare")
    url = remote.resolve().as_uri()
    clones = []
    for i in range(3):
        c = make_clone(url, gitenv / f"c{i}")
        log(c, f"Seed entry of c{i}", t=ts(i))
        clones.append(c)
    _random_history(rng, clones, steps=28)
    for _round in range(2):
        for c in clones:
            exchange.sync_with(open_workspace(c))
    for c in clones:
        exchange.pull(open_workspace(c))
    _assert_converged(clones, remote)


def test_diverged_clones_converge_to_identical_context_over_git_daemon(gitenv):
    rng = random.Random(99)
    base = gitenv / "srv"
    base.mkdir()
    remote = init_repo(base / "ledger.git", "--bare")
    with git_daemon(base) as root_url:
        url = f"{root_url}/ledger.git"
        clones = []
        for i in range(3):
            c = gitenv / f"d{i}"
            if i == 0:
                cli(gitenv, "clone", url, c.name, expect=0, via=Via.GIT)
            else:
                exchange.clone(url, c.name)
            log(c, f"Seed entry of d{i}", t=ts(i))
            clones.append(c)
        _random_history(rng, clones, steps=24)
        for _round in range(2):
            for c in clones:
                sync(c)
        for c in clones:
            pull(c)
        _assert_converged(clones, remote)


# ---- per-line outcomes -------------------------------------------------------------
def test_pull_creates_missing_line_and_fast_forwards_without_merge_commits(trio):
    remote, a, b = trio
    assert ref(b, "refs/lifeline/main") is None
    out = cli(b, "pull", expect=0, via=Via.GIT).out
    assert "line main: created" in out
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    log(a, "Second", t=ts(5))
    log(a, "Ops runbook", kind="note", t=ts(6), line="ops")
    push(a)
    out = cli(b, "pull", expect=0, via=Via.GIT).out
    assert "line main: fast-forward" in out and "line ops: created" in out
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    assert ref(b, "refs/lifeline/ops") == ref(a, "refs/lifeline/ops")
    assert "up to date" in cli(b, "pull", expect=0, via=Via.GIT).out
    extended = (b / "LIFELINE.md").read_bytes()  # extended in place by the fast-forward
    open_ledger(b).render()
    assert (b / "LIFELINE.md").read_bytes() == extended


def test_diverged_line_gets_one_merge_commit_with_both_parents_and_union_tree(trio):
    remote, a, b = trio
    pull(b)
    ea = log(a, "From a", t=ts(10))
    eb = log(b, "From b", t=ts(11))
    push(a)
    a_head, b_head = ref(a, "refs/lifeline/main"), ref(b, "refs/lifeline/main")
    out = cli(b, "pull", expect=0, via=Via.GIT).out
    assert "merged 1 entry" in out
    merged = pygit2.Repository(str(b))[ref(b, "refs/lifeline/main")]
    assert [str(p) for p in merged.parent_ids] == [b_head, a_head]
    assert "merge origin/main into main" in merged.message and "From a" in merged.message
    assert {ea.id, eb.id} <= set(entry_blobs(b))
    # the merged line pushes as a fast-forward and a then fast-forwards to it
    push(b)
    pull(a)
    assert entry_blobs(a) == entry_blobs(b)


def test_same_entry_recorded_twice_keeps_earliest_timestamp_on_every_clone(trio):
    remote, a, b = trio
    pull(b)
    late = log(a, "Same thing", body="same why", t=ts(500), author="X <x@example.com>")
    early = log(b, "Same thing", body="same why", t=ts(400), author="X <x@example.com>")
    assert late.id == early.id
    push(a)
    sync(b)
    pull(a)
    for c in (a, b):
        assert open_ledger(c).show(late.id[:12]).ts == early.ts
        assert verify_log(open_ledger(c).store).ok
    assert entry_blobs(a) == entry_blobs(b)
    # and the other order of events ends the same
    late2 = log(b, "Other", body="w", t=ts(900), author="X <x@example.com>")
    early2 = log(a, "Other", body="w", t=ts(800), author="X <x@example.com>")
    push(b)
    sync(a)
    pull(b)
    for c in (a, b):
        assert open_ledger(c).show(late2.id[:12]).ts == early2.ts
    assert entry_blobs(a) == entry_blobs(b)


def test_pull_refuses_tampered_entry_and_names_it_without_moving_anything(trio):
    remote, a, b = trio
    victim = log(a, "Database: PostgreSQL", t=ts(20))
    push(a)
    pull(b)
    tamper(b, victim.id)
    git(b, "push", "--quiet", "--no-verify", "origin", "refs/lifeline/main:refs/lifeline/main")
    log(a, "Local work", t=ts(30))
    before = ref(a, "refs/lifeline/main")
    proc = cli(a, "pull", expect=1, via=Via.GIT)
    err = proc.err
    assert victim.id[:8] in err and "tampered" in err and "nothing was changed" in err
    assert ref(a, "refs/lifeline/main") == before
    assert ref(a, "refs/remotes/origin/lifeline/main") is not None  # fetched, kept aside


def test_union_refuses_same_id_with_different_hashed_content(gitenv):
    from git_lifeline.git.fanout import union_of
    from git_lifeline.git.namespaces import LEDGER

    repo_path = gitenv / "u"
    git(gitenv, "init", "--quiet", repo_path.name)
    e = log(repo_path, "Original", t=ts(1))
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.store import LineStore

    store = LineStore(open_repo(str(repo_path)))
    ours = store.tree(store.head())
    bad = store.repo.create_blob(e.to_json().replace(b"Original", b"Forged"))
    theirs = store.repo[store.insert(ours, {e.id: bad})]
    u = union_of(store.repo, LEDGER, ours, theirs)
    assert [c[0] for c in u.corrupt] == [e.id]


def test_fetch_never_touches_unpushed_local_entries(trio):
    remote, a, b = trio
    pull(b)
    mine = log(b, "Unpushed on b", t=ts(40))
    log(a, "Pushed from a", t=ts(41))
    push(a)
    before = ref(b, "refs/lifeline/main")
    out = cli(b, "fetch", expect=0, via=Via.GIT).out
    assert "diverged" in out and "git lifeline sync" in out
    assert ref(b, "refs/lifeline/main") == before
    assert mine.id in entry_blobs(b)
    assert ref(b, "refs/remotes/origin/lifeline/main") == ref(a, "refs/lifeline/main")


def test_push_is_never_forced_and_rejection_says_to_sync(trio):
    remote, a, b = trio
    pull(b)
    log(a, "a wins the race", t=ts(50))
    log(b, "b arrives second", t=ts(51))
    push(a)
    remote_head = ref(remote, "refs/lifeline/main")
    proc = cli(b, "push", expect=1, via=Via.GIT)
    err = proc.err
    assert "git lifeline sync" in err and "REJECTED" in err
    assert ref(remote, "refs/lifeline/main") == remote_head
    sync(b)
    assert pygit2.Repository(str(remote)).descendant_of(ref(remote, "refs/lifeline/main"), remote_head)


def test_push_refuses_to_spread_a_tampered_line(trio):
    remote, a, b = trio
    e = log(a, "Keep me honest", t=ts(60))
    push(a)
    tamper(a, e.id)
    before = ref(remote, "refs/lifeline/main")
    proc = cli(a, "push", expect=1, via=Via.GIT)
    assert e.id[:8] in proc.err and "nothing was pushed" in proc.err
    assert ref(remote, "refs/lifeline/main") == before


def test_clone_brings_code_and_ledger_and_renders_projection(trio):
    remote, a, b = trio
    out = cli(a.parent, "clone", str(remote), "fresh", expect=0, via=Via.GIT).out
    fresh = a.parent / "fresh"
    assert "created" in out
    assert (fresh / "README").exists()
    assert ref(fresh, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    rendered = (fresh / "LIFELINE.md").read_bytes()
    assert rendered.count(b"### ") == len(entry_blobs(a))
    open_ledger(fresh).render()  # the projection a pull wrote is exactly the full render
    assert (fresh / "LIFELINE.md").read_bytes() == rendered
    # the default directory name is git's
    cli(a.parent, "clone", str(remote), expect=0, via=Via.GIT)
    assert ref(a.parent / "remote", "refs/lifeline/main") == ref(a, "refs/lifeline/main")


def test_clone_into_nonempty_directory_is_refused_and_writes_nothing(trio):
    remote, a, b = trio
    proc = cli(a.parent, "clone", str(remote), "a", expect=2, via=Via.GIT)
    assert "already exists" in proc.err


def test_default_remote_is_the_branch_upstream_else_origin(trio):
    remote, a, b = trio
    other = init_repo(a.parent / "other.git", "--bare")
    git(a, "remote", "add", "other", str(other))
    git(a, "push", "--quiet", "-u", "other", "main")
    push(a)
    assert ref(other, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    git(a, "branch", "--unset-upstream")
    log(a, "Only origin gets this", t=ts(70))
    push(a)
    assert ref(remote, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    assert ref(other, "refs/lifeline/main") != ref(a, "refs/lifeline/main")


def test_unknown_remote_is_a_usage_error_that_writes_nothing(trio):
    remote, a, b = trio
    for cmd in ("pull", "push", "remote-setup"):
        proc = cli(a, cmd, "nosuchremote", expect=2, via=Via.GIT)
        assert "not a configured remote" in proc.err
    assert ref(a, "refs/remotes/nosuchremote/lifeline/main") is None
    proc = cli(a, "pull", str(remote), expect=2, via=Via.GIT)  # a URL is not a remote name
    assert "remote's name" in proc.err


def test_unreachable_remote_fails_cleanly(trio):
    remote, a, b = trio
    git(a, "remote", "add", "gone", str(a.parent / "does-not-exist.git"))
    proc = cli(a, "pull", "gone", expect=2, via=Via.GIT)
    assert "fetching the ledger from 'gone' failed" in proc.err
    proc = cli(a, "push", "gone", expect=2, via=Via.GIT)
    assert "pushing the ledger to 'gone' failed" in proc.err


def test_remote_setup_adds_fetch_refspec_only_and_plain_fetch_brings_ledger(trio):
    remote, a, b = trio
    out = cli(b, "remote-setup", expect=0, via=Via.GIT).out
    assert "No push refspec" in out
    cli(b, "remote-setup", expect=0, via=Via.GIT)  # idempotent
    specs = git(b, "config", "--get-all", "remote.origin.fetch").out.split()
    assert specs.count("+refs/lifeline/*:refs/remotes/origin/lifeline/*") == 1
    assert git(b, "config", "--get-all", "remote.origin.push", check=False).raw == b""
    log(a, "After setup", t=ts(80))
    push(a)
    git(b, "fetch", "--quiet")
    assert ref(b, "refs/remotes/origin/lifeline/main") == ref(a, "refs/lifeline/main")
    assert ref(b, "refs/lifeline/main") is None  # a plain fetch never writes the local line


def test_pull_reports_progress_through_the_given_callback(trio):
    remote, a, b = trio
    for i in range(5):
        log(a, f"entry {i}", t=ts(100 + i))
    push(a)
    seen = []

    class Bar:
        def __init__(self, label, total):
            seen.append((label, total))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            seen.append(n)

    exchange.pull(open_workspace(b), progress=lambda label, total: Bar(label, total))
    assert ("verifying origin/main", 6) in seen


def test_pull_works_in_a_shallow_code_clone(trio):
    remote, a, b = trio
    git(a, "commit", "--quiet", "--allow-empty", "-m", "second")
    git(a, "push", "--quiet", "origin", "main")
    shallow = a.parent / "shallow"
    git(a.parent, "clone", "--quiet", "--depth", "1", remote.resolve().as_uri(), shallow.name)
    assert "created" in cli(shallow, "pull", expect=0, via=Via.GIT).out
    assert entry_blobs(shallow) == entry_blobs(a)


def test_line_option_limits_push_to_that_line(trio):
    remote, a, b = trio
    log(a, "Main only", t=ts(90))
    log(a, "Ops only", kind="note", t=ts(91), line="ops")
    cli(a, "--line", "ops", "push", expect=0, via=Via.GIT)
    assert ref(remote, "refs/lifeline/ops") == ref(a, "refs/lifeline/ops")
    assert ref(remote, "refs/lifeline/main") != ref(a, "refs/lifeline/main")


def _commit_tree(store, build, message="crafted"):
    """Append a commit whose root tree is built by `build(root TreeBuilder, entries tree)`."""
    head = store.head()
    root = store.repo.TreeBuilder(store.repo[head].tree)
    build(root, store.tree(head))
    sig = pygit2.Signature("Mallory", "m@example.com")
    commit = store.repo.create_commit(None, sig, sig, message, root.write(), [pygit2.Oid(hex=head)])
    assert store.move_ref(head, str(commit), "craft")
    return head


@pytest.mark.parametrize("damage", ["removed", "rewritten", "foreign-root", "exec-mode", "tree-at-entry"])
def test_range_verification_catches_what_full_verify_catches(gitenv, damage):
    from git_lifeline.git.verify import verify_range

    repo_path = gitenv / "r"
    git(gitenv, "init", "--quiet", repo_path.name)
    keep = log(repo_path, "Keep", t=ts(1))
    victim = log(repo_path, "Victim", t=ts(2))
    store = open_ledger(repo_path).store
    repo = store.repo
    a, b, rest = victim.id[0:2], victim.id[2:4], victim.id[4:]

    def rebuild_leaf(entries, change):
        tb_a = repo.TreeBuilder(repo[entries[a].id])
        tb_b = repo.TreeBuilder(repo[entries[f"{a}/{b}"].id])
        change(tb_b)
        tb_a.insert(b, tb_b.write(), pygit2.GIT_FILEMODE_TREE)
        top = repo.TreeBuilder(entries)
        top.insert(a, tb_a.write(), pygit2.GIT_FILEMODE_TREE)
        return top.write()

    def build(root, entries):
        blob = entries[f"{a}/{b}/{rest}"].id
        if damage == "foreign-root":
            root.insert("README", repo.create_blob(b"hi"), pygit2.GIT_FILEMODE_BLOB)
            return
        changes = {
            "removed": lambda tb: tb.remove(rest),
            "rewritten": lambda tb: tb.insert(
                rest, repo.create_blob(repo[blob].data.replace(b"Victim", b"Forged")), pygit2.GIT_FILEMODE_BLOB
            ),
            "exec-mode": lambda tb: tb.insert(rest, blob, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE),
            "tree-at-entry": lambda tb: tb.insert(rest, _tree_with(repo, blob), pygit2.GIT_FILEMODE_TREE),
        }
        root.insert("entries", rebuild_leaf(entries, changes[damage]), pygit2.GIT_FILEMODE_TREE)

    good = _commit_tree(store, build)
    full = verify_log(store)
    ranged = verify_range(store, store.head(), [good])
    whole = verify_range(store, store.head(), [])
    assert not full.ok and not ranged.ok and not whole.ok
    expected = {
        "removed": "removed",
        "rewritten": "bad-entry",
        "foreign-root": "foreign-file",
        "exec-mode": "foreign-file",
        "tree-at-entry": "foreign-file",
    }[damage]
    assert expected in {p.code for p in ranged.problems}, ranged.problems
    # (a tree put where an entry was: the range check also names the entry as removed)
    extra = {"removed"} if damage == "tree-at-entry" else set()
    assert {p.code for p in ranged.problems} <= {p.code for p in full.problems} | extra
    assert keep.id in entry_blobs(repo_path)


def _tree_with(repo, blob):
    tb = repo.TreeBuilder()
    tb.insert("x", blob, pygit2.GIT_FILEMODE_BLOB)
    return tb.write()


def test_entry_appended_during_a_pull_is_kept(trio):
    remote, a, b = trio
    pull(b)
    incoming = log(a, "Arrives with the pull", t=ts(200))
    push(a)
    log(b, "Local before the pull", t=ts(201))
    racing = []

    class Bar:
        def __init__(self, label, total):
            if label.startswith("merging") and not racing:
                # another process appends while this pull is merging
                racing.append(log(b, "Appended mid-pull", t=ts(202)))
                racing.append(ref(b, "refs/lifeline/main"))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            pass

    exchange.pull(open_workspace(b), progress=lambda label, total: Bar(label, total))
    ids = set(entry_blobs(b))
    assert racing and racing[0].id in ids and incoming.id in ids
    merge = pygit2.Repository(str(b))[ref(b, "refs/lifeline/main")]
    assert str(merge.parent_ids[0]) == racing[1]  # the merge was redone on top of the racing append
    assert verify_log(open_ledger(b).store).ok


def test_sync_pulls_again_when_someone_pushes_between_its_pull_and_push(trio, tmp_path):
    remote, a, b = trio
    pull(b)
    mark = tmp_path / "raced"
    hook = b / ".git" / "hooks" / "pre-push"
    # while b pushes, a pushes first (once): b's push loses the race
    hook.write_text(
        "#!/bin/sh\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f"if [ ! -e '{mark}' ]; then touch '{mark}'; "
        f"git -C '{a}' lifeline push >/dev/null 2>&1 || exit 9; fi\nexit 0\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    from_a = log(a, "a pushes during b's sync", t=ts(300))
    from_b = log(b, "b syncs", t=ts(301))
    out = cli(b, "sync", expect=0, via=Via.GIT)
    assert mark.exists()
    assert {from_a.id, from_b.id} <= set(entry_blobs(remote))
    assert ref(remote, "refs/lifeline/main") == ref(b, "refs/lifeline/main"), out.out
    assert "merged 1 entry" in out.out  # a's entry arrived only by the second pull
