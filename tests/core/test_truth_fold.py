"""The truth fold (docs/FORMAT.md §9): revisions stay revised, only reverts restore,
no invented decisions, conflicts only where the ledger says two decisions are about
the same thing, a fold linear in the ledger and equal to the plain reference whatever
the shape of the graph or the order entries arrive in."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit.truth_reference import ident, order, rec, reference, snapshot

from git_lifeline.core import fold_text, truth
from git_lifeline.core.supersession import derive

NOW = "2026-06-01T00:00:00.000000"


def state_of(entries: list) -> truth.State:
    return truth.State(truth.fold(entries), {e.id: e for e in entries}.get, now=NOW)


def in_force(entries: list) -> list:
    return state_of(entries).decision_ids


def revert(body: str = "Withdrawn.") -> str:
    return "action: revert\n\n" + body


def ids(*names: str) -> list:
    return [ident(n) for n in names]


# ---- revisions and reverts ------------------------------------------------------
def test_revising_a_revision_never_resurrects_the_original():
    ledger = [
        rec("D", "decision", summary="Use MongoDB"),
        rec("C1", "correction", ["D"], summary="Use PostgreSQL", minute=1),
        rec("C2", "correction", ["C1"], summary="Use PostgreSQL 16", minute=2),
    ]
    assert in_force(ledger) == ids("C2")


def test_a_chain_of_a_hundred_revisions_leaves_exactly_the_last_in_force():
    ledger = [rec("r0", "decision")] + [rec(f"r{i}", "correction", [f"r{i - 1}"], minute=i) for i in range(1, 101)]
    st = state_of(ledger)
    assert st.decision_ids == ids("r100")
    assert st.conflicts == []


def test_reverting_the_head_of_a_chain_restores_the_revision_before_it_as_it_stood():
    ledger = [
        rec("D", "decision"),
        rec("C1", "correction", ["D"], minute=1),
        rec("C2", "correction", ["C1"], minute=2),
        rec("R", "correction", ["C2"], revert(), minute=3),
    ]
    assert in_force(ledger) == ids("C1")


def test_reverting_a_revision_restores_the_decision_it_replaced():
    ledger = [
        rec("D", "decision"),
        rec("C", "correction", ["D"], minute=1),
        rec("R", "correction", ["C"], revert(), minute=2),
    ]
    st = state_of(ledger)
    assert st.decision_ids == ids("D")
    assert ident("C") in st.superseded and ident("D") not in st.superseded


def test_reverting_a_revert_restores_and_a_third_revert_withdraws_again():
    d = rec("D", "decision")
    r1 = rec("R1", "correction", ["D"], revert(), minute=1)
    r2 = rec("R2", "correction", ["R1"], revert(), minute=2)
    r3 = rec("R3", "correction", ["R2"], revert(), minute=3)
    assert in_force([d, r1]) == []
    assert in_force([d, r1, r2]) == ids("D")
    assert in_force([d, r1, r2, r3]) == []


def test_reverting_a_revert_of_a_revision_brings_the_revision_back_not_the_original():
    ledger = [
        rec("D", "decision"),
        rec("C", "correction", ["D"], minute=1),
        rec("R1", "correction", ["C"], revert(), minute=2),
        rec("R2", "correction", ["R1"], revert(), minute=3),
    ]
    assert in_force(ledger) == ids("C")


def test_revising_a_revert_keeps_what_it_withdrew_withdrawn_and_invents_no_decision():
    ledger = [
        rec("D", "decision"),
        rec("R", "correction", ["D"], revert(), minute=1),
        rec("C", "correction", ["R"], "Reworded: no cache for now.", minute=2),
    ]
    st = state_of(ledger)
    assert st.decision_ids == []
    assert ident("R") in st.superseded and ident("D") in st.superseded


@pytest.mark.parametrize(
    "kind,body",
    [
        ("open", "Which queue?"),
        ("checkpoint", "thread: api\nnext:\n  - x"),
        ("bootstrap", "What it is."),
        ("note", "A remark."),
    ],
)
@pytest.mark.parametrize("how", ["revise", "revert"])
def test_a_correction_of_anything_but_a_decision_never_invents_one(kind, body, how):
    target = rec("X", kind, body=body)
    fix = rec("C", "correction", ["X"], revert() if how == "revert" else "Closed.", minute=1)
    again = rec("C2", "correction", ["C"], "Reworded.", minute=2)
    st = state_of([target, fix, again])
    assert st.decision_ids == [] and ident("X") in st.superseded


def test_unpinning_by_a_correction_never_invents_a_decision():
    d = rec("D", "decision")
    pin = rec("P", "note", ["D"], f"pin: {ident('D')}\n\nFoundational.", minute=1)
    unpin = rec("U", "correction", ["P"], "Not foundational after all.", minute=2)
    assert state_of([d, pin]).pinned == ids("D")
    st = state_of([d, pin, unpin])
    assert st.pinned == [] and st.decision_ids == ids("D")


def test_a_correction_with_several_parents_replaces_all_and_its_revert_restores_all():
    a, b = rec("A", "decision"), rec("B", "decision", minute=1)
    merged = rec("M", "correction", ["A", "B"], "One datastore for both.", minute=2)
    assert in_force([a, b, merged]) == ids("M")
    undo = rec("R", "correction", ["M"], revert(), minute=3)
    st = state_of([a, b, merged, undo])
    assert st.decision_ids == ids("A", "B")
    assert st.conflicts == []  # two independent decisions, merged then unmerged: not versions of one


def test_a_parent_that_sorts_after_its_child_still_counts():
    """`ts` is not hashed and clocks skew: a correction can carry an earlier ts than
    the decision it replaces."""
    ledger = [
        rec("D", "decision", minute=10),
        rec("C", "correction", ["D"], minute=5),
        rec("C2", "correction", ["C"], minute=1),
    ]
    assert in_force(ledger) == ids("C2")


def test_a_parent_never_seen_names_nothing():
    ledger = [rec("C", "correction", ["missing"], minute=1), rec("D", "decision", minute=2)]
    assert in_force(ledger) == ids("D")


def test_a_cycle_in_a_forged_entry_set_is_decided_not_looped():
    """Content addressing rules cycles out; a forged set may still hold them."""
    ledger = [
        rec("D", "decision"),
        rec("R1", "correction", ["R2", "D"], revert(), minute=1),
        rec("R2", "correction", ["R1"], revert(), minute=2),
        rec("S", "correction", ["S"], revert(), minute=3),
        rec("C1", "correction", ["D", "C2"], minute=4),
        rec("C2", "correction", ["C1"], minute=5),
    ]
    first = snapshot(state_of(ledger))
    assert first == reference(ledger)
    assert snapshot(state_of(list(reversed(ledger)))) == first


# ---- conflicts -------------------------------------------------------------------
def decision(name: str, summary: str, subject=None, minute: int = 0):
    body = (f"subject: {subject}\n\n" if subject is not None else "") + "Because."
    return rec(name, "decision", body=body, summary=summary, minute=minute)


def test_a_shared_word_before_a_colon_is_not_a_conflict():
    st = state_of([decision("a", "Backend: written in Go"), decision("b", "Backend: structured JSON logs", minute=1)])
    assert len(st.decision_ids) == 2 and st.conflicts == [] and st.conflicting() == {}


def test_two_decisions_declaring_one_subject_conflict():
    a, b = decision("a", "Use MongoDB", "Datastore"), decision("b", "Use PostgreSQL", "datastore", minute=1)
    st = state_of([a, b])
    assert st.conflicts == [("datastore", [a.id, b.id])]
    assert {i: (r.first(8), r.count) for i, r in st.conflicting().items()} == {a.id: ([b.id], 1), b.id: ([a.id], 1)}
    assert [g.subject for g in st.conflicts_of(a.id)] == ["datastore"]


@pytest.mark.parametrize(
    "disguised",
    [
        "data\u200bbase",
        "data\u200dbase",
        "\ufeffdatabase",
        "data\u00adbase",
        "database\u2060",
        "da\u200e\u202etabase",
        "database\ufe0f",
    ],
)
def test_zero_width_characters_do_not_hide_a_conflict(disguised):
    st = state_of([decision("a", "Use MongoDB", "database"), decision("b", "Use PostgreSQL", disguised, minute=1)])
    assert [label for label, _ in st.conflicts] == ["database"]


@pytest.mark.parametrize(
    "plain,disguised",
    [
        ("database", "d\u0430t\u0430b\u0430s\u0435"),  # Cyrillic a, e
        ("DATABASE", "D\u0410T\u0391B\u0410S\u0415"),  # Cyrillic A, E and Greek Alpha, capitals
        ("storage", "st\u03bfrage"),  # Greek omicron
        ("Postgres", "\u0420\u043estgr\u0435s"),  # Cyrillic Er, o, e
        ("caché", "\u0441ach\u0435\u0301"),  # Cyrillic c, and e with a combining accent
        ("database", "\uff24\uff21\uff34\uff21\uff22\uff21\uff33\uff25"),  # fullwidth
        ("database", "\U0001d41d\U0001d41a\U0001d42d\U0001d41a\U0001d41b\U0001d41a\U0001d42c\U0001d41e"),  # bold
        ("database", "DataBase"),
    ],
)
def test_look_alike_letters_do_not_hide_a_conflict(plain, disguised):
    st = state_of([decision("a", "Use MongoDB", plain), decision("b", "Use PostgreSQL", disguised, minute=1)])
    assert len(st.conflicts) == 1 and st.conflicts[0][1] == ids("a", "b")


def test_a_cyrillic_capital_drawn_like_a_latin_one_names_the_same_subject():
    st = state_of([decision("a", "x", "DB"), decision("b", "y", "DВ", minute=1)])  # Cyrillic В
    assert len(st.conflicts) == 1


def test_different_subjects_are_not_a_conflict():
    st = state_of(
        [
            decision("a", "Database: MongoDB", "database"),
            decision("b", "Cache: Redis", "cache", minute=1),
            decision("c", "Data base", "data base", minute=2),
        ]
    )
    assert st.conflicts == []


def test_a_revision_keeps_the_subject_of_what_it_revises():
    a, b = decision("a", "Use MongoDB", "database"), decision("b", "Use SQLite", "database", minute=1)
    fix = rec("c", "correction", ["a"], "Audit needs ACID.", summary="Use PostgreSQL", minute=2)
    st = state_of([a, b, fix])
    assert st.conflicts == [("database", [b.id, fix.id])]


def test_a_revision_that_declares_another_subject_leaves_the_old_one():
    a, b = decision("a", "Use MongoDB", "database"), decision("b", "Use SQLite", "database", minute=1)
    fix = rec("c", "correction", ["a"], "subject: cache\n\nWe meant the cache.", minute=2)
    assert state_of([a, b, fix]).conflicts == []


def test_two_clones_revising_one_decision_apart_show_as_versions_of_it():
    d = decision("D", "Use MongoDB")
    mine = rec("C1", "correction", ["D"], "Postgres.", summary="Use PostgreSQL", minute=1)
    theirs = rec("C2", "correction", ["D"], "SQLite.", summary="Use SQLite", minute=2)
    st = state_of([d, mine, theirs])
    assert st.decision_ids == [mine.id, theirs.id]
    assert st.conflicts == [(f"versions of {d.id[:8]}", [mine.id, theirs.id])]
    assert st.conflicts_of(mine.id)[0].versions_of == d.id


def test_reverting_a_revision_that_was_revised_further_shows_both_survivors_as_versions():
    ledger = [
        rec("D", "decision"),
        rec("C1", "correction", ["D"], minute=1),
        rec("C2", "correction", ["C1"], minute=2),
        rec("R", "correction", ["C1"], revert(), minute=3),
    ]
    st = state_of(ledger)
    assert st.decision_ids == ids("D", "C2")
    assert [g.versions_of for g in st.conflict_groups] == ids("D")


def test_versions_already_told_by_their_subject_are_listed_once():
    d = decision("D", "Use MongoDB", "database")
    c1 = rec("C1", "correction", ["D"], "Postgres.", minute=1)
    c2 = rec("C2", "correction", ["D"], "SQLite.", minute=2)
    assert state_of([d, c1, c2]).conflicts == [("database", [c1.id, c2.id])]


def test_an_expired_decision_is_no_longer_in_conflict():
    a = rec("a", "decision", body="subject: freeze\nvalid-until: 2026-02-01\n\nQ1.")
    b = rec("b", "decision", body="subject: freeze\n\nAlways.", minute=1)
    assert state_of([a, b]).conflicts == []


# ---- order, the cache's fold, and the reference ----------------------------------
SUBJECTS = [None, None, "database", "Database", "data\u200bbase", "dаtabase", "cache", "ＣＡＣＨＥ"]
KINDS = ["decision", "decision", "revise", "revise", "revise", "revert", "revert", "open", "note", "bootstrap", "pin"]


@st.composite
def ledgers(draw):
    """Random entry sets: chains, reverts, revisions of revisions, reverts of reverts,
    several parents, corrections of non-decisions, skewed clocks (ts in any order),
    and now and then a forged shape (a parent named before it exists, a cycle)."""
    n = draw(st.integers(1, 28))
    forged = draw(st.booleans()) and draw(st.booleans())
    out = []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        pool = list(range(n)) if forged else list(range(i))
        parents = sorted(set(draw(st.lists(st.sampled_from(pool), max_size=3)))) if pool else []
        if kind in ("revise", "revert") and not parents:
            kind = "decision"
        subject = draw(st.sampled_from(SUBJECTS))
        header = ""
        if kind == "revert":
            header = "action: revert\n"
        elif kind == "pin" and parents:
            header = f"pin: {ident(f'e{parents[0]}')}\n"
        if subject is not None and kind in ("decision", "revise"):
            header += f"subject: {subject}\n"
        real = {"revise": "correction", "revert": "correction", "pin": "note"}.get(kind, kind)
        out.append(
            rec(f"e{i}", real, [f"e{p}" for p in parents], header + "\nBecause.", minute=draw(st.integers(0, 12)))
        )
    return out


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(ledgers())
def test_the_fold_equals_the_reference_on_any_ledger(entries):
    assert snapshot(state_of(entries)) == reference(entries)


@FAST
@given(ledgers(), st.randoms(use_true_random=False))
def test_the_order_entries_are_added_in_does_not_change_the_truth(entries, rnd):
    shuffled = list(entries)
    rnd.shuffle(shuffled)
    f = truth.Fold()
    for e in shuffled:
        f.add(e)
    st_any = truth.State(f, {e.id: e for e in entries}.get, now=NOW)
    want = reference(entries)
    got = snapshot(st_any)
    assert (got["decisions"], got["superseded"], got["conflicts"]) == (
        want["decisions"],
        want["superseded"],
        want["conflicts"],
    )
    assert sorted(got["opens"]) == sorted(want["opens"])


@FAST
@given(ledgers(), st.integers(0, 28))
def test_a_cached_fold_extended_by_an_append_equals_a_cold_fold(entries, cut):
    """What the cache does: fold, store as JSON, load, fold what an append adds."""
    ordered = sorted(entries, key=order)
    cut = min(cut, len(ordered))
    cached = truth.Fold()
    for e in ordered[:cut]:
        cached.add(e)
    loaded = truth.Fold.from_json(json.loads(json.dumps(cached.to_json())))
    assert loaded.accepts_after(ordered[cut:])
    for e in ordered[cut:]:
        loaded.add(e)
    cold = truth.fold(entries)
    assert json.loads(json.dumps(loaded.to_json())) == json.loads(json.dumps(cold.to_json()))


@FAST
@given(ledgers(), st.randoms(use_true_random=False))
def test_a_derived_truth_kept_across_an_append_is_the_one_derived_afresh(entries, rnd):
    """Folding a decision onto a fold whose truth is derived keeps that truth, extended
    (supersession.with_decision), instead of deriving it again: after every add, in any
    order (a decision that sorts early, one a correction already names, one whose subject
    another declares), it must be exactly what deriving from scratch gives."""
    shuffled = list(entries)
    if rnd.random() < 0.5:
        rnd.shuffle(shuffled)
    else:
        shuffled.sort(key=order)
    f = truth.Fold()
    for e in shuffled:
        assert f.derived is not None  # derived before each add: what the cache holds when an append comes
        f.add(e)
        assert f.derived == derive(f.decisions, f.corrections, f.facts)


def test_a_fold_stored_by_an_older_version_is_refused_so_the_cache_refolds():
    doc = truth.fold([rec("D", "decision")]).to_json()
    doc["version"] = 2
    with pytest.raises(ValueError):
        truth.Fold.from_json(doc)


def test_a_fold_stored_with_a_damaged_derived_part_is_refused():
    doc = truth.fold([rec("D", "decision")]).to_json()
    del doc["derived"]["live"]
    with pytest.raises(ValueError):
        truth.Fold.from_json(doc)


# ---- cost -------------------------------------------------------------------------
def test_folding_ten_thousand_revisions_is_linear_not_cubic():
    """The per-entry fixpoint took 29 s for 800 revisions; linear work takes well under
    a second for 10,000 here. The bound leaves room for a loaded machine."""
    chain = [rec("r0", "decision")] + [rec(f"r{i}", "correction", [f"r{i - 1}"], minute=i) for i in range(1, 10_001)]
    pairs = []
    for i in range(10_000):
        pairs += [rec(f"d{i}", "decision", minute=i), rec(f"c{i}", "correction", [f"d{i}"], minute=i + 1)]
    random.Random(1).shuffle(pairs)
    start = time.perf_counter()
    assert state_of(chain).decision_ids == ids("r10000")
    assert len(state_of(pairs).decision_ids) == 10_000
    assert time.perf_counter() - start < 20


def test_a_stored_fold_gives_back_every_id_and_its_truth():
    """The cache's text of a fold names ids by index into a packed table: read back, it
    is the same fold (ids, facts, what is in force and superseded), so the cache serves
    the truth it stored."""
    d = rec("D", "decision", body="subject: storage\n\nwhy")
    c = rec("C", "correction", ["D"], body="because", minute=1)
    r = rec("R", "correction", ["C"], body="action: revert\n\nno", minute=2)
    o = rec("O", "open", minute=3)
    n = rec("N", "note", ["D"], body=f"thread: {o.id[:8]}\n\nworking", minute=4)
    cold = truth.fold([d, c, r, o, n])
    text = fold_text.text_of(cold)
    assert d.id not in text  # every id is in the packed table, none spelled out
    loaded = fold_text.read(truth.Fold, text)
    assert loaded.to_json() == cold.to_json()
    assert loaded.derived == cold.derived
    assert loaded.superseded == frozenset({c.id}) and loaded.derived.live == (d.id,)
    assert loaded.threads == {o.id: [n.id]} and loaded.facts == cold.facts


def test_a_fold_holding_an_id_that_is_not_hex_keeps_it_as_text():
    """Only 64-hex ids are packed; anything else a fold may be handed is stored as is."""
    d = rec("D", "decision")
    f = truth.fold([d])
    f.broken = ["not an id"]
    f.opens.append("x" * 64)
    loaded = fold_text.read(truth.Fold, fold_text.text_of(f))
    assert loaded.opens == ["x" * 64] and loaded.broken == ["not an id"] and loaded.decisions == [d.id]


def test_a_stored_fold_whose_table_is_damaged_is_refused():
    text = fold_text.text_of(truth.fold([rec("D", "decision")]))
    doc = json.loads(text)
    doc["ids"] = doc["ids"][:-4]  # a torn table: not whole ids
    with pytest.raises(ValueError):
        fold_text.read(truth.Fold, json.dumps(doc))
    doc = json.loads(text)
    doc["decisions"] = [5]  # an index past the table
    with pytest.raises(ValueError):
        fold_text.read(truth.Fold, json.dumps(doc))
