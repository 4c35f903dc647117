"""A pull brings each log in once: `sync.integrate` already carries every namespace, the
review trails included, so the use case must not integrate the trails a second time
(each pass takes the trail's writers' lock and reads its head again, for nothing)."""

from __future__ import annotations

from collections import Counter

from kit.repos import bare, init_repo, open_ledger, open_workspace
from kit.run import git

from git_lifeline.app import exchange
from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.git import integrate


def test_a_pull_integrates_every_line_and_every_review_trail_exactly_once(tmp_path, monkeypatch):
    server = bare(tmp_path, "server.git")
    author = init_repo(tmp_path / "author")
    git(author, "remote", "add", "origin", str(server))
    review = Agents(open_ledger(author, "main"))
    proposal = review.propose(Draft(kind="decision", summary="Use a queue", body="Bursts overflow."), via="cli")
    assert [o.ok for o in review.approve([proposal.short])] == [True]
    exchange.push(open_workspace(author), "origin")

    reader = init_repo(tmp_path / "reader")
    git(reader, "remote", "add", "origin", str(server))
    passes: Counter = Counter()
    real = integrate._integrate_locked

    def counted(log, theirs, verify, source, progress):
        passes[(log.ns.name, log.name)] += 1
        return real(log, theirs, verify, source, progress)

    monkeypatch.setattr(integrate, "_integrate_locked", counted)
    exchange.pull(open_workspace(reader), "origin")
    assert dict(passes) == {("ledger", "main"): 1, ("review", "main"): 1}
    assert git(reader, "rev-parse", "refs/lifeline-review/main") == git(
        author, "rev-parse", "refs/lifeline-review/main"
    )
