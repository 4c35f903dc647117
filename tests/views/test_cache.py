"""The cache under the git dir is never the source of truth and never serves a stale or torn state."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone

from kit.repos import open_ledger
from kit.run import cli, git, subprocess_env
from kit.truth_reference import truth_signature

from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.core import fold_text, truth
from git_lifeline.views import cache_check
from git_lifeline.views.cache_rows import SCHEMA_VERSION

T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)


def full_rebuild(ledger):
    return truth.reduce(ledger.store.load().entries.values())


def random_step(ledger, rng, made, step):
    kind = rng.choice(["decision", "decision", "note", "open", "bootstrap", "correction", "checkpoint"])
    # Some entries are back-dated, so a later append can sort before folded ones.
    ts = (T0 + timedelta(hours=step * 10 - rng.choice([0, 0, 0, 25]))).isoformat()
    if kind == "checkpoint":
        ledger.checkpoint(CheckpointDraft(rng.choice(["a", "b"]), {"next": [f"step {step}"]}))
        return
    parents = []
    if made and (kind == "correction" or rng.random() < 0.2):
        parents = [rng.choice(made)]
    if kind == "correction" and not parents:
        kind = "note"
    when = T0 + timedelta(hours=step * 10 - rng.choice([0, 0, 0, 25]))
    for p in parents:  # a child is written after what it names (the write refuses it otherwise)
        when = max(when, ledger.show(p).ts)
    ts = when.isoformat()
    body = f"why {step}"
    if kind == "correction" and rng.random() < 0.3:
        body = "action: revert\n\n" + body
    e = ledger.log(Draft(kind=kind, summary=f"{kind} number {step}", body=body, parents=parents, ts=ts)).entry
    made.append(e.id)


def test_incremental_cache_equals_a_full_rebuild_after_every_append(ledger):
    rng = random.Random(7)
    made: list = []
    for step in range(60):
        random_step(ledger, rng, made, step)
        assert truth_signature(ledger.state()) == truth_signature(full_rebuild(ledger)), step


def test_deleting_the_cache_loses_nothing(ledger):
    rng = random.Random(3)
    made: list = []
    for step in range(20):
        random_step(ledger, rng, made, step)
    before = ledger.context().text
    ledger.cache().close()
    for f in ledger.gr.lifeline_dir().iterdir():
        f.unlink()
    again = open_ledger(ledger.gr.workdir)
    assert again.context().text == before


def test_a_corrupt_cache_file_is_detected_and_rebuilt(ledger):
    ledger.log(Draft(kind="decision", summary="Keep it", body="because"))
    before = ledger.context().text
    path = ledger.cache().path
    ledger.cache().close()
    for suffix in ("-wal", "-shm"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            p.unlink()
    path.write_bytes(b"this is not a database" * 100)
    fresh = open_ledger(ledger.gr.workdir)
    assert fresh.context().text == before
    assert any("rebuilt" in w for w in fresh.cache().warnings)


def test_a_torn_fold_in_the_cache_is_recomputed_not_served(ledger):
    ledger.log(Draft(kind="decision", summary="Keep it", body="because"))
    db = ledger.cache().ensure(ledger.head())
    db.execute("UPDATE meta SET value='{\"garbage\": 1}' WHERE key='fold'")
    fresh = open_ledger(ledger.gr.workdir)
    assert [d.summary for d in fresh.state().decisions] == ["Keep it"]


def test_a_rewound_line_rebuilds_the_cache_with_a_warning(ledger):
    ledger.log(Draft(kind="decision", summary="First", body="one"))
    first = ledger.head()
    ledger.log(Draft(kind="decision", summary="Second", body="two"))
    ledger.state()  # cache now holds both
    git(ledger.gr.workdir, "update-ref", "refs/lifeline/main", first)
    fresh = open_ledger(ledger.gr.workdir)
    assert [d.summary for d in fresh.state().decisions] == ["First"]
    assert any("lost entries" in w for w in fresh.cache().warnings)


def test_a_merge_that_picks_the_other_blob_of_an_id_updates_the_cache(ledger):
    e = ledger.log(Draft(kind="decision", summary="Same content", body="why", ts="2025-05-02T00:00:00Z")).entry
    ledger.state()
    # Rewrite the blob with an earlier ts (what a merge keeps), as a new commit.
    import json

    import pygit2

    repo = ledger.gr.repo
    doc = json.loads(e.to_json())
    doc["ts"] = "2025-05-01T00:00:00.000000Z"
    blob = repo.create_blob(
        (json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    )
    base = ledger.store.tree(ledger.head())
    tree = ledger.store.root_tree(ledger.store.insert(base, {e.id: blob}))
    sig = pygit2.Signature("t", "t@e", 0, 0)
    commit = repo.create_commit(None, sig, sig, "merge-like", tree, [pygit2.Oid(hex=ledger.head())])
    assert ledger.store.move_ref(ledger.head(), str(commit), "test")
    st = open_ledger(ledger.gr.workdir).state()
    assert st.get(e.id).ts.day == 1


def test_concurrent_readers_and_writers_never_see_a_torn_state(repo):
    ledger = open_ledger(repo)
    ledger.log(Draft(kind="bootstrap", summary="Concurrency", body="test"))
    env = subprocess_env()
    writer = (
        "import sys\nfrom git_lifeline.app.draft import Draft\nfrom git_lifeline.app.workspace import Workspace\nl = Workspace.open().ledger()\n"
        "for i in range(15):\n"
        "    l.log(Draft(kind='decision', summary=f'w{sys.argv[1]} d{i}', body='why'))\n"
    )
    reader = (
        "from git_lifeline.app.workspace import Workspace\n"
        "for i in range(15):\n"
        "    l = Workspace.open().ledger()\n"
        "    st = l.state()\n"
        "    assert st.count >= 1 and len(st.recent_ids) == min(5, st.count)\n"
        "    assert all(st.get(d) is not None for d in st.decision_ids)\n"
        "    l.context(budget=2000)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(n)], cwd=repo, env=env) for n in range(3)]
    procs += [subprocess.Popen([sys.executable, "-c", reader], cwd=repo, env=env) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    final = open_ledger(repo)
    assert final.state().count == 46
    assert truth_signature(final.state()) == truth_signature(full_rebuild(final))
    assert cli(repo, "verify").code == 0


def schema_6_seal(tree: str, count: int, rows: int, fold: str) -> str:
    """The seal as schema 6 and 7 made it: over the whole fold text."""
    return hashlib.sha256(f"6\0{tree}\0{count}\0{rows:016x}\0{fold}".encode()).hexdigest()


def test_a_cache_of_the_previous_format_is_rebuilt_not_misread(ledger):
    """A cache the previous release wrote (schema 6: the fold with every id spelled out,
    FOLD_VERSION 4), sealed and stamped as that release left it, is replaced and rebuilt:
    never read as if it were of this format, never served. Its fold here is one made
    before the revision was appended, so serving it would show the revised decision."""
    d = ledger.log(Draft(kind="decision", summary="Use SQLite", body="because")).entry
    c = ledger.log(Draft(kind="correction", summary="Use Postgres", body="scale", parents=[d.id])).entry
    assert ledger.state().decision_ids == [c.id]
    path = ledger.cache().path
    ledger.cache().close()
    old = truth.fold([d])  # what the previous format would have said before the revision
    doc = {k: v for k, v in old.__dict__.items() if not k.startswith("_")}
    doc["version"] = 4
    doc["derived"] = {
        "superseded": sorted(old.derived.superseded),
        "live": list(old.derived.live),
        "subjects": old.derived.subjects,
        "lineages": old.derived.lineages,
    }
    text = json.dumps(doc)
    db = sqlite3.connect(str(path), isolation_level=None)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    seal = schema_6_seal(meta["tree"], count, int(meta["rows"], 16), text)
    db.executemany("UPDATE meta SET value=? WHERE key=?", [("6", "version"), (text, "fold"), (seal, "seal")])
    db.execute("DELETE FROM meta WHERE key IN ('fold_sum', 'journal')")  # schema 6 had neither
    db.close()
    cache_check.write_stamp(path, seal)

    fresh = open_ledger(ledger.gr.workdir)
    assert fresh.state().decision_ids == [c.id]
    assert fresh.state().superseded == frozenset({d.id})
    fresh.cache().close()
    db = sqlite3.connect(str(path))
    meta = dict(db.execute("SELECT key, value FROM meta"))
    db.close()
    assert meta["version"] == SCHEMA_VERSION != "6"
    assert fold_text.read(truth.Fold, meta["fold"]).derived.live == (c.id,)
