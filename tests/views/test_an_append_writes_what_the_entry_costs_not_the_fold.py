"""An append to the cache writes the new entries to the fold's journal and leaves its base
as it was (views/cache_rows.py): what it costs is the entries', not the line's. What is
read back (base + journal) is exactly what a cold build gives, a journal past its limit is
folded into a new base, and a base or journal that does not match the seal is rebuilt,
never served."""

from __future__ import annotations

import sqlite3

from kit.repos import open_ledger
from kit.truth_reference import truth_signature

from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.core import fold_text, truth
from git_lifeline.views import cache_check, cache_rows


def meta(ledger) -> dict:
    db = sqlite3.connect(str(ledger.cache().path))
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def read_fresh(ledger) -> truth.State:
    """The truth as another process reads it from the file (not the fold this one holds)."""
    return open_ledger(ledger.gr.workdir).state()


def cold(ledger) -> truth.State:
    return truth.reduce(ledger.store.load().entries.values())


def test_an_append_leaves_the_base_as_it_was_and_reads_back_as_a_cold_build(ledger):
    d = ledger.log(Draft(kind="decision", summary="Use SQLite", body="subject: datastore\n\nsmall")).entry
    ledger.state()
    base = meta(ledger)["fold"]
    assert meta(ledger)["journal"] == ""
    drafts = [
        Draft(kind="note", summary="A note", body="noted", parents=[d.id]),
        Draft(kind="decision", summary="Use Postgres for reports", body="subject: reporting\n\nscale"),
        Draft(kind="open", summary="Which queue?", body="not decided"),
        Draft(kind="decision", summary="Use Redis", body="fast"),
    ]
    for step, draft in enumerate(drafts):
        e = ledger.log(draft).entry
        ledger.state()  # each append folded as the next command would fold it
        assert meta(ledger)["journal"].splitlines()[-1] == e.id, step
    ledger.checkpoint(CheckpointDraft("a", {"next": ["go on"]}))
    ledger.state()
    after = meta(ledger)
    assert after["fold"] == base, "an append rewrote the whole fold"
    assert len(after["journal"].splitlines()) == 5
    assert truth_signature(read_fresh(ledger)) == truth_signature(cold(ledger))


def test_a_correction_writes_the_base_whole_so_no_read_derives_the_graph_again(ledger):
    d = ledger.log(Draft(kind="decision", summary="Use SQLite", body="small")).entry
    ledger.state()
    ledger.log(Draft(kind="note", summary="A note", body="noted"))
    ledger.state()
    base = meta(ledger)["fold"]
    ledger.log(Draft(kind="correction", summary="Use SQLite 3.45", body="pinned", parents=[d.id]))
    ledger.state()
    after = meta(ledger)
    assert after["fold"] != base and after["journal"] == ""
    read = open_ledger(ledger.gr.workdir).cache()
    sealed = cache_check.read_sealed(read.open(), cache_rows.SCHEMA_VERSION)
    assert sealed is not None
    f = cache_rows.read_fold(read.open(), sealed)
    assert f is not None and f.derived_kept and f.derived.live == (f.corrections[0][0],)
    read.close()


def test_a_journal_past_its_limit_is_folded_into_a_new_base(ledger):
    ledger.log(Draft(kind="decision", summary="First", body="one"))
    ledger.state()
    base = meta(ledger)["fold"]
    limit = cache_rows.journal_limit(1)
    for i in range(limit + 1):
        ledger.log(Draft(kind="note", summary=f"Note {i}", body=f"why {i}"))
        ledger.state()
    after = meta(ledger)
    assert after["fold"] != base and len(after["journal"].splitlines()) < limit
    assert truth_signature(read_fresh(ledger)) == truth_signature(cold(ledger))


def test_a_base_that_no_longer_matches_its_sum_is_rebuilt_not_served(ledger):
    d = ledger.log(Draft(kind="decision", summary="Keep it", body="because")).entry
    ledger.state()
    ledger.log(Draft(kind="correction", summary="Keep it, revised", body="better", parents=[d.id]))
    ledger.state()
    path = ledger.cache().path
    ledger.cache().close()
    db = sqlite3.connect(str(path), isolation_level=None)
    # a base of the empty line under the same journal: served, the decision would be gone
    db.execute("UPDATE meta SET value=? WHERE key='fold'", (fold_text.text_of(truth.Fold()),))
    seal = db.execute("SELECT value FROM meta WHERE key='seal'").fetchone()[0]
    db.close()
    cache_check.write_stamp(path, seal)  # only the sum is left to tell

    fresh = open_ledger(ledger.gr.workdir)
    assert [e.summary for e in fresh.state().decisions] == ["Keep it, revised"]
    assert any("rebuilt" in w for w in fresh.cache().warnings), fresh.cache().warnings


def test_a_journal_that_names_a_row_the_file_lacks_is_rebuilt_not_served(ledger):
    ledger.log(Draft(kind="decision", summary="Keep it", body="because"))
    ledger.state()
    ledger.log(Draft(kind="note", summary="Noted", body="n"))
    ledger.state()
    path = ledger.cache().path
    ledger.cache().close()
    db = sqlite3.connect(str(path), isolation_level=None)
    m = dict(db.execute("SELECT key, value FROM meta"))
    count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    journal = m["journal"] + "ab" * 32 + "\n"
    seal = cache_check.make_seal(
        m["version"], m["tree"], count, int(m["rows"], 16), m["standing_sum"], m["fold_sum"], journal
    )
    db.executemany("UPDATE meta SET value=? WHERE key=?", [(journal, "journal"), (seal, "seal")])
    db.close()
    cache_check.write_stamp(path, seal)  # a forged seal: only the rows can tell

    fresh = open_ledger(ledger.gr.workdir)
    assert fresh.state().count == 2
    assert any("rebuilt" in w for w in fresh.cache().warnings), fresh.cache().warnings
