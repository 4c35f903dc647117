"""Truth that keeps itself honest: staleness from code history, conflicts, validity windows."""

from __future__ import annotations

import json

import pytest
from kit.repos import code_commit, open_ledger
from kit.run import cli, git

from git_lifeline.app.draft import Draft


@pytest.fixture
def code_repo(repo):
    code_commit(repo, "src/db/schema.sql", 5, "2026-01-01T10:00:00Z", "initial schema")
    code_commit(repo, "src/api/app.py", 5, "2026-01-01T11:00:00Z", "initial api")
    return repo


def decide(ledger, summary, body, ts, parents=()):
    return ledger.log(Draft(kind="decision", summary=summary, body=body, ts=ts, parents=list(parents))).entry


def test_a_decision_whose_code_changed_is_marked_stale_with_commits_and_churn(code_repo):
    ledger = open_ledger(code_repo)
    d = decide(ledger, "Database: PostgreSQL", "paths: src/db/**\n\nACID for audit.", "2026-01-02T00:00:00Z")
    code_commit(code_repo, "src/db/schema.sql", 10, "2026-01-05T00:00:00Z", "add invoices")
    code_commit(code_repo, "src/db/migrate.sql", 4, "2026-01-06T00:00:00Z", "migration")
    code_commit(code_repo, "src/api/app.py", 50, "2026-01-07T00:00:00Z", "unrelated api work")
    found = ledger.stale()
    assert [s.decision for s in found] == [d.id]
    assert len(found[0].commits) == 2 and found[0].lines == 14
    text = ledger.context().text
    assert "⚠ code changed since: 2 commits, 14 lines in src/db/" in text


def test_code_changed_before_the_decision_does_not_make_it_stale(code_repo):
    ledger = open_ledger(code_repo)
    decide(ledger, "API: REST", "paths: src/api/\n\nSimple clients.", "2026-03-01T00:00:00Z")
    assert ledger.stale() == []
    assert "⚠ code changed" not in ledger.context().text


def test_stale_lists_the_most_changed_first_and_json_is_complete(code_repo):
    ledger = open_ledger(code_repo)
    a = decide(ledger, "Database: PostgreSQL", "paths: src/db/**\n\nACID.", "2026-01-02T00:00:00Z")
    b = decide(ledger, "API: REST", "paths: src/api/*.py\n\nSimple.", "2026-01-02T00:00:01Z")
    code_commit(code_repo, "src/db/schema.sql", 3, "2026-01-05T00:00:00Z", "db1")
    code_commit(code_repo, "src/api/app.py", 2, "2026-01-05T01:00:00Z", "api1")
    code_commit(code_repo, "src/api/app.py", 2, "2026-01-05T02:00:00Z", "api2")
    rows = json.loads(cli(code_repo, "stale", "--json").out)
    assert [r["id"] for r in rows] == [b.id, a.id]
    assert rows[0]["lines"] == 4 and len(rows[0]["commits"]) == 2


def test_a_correction_clears_the_stale_mark(code_repo):
    ledger = open_ledger(code_repo)
    d = decide(ledger, "Database: PostgreSQL", "paths: src/db/**\n\nACID.", "2026-01-02T00:00:00Z")
    code_commit(code_repo, "src/db/schema.sql", 3, "2026-01-05T00:00:00Z", "db1")
    assert ledger.stale()
    ledger.log(
        Draft(
            kind="correction",
            summary="Database: PostgreSQL 16",
            body="paths: src/db/**\n\nUpgraded.",
            parents=[d.id],
            ts="2026-01-06T00:00:00Z",
        )
    )
    assert ledger.stale() == []


def test_rechecking_a_decision_clears_the_mark_until_the_code_changes_again(code_repo):
    ledger = open_ledger(code_repo)
    d = decide(ledger, "Database: PostgreSQL", "paths: src/db/**\n\nACID.", "2026-01-02T00:00:00Z")
    code_commit(code_repo, "src/db/schema.sql", 3, "2026-01-05T00:00:00Z", "db1")
    ledger.log(
        Draft(
            kind="note",
            summary="Re-checked the database decision",
            body="Still holds.",
            parents=[d.id],
            ts="2026-01-06T00:00:00Z",
        )
    )
    assert ledger.stale() == []
    code_commit(code_repo, "src/db/schema.sql", 1, "2026-01-07T00:00:00Z", "db2")
    assert [len(s.commits) for s in ledger.stale()] == [1]


def test_a_decision_anchored_to_a_commit_counts_only_commits_after_it(code_repo):
    ledger = open_ledger(code_repo)
    anchor = code_commit(code_repo, "src/db/schema.sql", 3, "2026-01-05T00:00:00Z", "db1")
    decide(ledger, "Database: PostgreSQL", f"paths: src/db/**\ncommit: {anchor}\n\nACID.", "2026-01-01T00:00:00Z")
    assert ledger.stale() == []
    code_commit(code_repo, "src/db/schema.sql", 2, "2026-01-08T00:00:00Z", "db2")
    assert [s.lines for s in ledger.stale()] == [2]


def test_stale_since_an_unknown_rev_is_an_error(code_repo):
    ledger = open_ledger(code_repo)
    decide(ledger, "Database: PostgreSQL", "paths: src/db/**\n\nACID.", "2026-01-02T00:00:00Z")
    r = cli(code_repo, "stale", "--since", "no-such-rev")
    assert r.code == 2 and "--since" in r.err


@pytest.mark.parametrize(
    "spec,path,hit",
    [
        ("src/db/**", "src/db/a/b.sql", True),
        ("src/db/**", "src/dbx/a.sql", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", True),
        (":(glob)src/*.py", "src/x/a.py", False),
        ("src/db", "src/db/schema.sql", True),
        ("src/db", "src/dbx/a.sql", False),
        ("**/*.sql", "a/b/c.sql", True),
        ("*.sql", "db/schema.sql", True),
        (":(glob)**/*.sql", "c.sql", True),
        ("/src/db", "src/db/x.sql", True),
    ],
)
def test_paths_are_git_pathspecs_matched_as_git_log_matches_them(code_repo, spec, path, hit):
    ledger = open_ledger(code_repo)
    decide(ledger, "Scope", f"paths: {spec}\n\nWhy.", "2026-01-02T00:00:00Z")
    code_commit(code_repo, path, 3, "2026-01-03T00:00:00Z", "touch")
    assert bool(ledger.stale()) is hit
    by_git = git(code_repo, "log", "--format=%s", "-1", "--", spec.lstrip("/")).strip() == "touch"
    assert by_git is hit  # the same verdict as git's own pathspec matching


def warned_with(text: str, other) -> bool:
    """The context's warning line under a decision names the other decision."""
    return any(ln.lstrip().startswith("⚠") and f"[{other.short}]" in ln for ln in text.splitlines())


def test_two_decisions_in_force_on_one_subject_are_a_conflict_everywhere(ledger):
    a = decide(ledger, "Database: MongoDB", "subject: database\n\nFlexible.", "2026-01-02T00:00:00Z")
    b = decide(ledger, "Database: PostgreSQL", "subject: database\n\nACID.", "2026-01-03T00:00:00Z")
    decide(ledger, "Queue: SQS", "subject: queue\n\nManaged.", "2026-01-04T00:00:00Z")
    st = ledger.state()
    assert st.conflicts == [("database", [a.id, b.id])]
    text = ledger.context().text
    assert warned_with(text, a) and warned_with(text, b)
    rows = json.loads(cli(ledger.gr.workdir, "conflicts", "--json").out)
    assert rows[0]["ids"] == [a.id, b.id]
    r = cli(ledger.gr.workdir, "verify", "--lint")
    assert r.code == 0 and "conflict on 'database'" in r.out


def test_an_explicit_subject_block_groups_decisions_with_different_prefixes(ledger):
    decide(ledger, "Use MongoDB", "subject: datastore\n\nFlexible.", "2026-01-02T00:00:00Z")
    decide(ledger, "Go with PostgreSQL", "subject: Datastore\n\nACID.", "2026-01-03T00:00:00Z")
    assert [s for s, _ in ledger.state().conflicts] == ["datastore"]


def test_a_correction_resolves_the_conflict_and_correcting_it_reopens_it(ledger):
    a = decide(ledger, "Database: MongoDB", "subject: database\n\nFlexible.", "2026-01-02T00:00:00Z")
    decide(ledger, "Database: PostgreSQL", "subject: database\n\nACID.", "2026-01-03T00:00:00Z")
    c = ledger.log(
        Draft(
            kind="correction",
            summary="Drop MongoDB",
            body="action: revert\n\nPostgres won.",
            parents=[a.id],
            ts="2026-01-04T00:00:00Z",
        )
    ).entry
    assert ledger.state().conflicts == []
    ledger.log(
        Draft(
            kind="correction",
            summary="Undo: MongoDB is back",
            body="action: revert\n\nReopened.",
            parents=[c.id],
            ts="2026-01-05T00:00:00Z",
        )
    )
    assert len(ledger.state().conflicts) == 1


def test_merged_clones_that_decided_differently_surface_the_conflict(tmp_path, repo):
    """Two clones decide the same subject apart; after the ledgers meet, both are in force
    and the conflict shows (whatever merges them: here, the union of both entry sets)."""
    from kit.repos import init_repo

    other = init_repo(tmp_path / "other")
    a = decide(open_ledger(repo), "Cache: Redis", "subject: cache\n\nFast.", "2026-01-02T00:00:00Z")
    b = decide(open_ledger(other), "Cache: Memcached", "subject: cache\n\nSimple.", "2026-01-02T00:00:05Z")
    mine = open_ledger(repo)
    mine.store.append([open_ledger(other).store.read(b.id)], lambda es: "union of a clone's entries\n")
    assert mine.state().conflicts == [("cache", [a.id, b.id])]  # in (ts, id) order


def test_a_decision_leaves_the_truth_when_its_window_closes_and_shows_as_expired(ledger):
    d = decide(ledger, "Deploy freeze", "valid-until: 2026-12-15\n\nEnd of year.", "2026-12-01T00:00:00Z")
    from git_lifeline.core import truth

    st = truth.State(ledger.state().fold, ledger.state().get, now="2026-12-16T00:00:00.000000")
    assert st.decision_ids == [] and st.expired == [d.id]
    st = truth.State(ledger.state().fold, ledger.state().get, now="2026-12-15T12:00:00.000000")
    assert st.decision_ids == [d.id]


def test_expired_decisions_show_under_recent_in_the_context(ledger):
    decide(ledger, "Deploy freeze", "valid-until: 2020-01-31\n\nOld freeze.", "2020-01-01T00:00:00Z")
    text = ledger.context().text
    assert "## Decisions in force" not in text
    assert "_(expired 2020-01-31)_" in text.split("## Recent", 1)[1]


def test_a_decision_before_its_valid_from_is_not_yet_in_force(ledger):
    decide(ledger, "New pricing", "valid-from: 2999-01-01\n\nFuture.", "2026-01-01T00:00:00Z")
    assert ledger.state().decision_ids == []


def test_as_of_february_returns_what_was_valid_then_even_if_it_expired_or_was_superseded_later(ledger):
    freeze = decide(ledger, "Deploy freeze", "valid-until: 2026-03-01\n\nQ1 freeze.", "2026-02-01T00:00:00Z")
    db = decide(ledger, "Database: MongoDB", "Flexible.", "2026-02-02T00:00:00Z")
    ledger.log(
        Draft(
            kind="correction", summary="Database: PostgreSQL", body="ACID.", parents=[db.id], ts="2026-04-10T00:00:00Z"
        )
    )
    feb = ledger.context(as_of="2026-02-20").text.split("## Decisions in force", 1)[1]
    assert freeze.short in feb and db.short in feb and "PostgreSQL" not in feb
    now = ledger.context().text
    assert "Deploy freeze" not in now.split("## Recent")[0]


def test_a_shared_word_before_a_colon_is_not_a_conflict_in_the_context_or_the_cli(ledger):
    decide(ledger, "Backend: written in Go", "Team knows it.", "2026-01-02T00:00:00Z")
    decide(ledger, "Backend: structured JSON logs", "Searchable.", "2026-01-03T00:00:00Z")
    assert ledger.state().conflicts == []
    assert "⚠" not in ledger.context().text
    assert json.loads(cli(ledger.gr.workdir, "conflicts", "--json").out) == []


def test_revising_a_revision_never_resurrects_the_original_in_the_context(ledger):
    d = decide(ledger, "Use MongoDB", "Flexible.", "2026-01-02T00:00:00Z")
    c1 = ledger.log(
        Draft(kind="correction", summary="Use PostgreSQL", body="ACID.", parents=[d.id], ts="2026-01-03T00:00:00Z")
    ).entry
    c2 = ledger.log(
        Draft(kind="correction", summary="Use PostgreSQL 16", body="Newer.", parents=[c1.id], ts="2026-01-04T00:00:00Z")
    ).entry
    assert ledger.state().decision_ids == [c2.id]
    decided = ledger.context().text.split("## Decisions in force", 1)[1].split("\n## ", 1)[0]
    assert "PostgreSQL 16" in decided and "MongoDB" not in decided


def test_a_back_dated_correction_folds_through_the_cache_as_a_cold_fold_does(ledger):
    """A clone with a slow clock: the revision sorts before the decision it replaces.
    (This tool refuses to write such a ts; the revision comes in as another clone stored it.)"""
    from kit.entries import make_entry

    from git_lifeline.core import truth
    from git_lifeline.core.entry import parse_ts

    d = decide(ledger, "Use MongoDB", "Flexible.", "2026-01-05T00:00:00Z")
    ledger.state()  # the cache now holds a fold of D
    c = make_entry(
        kind="correction", summary="Use PostgreSQL", body="ACID.", parents=[d.id], ts=parse_ts("2026-01-04T12:00:00Z")
    )
    ledger.append([c])
    cached = ledger.state()
    cold = truth.reduce(ledger.store.load().entries.values())
    assert cached.decision_ids == cold.decision_ids == [c.id]
    assert cached.superseded == cold.superseded == {d.id}


def test_revisions_reverts_and_conflicts_appended_one_by_one_through_the_cache_equal_a_cold_fold(ledger):
    """The cache keeps the fold and folds each append onto it; at every step the truth
    (decisions, superseded, conflicts) equals a fold of every entry from scratch."""
    import random

    from git_lifeline.core import truth

    rng = random.Random(13)
    made: list = []
    for step in range(40):
        ts = f"2026-02-{1 + step // 24:02d}T{step % 24:02d}:00:00Z"
        kind = rng.choice(["decision", "revise", "revise", "revert", "open", "note"])
        parents = [rng.choice(made)] if made and kind in ("revise", "revert", "note") else []
        if kind in ("revise", "revert") and not parents:
            kind = "decision"
        body = (
            ("action: revert\n\n" if kind == "revert" else "")
            + (f"subject: {rng.choice(['database', 'cache'])}\n\n" if kind == "decision" and rng.random() < 0.5 else "")
            + f"Step {step}."
        )
        real = "correction" if kind in ("revise", "revert") else kind
        made.append(ledger.log(Draft(kind=real, summary=f"{kind} {step}", body=body, parents=parents, ts=ts)).entry.id)
        cached = ledger.state()
        cold = truth.reduce(ledger.store.load().entries.values())
        assert (cached.decision_ids, cached.superseded, cached.conflicts) == (
            cold.decision_ids,
            cold.superseded,
            cold.conflicts,
        ), step
