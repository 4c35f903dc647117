"""context: a hard budget at every size, and no tampered entry served as truth."""

from __future__ import annotations

import json

import pygit2
import pytest
from kit.entries import make_entry, path_of, varied_entries
from kit.repos import init_repo, open_ledger
from kit.run import cli
from kit.tamper import add_commit, rewrite_line

BUDGETS = range(0, 1500, 7)


@pytest.fixture(scope="module")
def varied_repo(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("context") / "repo")
    open_ledger(repo).append(varied_entries(60))
    return repo


@pytest.fixture(scope="module")
def empty_repo(tmp_path_factory):
    return init_repo(tmp_path_factory.mktemp("context-empty") / "repo")


@pytest.mark.parametrize("which", ["varied", "empty"])
def test_context_never_exceeds_its_budget(varied_repo, empty_repo, which):
    led = open_ledger(varied_repo if which == "varied" else empty_repo)
    over = {n: len(led.context(budget=n).text) for n in BUDGETS if len(led.context(budget=n).text) > n}
    assert over == {}, f"budget -> size of output over budget: {over}"


@pytest.mark.parametrize("budget", [0, 42, 350, 1499])
def test_cli_context_output_fits_the_budget(varied_repo, budget):
    res = cli(varied_repo, "context", "--budget", str(budget))
    assert res.code == 0, res
    assert len(res.out) <= budget, res
    assert "Traceback" not in res.err


def test_context_without_a_budget_shows_the_decisions(varied_repo):
    text = open_ledger(varied_repo).context().text
    assert "Decisions in force" in text


def test_a_tampered_entry_is_not_served_as_a_decision_and_is_flagged(ledger, repo):
    ledger.append(
        [
            make_entry(0, kind="bootstrap", summary="A service", body="What it is."),
            make_entry(1, summary="Database: MongoDB", body="Documents fit."),
            make_entry(2, summary="Queue: RabbitMQ", body="We know it."),
        ]
    )
    victim = next(e for e in ledger.entries() if "MongoDB" in e.summary)

    def tamper(n, files):
        key = path_of(victim.id)
        if key in files:
            doc = json.loads(pygit2.Repository(str(repo))[files[key][0]].data)
            doc["summary"] = "Database: Oracle"
            files[key] = (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode()
        return files

    rewrite_line(repo, tamper)
    text = open_ledger(repo).context().text
    assert "Oracle" not in text, text
    assert "Queue: RabbitMQ" in text
    assert "Integrity warning" in text and victim.id[:8] in text, text


@pytest.mark.parametrize("blob", [b'{"kind": "decision", ', b"not json at all\n"])
def test_an_unreadable_entry_blob_is_flagged_in_the_context(ledger, repo, blob):
    ledger.append([make_entry(1, summary="Database: PostgreSQL", body="Transactions.")])
    add_commit(repo, lambda files: {**files, path_of("d" * 64): blob})
    text = open_ledger(repo).context().text
    assert "Database: PostgreSQL" in text
    assert "Integrity warning" in text and "dddddddd" in text, text


def test_the_cost_of_a_context_follows_the_budget_not_the_ledger():
    from datetime import datetime, timedelta, timezone

    from git_lifeline.core.entry import new_entry
    from git_lifeline.core.truth import reduce_verified
    from git_lifeline.views.context import ContextInput, assemble

    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    entries = [
        new_entry(
            kind="decision",
            summary=f"Component {i}: choice {i}",
            body=f"Because {i}.",
            author="A <a@example.com>",
            ts=t0 + timedelta(minutes=i),
        )
        for i in range(5000)
    ]
    entries += [
        new_entry(
            kind=k, summary=f"{k} {i}", body="why", author="A <a@example.com>", ts=t0 + timedelta(days=10, minutes=i)
        )
        for i, k in enumerate(["incident", "debt"] * 50)
    ]
    st = reduce_verified(entries, [])
    loaded = []
    load = st._load
    st._load = lambda i: loaded.append(i) or load(i)
    text = assemble(ContextInput(state=st, line="main", head_commit=None), 8000).text
    assert len(text) <= 8000 and "decision(s) omitted for the budget" in text
    assert len(set(loaded)) < 400, f"{len(set(loaded))} entries loaded for an 8,000-character context"
