"""Semantic recall keeps the matrix of entry vectors between questions: a later question
over an unchanged ledger reads only the ids to see that nothing changed, not every vector
again (15 MB at 10,000 entries, 50 ms a question); an entry logged since is still seen."""

from __future__ import annotations

from kit.model import model_dir  # noqa: F401  (the fixture: the test model, or a skip)
from kit.repos import init_repo, log_decision, open_ledger
from kit.run import git


def test_a_later_question_does_not_reread_every_stored_vector(tmp_path, model_dir):
    repo = init_repo(tmp_path / "repo")
    git(repo, "config", "lifeline.semantic.model", str(model_dir))
    log_decision(repo, "Use PostgreSQL for orders", "Transactions across tables.")
    log_decision(repo, "Couriers sign in with a one-time code", "No passwords on shared phones.")
    led = open_ledger(repo)
    assert led.recall("which database holds the orders")
    assert led.recall_mode[0] == "semantic"
    statements: list[str] = []
    led.cache().ensure(led.store.head()).set_trace_callback(statements.append)
    assert led.recall("how do couriers log in")
    assert not [s for s in statements if "v.v" in s], statements  # no vector read again

    log_decision(repo, "Refunds go back to the original card", "Chargebacks cost more.")
    led = open_ledger(repo)
    hits = led.recall("how are refunds paid back")
    assert hits and led.state().by_id[hits[0].id].summary == "Refunds go back to the original card"
