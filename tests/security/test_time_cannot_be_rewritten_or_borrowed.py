"""Time order holds against clocks and against people (issue 14, item 5).

`ts` is not hashed: a clone's clock writes it, and anyone with push access can write
any value, or offer an earlier copy of an existing entry for a merge to keep. What held
before: nothing. Now (core/clock.py, core/causal.py):
* a ts before a parent's, or beyond the tolerance in the future, is refused at write;
  `verify`, `pull` and the pre-receive hook refuse a history carrying one (`bad-time`);
* a merge that keeps an earlier copy of an entry (the tie-break of two real copies)
  never dates it before its parents;
* "the latest" (a thread's live checkpoint and head, recent entries) follows the graph
  first and the clock second, so a re-dated or skewed entry cannot pass for the latest;
* one future-dated entry no longer makes every later append refold the whole line.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kit.entries import make_entry, path_of
from kit.home import AUTHOR_EMAIL, AUTHOR_NAME
from kit.repos import git_push, head, init_repo, log_entry, open_ledger, snapshot
from kit.run import cli, git
from kit.tamper import build_tree

from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.app.hook_files import install
from git_lifeline.core import truth
from git_lifeline.core.entry import format_ts, utcnow
from git_lifeline.errors import InputError
from git_lifeline.git.repo import open_repo


def iso(dt) -> str:
    return format_ts(dt)


def push(repo, remote: str, *specs: str, flags: tuple = ()) -> tuple:
    return git_push(repo, *specs, flags=flags, remote=remote, timeout=300)


# ---- at write ------------------------------------------------------------------------
# The CLI writes the time it is; a ts is given by the API (import, tools, tests).
def refused(led, repo, fragment: str, **fields) -> None:
    before = snapshot(repo)
    with pytest.raises(InputError, match=fragment):
        led.log(Draft(**fields))
    assert snapshot(repo) == before, "a refused write left something behind"


def test_a_future_dated_entry_is_refused_at_write(ledger, record_counts):
    repo = ledger.gr.workdir
    ledger.log(Draft(kind="note", summary="First", body="Start."))
    for days in (2, 400):
        refused(
            ledger,
            repo,
            "in the future",
            kind="note",
            summary=f"From {days} days ahead",
            body="Clock.",
            ts=iso(utcnow() + timedelta(days=days)),
        )
    ledger.log(
        Draft(kind="note", summary="An hour ahead", body="Within the tolerance.", ts=iso(utcnow() + timedelta(hours=1)))
    )
    record_counts("time: future ts refused at write", tried=2, held=2, lost=0)


def test_the_tolerance_is_configured_and_a_bad_setting_is_an_input_error(repo):
    git(repo, "config", "lifeline.maxClockSkew", "30m")
    led = open_ledger(repo)
    refused(
        led,
        repo,
        "allows 30m",
        kind="note",
        summary="An hour ahead",
        body="Too far now.",
        ts=iso(utcnow() + timedelta(hours=1)),
    )
    git(repo, "config", "lifeline.maxClockSkew", "soon")
    res = cli(repo, "log", "--kind", "note", "--summary", "Now", "--body", "Whatever.")
    assert res.code == 2 and "lifeline.maxClockSkew" in res.err and "Traceback" not in res.err, res


def test_an_entry_dated_before_its_parent_is_refused_at_write(ledger, record_counts):
    parent = ledger.log(Draft(kind="decision", summary="Use SQS", body="Managed.")).entry
    refused(
        ledger,
        ledger.gr.workdir,
        f"before the ts of its parent {parent.id[:8]}",
        kind="correction",
        summary="Use Kafka",
        body="Replay.",
        parents=[parent.id],
        ts=iso(utcnow() - timedelta(days=3)),
    )
    record_counts("time: ts before a parent's refused at write", tried=1, held=1, lost=0)


def test_a_write_from_a_clock_behind_its_parent_takes_the_parents_time(ledger):
    ahead = make_entry(kind="decision", summary="Use SQS", body="Managed.", ts=utcnow() + timedelta(hours=3))
    ledger.append([ahead])
    child = ledger.log(Draft(kind="correction", summary="Use Kafka", body="Replay.", parents=[ahead.id])).entry
    assert child.ts == ahead.ts
    res = log_entry(ledger.gr.workdir, "note", "Also later", "Noted.", "--parents", ahead.id[:8], "--json", expect=None)
    assert res.code == 0 and json.loads(res.out)["entry"]["ts"] == iso(ahead.ts), res
    assert cli(ledger.gr.workdir, "verify").code == 0


# ---- at the gates -----------------------------------------------------------------------
@pytest.fixture
def gates(tmp_path, git_dispatch):
    """A clone, a server with the pre-receive hook and a mirror without hooks, both holding
    the clone's clean line."""
    client = init_repo(tmp_path / "client")
    led = open_ledger(client)
    led.log(Draft(kind="decision", summary="Use SQS", body="Managed.", ts=iso(utcnow() - timedelta(days=10))))
    server, mirror = tmp_path / "server.git", tmp_path / "mirror.git"
    for bare in (server, mirror):
        git(tmp_path, "init", "-q", "--bare", str(bare))
    install(open_repo(str(server)), ["pre-receive"])
    for name, url in (("origin", server), ("mirror", mirror)):
        git(client, "remote", "add", name, str(url))
        code, err = push(client, name, "refs/lifeline/main")
        assert code == 0, err
    return client, server, mirror


def verdicts(tmp_path, client, server, mirror) -> dict:
    """What verify, the pre-receive hook and a pull from a hook-less remote say of the client's line."""
    before = head(server)
    code, err = push(client, "origin", "refs/lifeline/main", flags=("--no-verify",))
    out = {"verify": cli(client, "verify"), "pre-receive": (code, err, head(server) == before)}
    code, err = push(client, "mirror", "refs/lifeline/main", flags=("--no-verify", "--force"))
    assert code == 0, err
    victim = init_repo(tmp_path / f"victim-{len(list(tmp_path.iterdir()))}")
    git(victim, "remote", "add", "mirror", str(mirror))
    out["pull"] = (cli(victim, "pull", "mirror"), head(victim))
    return out


def assert_refused(v: dict, fragment: str) -> None:
    assert v["verify"].code == 1 and "bad-time" in v["verify"].out and fragment in v["verify"].out, v["verify"]
    code, err, unchanged = v["pre-receive"]
    assert code != 0 and "bad-time" in err and unchanged, err
    res, pulled = v["pull"]
    assert res.code == 1 and "bad-time" in res.err and pulled is None, res


def test_a_future_dated_entry_is_refused_by_verify_pull_and_pre_receive(gates, tmp_path, record_counts):
    client, server, mirror = gates
    open_ledger(client).append(
        [
            make_entry(
                kind="checkpoint",
                summary="From a clock a year ahead",
                body="thread: main\nnext:\n  - own the latest",
                ts=utcnow() + timedelta(days=365),
            )
        ]
    )
    assert_refused(verdicts(tmp_path, client, server, mirror), "in the future")
    record_counts("time: future-dated entry (verify, pre-receive, pull)", tried=3, held=3, lost=0)


def test_an_entry_dated_far_before_its_parent_is_refused_by_verify_pull_and_pre_receive(gates, tmp_path, record_counts):
    client, server, mirror = gates
    led = open_ledger(client)
    parent = led.entries()[0]
    led.append(
        [
            make_entry(
                kind="correction",
                summary="Use Kafka",
                body="Replay.",
                parents=[parent.id],
                ts=parent.ts - timedelta(days=30),
            )
        ]
    )
    assert_refused(verdicts(tmp_path, client, server, mirror), f"before the ts of its parent {parent.id[:8]}")
    record_counts("time: entry dated before its parent (verify, pre-receive, pull)", tried=3, held=3, lost=0)


def redating_merge(repo, hours_before_parent: float) -> tuple:
    """The issue's attack: a merge whose second parent is a made-up history holding an
    earlier copy of an existing checkpoint; the tie-break keeps the earlier copy."""
    led = open_ledger(repo)
    cp1 = led.checkpoint(CheckpointDraft("work", {"next": ["write the parser"]})).entry
    cp2 = led.checkpoint(CheckpointDraft("work", {"next": ["ship the parser"]})).entry
    assert cp2.parents == [cp1.id]
    earlier = make_entry(
        kind=cp2.kind,
        summary=cp2.summary,
        body=cp2.body,
        parents=cp2.parents,
        author=cp2.author,
        ts=cp1.ts - timedelta(hours=hours_before_parent),
    )
    assert earlier.id == cp2.id
    r = pygit2.Repository(str(repo))
    sig = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
    orphan = r.create_commit(None, sig, sig, "made up\n", build_tree(r, {path_of(cp2.id): earlier.to_json()}), [])
    tip = r.references["refs/lifeline/main"].target
    files = {path_of(e.id): e.to_json() for e in led.entries() if e.id != cp2.id}
    files[path_of(cp2.id)] = earlier.to_json()
    merge = r.create_commit(None, sig, sig, "merge\n", build_tree(r, files), [tip, orphan])
    git(repo, "update-ref", "refs/lifeline/main", str(merge))
    return cp1, cp2


def test_a_merge_that_redates_an_entry_before_its_parent_is_refused(gates, tmp_path, record_counts):
    client, server, mirror = gates
    _cp1, cp2 = redating_merge(client, hours_before_parent=30)
    v = verdicts(tmp_path, client, server, mirror)
    assert_refused(v, f"entry {cp2.id[:8]}: a merge keeps a copy whose ts")
    record_counts(
        "time: merge re-dating an entry before its parent (verify, pre-receive, pull)", tried=3, held=3, lost=0
    )


def test_a_merge_redating_a_checkpoint_within_the_tolerance_does_not_make_the_older_one_the_latest(repo):
    """The issue's attack within the tolerance: the gates take it (it is what two clones
    whose clocks disagree leave), and resume still shows where work stopped."""
    cp1, cp2 = redating_merge(repo, hours_before_parent=2)
    assert cli(repo, "verify").code == 0
    led = open_ledger(repo)
    assert led.store.read(cp2.id).ts < cp1.ts, "the merge did re-date it"
    assert [c.entry.id for c in led.resume("work")] == [cp2.id]
    res = cli(repo, "resume", "--thread", "work")
    assert res.code == 0 and "ship the parser" in res.out and "write the parser" not in res.out, res


def test_a_merge_keeping_the_earlier_of_two_real_copies_still_verifies(repo):
    led = open_ledger(repo)
    cp1 = led.checkpoint(CheckpointDraft("work", {"next": ["write the parser"]})).entry
    cp2 = led.checkpoint(CheckpointDraft("work", {"next": ["ship the parser"]})).entry
    other = make_entry(
        kind=cp2.kind,
        summary=cp2.summary,
        body=cp2.body,
        parents=cp2.parents,
        author=cp2.author,
        ts=cp1.ts + (cp2.ts - cp1.ts) / 2,
    )  # written on another clone, after its parent
    r = pygit2.Repository(str(repo))
    sig = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
    side_files = {path_of(cp1.id): cp1.to_json(), path_of(cp2.id): other.to_json()}
    side = r.create_commit(None, sig, sig, "other clone\n", build_tree(r, side_files), [])
    files = {path_of(e.id): e.to_json() for e in led.entries() if e.id != cp2.id}
    files[path_of(cp2.id)] = other.to_json()
    merge = r.create_commit(
        None, sig, sig, "merge\n", build_tree(r, files), [r.references["refs/lifeline/main"].target, side]
    )
    git(repo, "update-ref", "refs/lifeline/main", str(merge))
    res = cli(repo, "verify")
    assert res.code == 0, res


# ---- the latest is causal ----------------------------------------------------------------
def test_a_checkpoint_dated_before_the_one_it_continues_is_still_the_latest(ledger):
    """A clone whose clock is behind (within the tolerance), or a re-dating merge within it:
    the checkpoint that continues a thread is where work stopped, whatever its clock."""
    cp1 = ledger.checkpoint(CheckpointDraft("work", {"next": ["write the parser"]})).entry
    planned = ledger.plan_checkpoint(CheckpointDraft("work", {"next": ["ship the parser"]})).entry
    behind = make_entry(
        kind="checkpoint",
        summary=planned.summary,
        body=planned.body,
        parents=planned.parents,
        author=planned.author,
        ts=cp1.ts - timedelta(hours=5),
    )
    ledger.append([behind])
    assert [c.entry.id for c in ledger.resume("work")] == [behind.id]
    assert ledger.state().threads["work"][-1] == behind.id
    nxt = ledger.plan_entry(Draft(kind="note", summary="Parser shipped", body="Done.", thread="work"))
    assert nxt.parents == [behind.id], "the thread's head is the entry that continues it"
    assert ledger.state().checkpoint_ids["work"] == behind.id


def test_recent_lists_a_child_after_its_parent_whatever_the_clocks(ledger):
    d = make_entry(kind="decision", summary="Use SQS", body="Managed.", ts=utcnow())
    c = make_entry(kind="correction", summary="Use Kafka", body="Replay.", parents=[d.id], ts=d.ts - timedelta(hours=2))
    ledger.append([d, c])
    assert ledger.state().recent_ids[-2:] == [d.id, c.id]


# ---- refolds -----------------------------------------------------------------------------
def test_one_future_dated_entry_does_not_force_a_refold_on_every_later_append(ledger, monkeypatch):
    ledger.log(Draft(kind="decision", summary="Use SQS", body="Managed."))
    ledger.append(
        [
            make_entry(
                kind="note",
                summary="From a clock ahead",
                body="Within the tolerance.",
                ts=utcnow() + timedelta(hours=20),
            )
        ]
    )
    ledger.state()
    refolds = []
    original = truth.Fold.__init__

    def counting(self, *args, **kwargs):
        if not args and not kwargs:  # a fold from scratch (a stored one is loaded with its fields)
            refolds.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(truth.Fold, "__init__", counting)
    for i in range(5):
        ledger.log(Draft(kind="note", summary=f"Later note {i}", body="Written now."))
        ledger.state()
    monkeypatch.undo()
    assert refolds == [], "an append after a future-dated entry refolded the line"
    cold = truth.reduce(ledger.store.load().entries.values())
    assert json.loads(json.dumps(ledger.state().fold.to_json())) == json.loads(json.dumps(cold.fold.to_json()))


@st.composite
def threaded_ledgers(draw):
    """Entries in threads and not, checkpoints chaining to the thread head, decisions,
    revisions, notes naming decisions, from clocks that disagree (ts in any order)."""
    from kit.truth_reference import rec

    n = draw(st.integers(1, 24))
    out, heads = [], {}
    for i in range(n):
        kind = draw(st.sampled_from(["checkpoint", "checkpoint", "note", "decision", "correction", "fix"]))
        thread = draw(st.sampled_from([None, "a", "b"]))
        parents = []
        if thread and thread in heads:
            parents = [heads[thread]]
        elif out and draw(st.booleans()):
            parents = [draw(st.sampled_from(out)).id]
        if kind == "correction" and not parents:
            kind = "decision"
        body = (
            (f"thread: {thread}\n" if thread else "") + "next:\n  - go on"
            if kind == "checkpoint"
            else (f"thread: {thread}\n\nBecause." if thread else "Because.")
        )
        e = rec(f"e{i}", kind, [], body, minute=draw(st.integers(0, 30)))
        e = type(e)(
            e.id,
            e.ts,
            e.kind,
            e.author,
            draw(st.sampled_from(["human", "coder"])),
            e.provider,
            e.model,
            e.summary,
            e.body,
            sorted(parents),
            None,
        )
        out.append(e)
        if thread:
            heads[thread] = e.id
    return out


@settings(max_examples=150, deadline=None)
@given(threaded_ledgers(), st.randoms(use_true_random=False))
def test_entries_pulled_out_of_order_fold_as_a_cold_fold_does(entries, rnd):
    """What the cache does on a pull of older entries: fold them onto what was folded,
    whenever the fold accepts them; the result equals a fold of every entry from scratch."""
    by_id = {e.id: e for e in entries}
    shuffled = list(entries)
    rnd.shuffle(shuffled)
    first: set = set()
    todo = [e.id for e in shuffled[: rnd.randrange(len(shuffled) + 1)]]
    while todo:  # what a clone holds holds the parents of what it holds (verify refuses it otherwise)
        i = todo.pop()
        if i not in first:
            first.add(i)
            todo += [p for p in by_id[i].parents if p in by_id]
    f = truth.Fold()
    for e in sorted((by_id[i] for i in first), key=lambda e: (e.ts, e.id)):
        f.add(e)
    rest = sorted((e for e in entries if e.id not in first), key=lambda e: (e.ts, e.id))
    if f.accepts_after(rest):
        loaded = truth.Fold.from_json(json.loads(json.dumps(f.to_json())))
        for e in rest:
            loaded.add(e)
        f = loaded
    else:
        f = truth.fold(entries)
    cold = truth.fold(entries)
    assert json.loads(json.dumps(f.to_json())) == json.loads(json.dumps(cold.to_json()))
    warm_state, cold_state = truth.State(f, by_id.get), truth.State(cold, by_id.get)
    assert warm_state.checkpoint_ids == cold_state.checkpoint_ids
    assert warm_state.threads == cold_state.threads and warm_state.recent_ids == cold_state.recent_ids
    for key, ids in cold_state.threads.items():  # a thread's order is causal
        pos = {i: n for n, i in enumerate(ids)}
        assert all(pos[p] < pos[i] for i in ids for p in by_id[i].parents if p in pos), key


def test_an_entry_after_a_skewed_one_stays_after_it_in_its_thread():
    """A chain whose second entry is dated before its parent: the third, dated after the
    second but before the first, still comes last (causality is transitive)."""
    from kit.truth_reference import rec

    a = rec("a", "note", body="thread: t\n\nFirst.", minute=10)
    b = rec("b", "note", ["a"], body="thread: t\n\nSecond, from a clock behind.", minute=1)
    c = rec("c", "checkpoint", ["b"], body="thread: t\nnext:\n  - third", minute=2)
    st_ = truth.State(truth.fold([a, b, c]), {e.id: e for e in (a, b, c)}.get)
    assert st_.threads["t"] == [a.id, b.id, c.id]
    assert st_.checkpoint_ids["t"] == c.id
