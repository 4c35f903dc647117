"""`review` and `approve` show, for every parent of a proposal, its kind, its summary and
whether the proposal replaces or withdraws it; the why is shown without `action: revert`
eating it. A proposal titled "Docs: clarify README wording" cannot quietly withdraw
"Auth: require MFA for admins"."""

from __future__ import annotations

import json

from kit.home import hermetic  # noqa: F401  (fixtures)
from kit.repos import commit_policy, repo_with_a_commit  # noqa: F401  (fixtures)
from kit.run import cli

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace


def test_review_and_approve_name_the_decision_a_proposal_withdraws(repo):  # noqa: F811
    commit_policy(repo, {"default": "propose"})
    r = cli(
        repo, "log", "--kind", "decision", "--summary", "Auth: require MFA for admins", "--body", "Audit.", "--json"
    )
    mfa = json.loads(r.out)["entry"]["id"]
    r = cli(repo, "log", "--kind", "decision", "--summary", "Queue: SQS", "--body", "Managed.", "--json")
    sqs = json.loads(r.out)["entry"]["id"]
    led = Workspace.open(str(repo)).ledger()
    agents = Agents(led)
    why = "The README wording was unclear about setup; this makes it plain. " * 4
    agents.write(Draft("correction", "Docs: clarify README wording", f"action: revert\n\n{why}", (mfa,), agent="codex"))
    agents.write(Draft("correction", "Queue: SNS", "Fan-out.", (sqs,), agent="codex"))
    r = cli(repo, "review")
    assert r.code == 0, r
    assert f"withdraws {mfa[:12]} decision: Auth: require MFA for admins" in r.out, r.out
    assert f"replaces {sqs[:12]} decision: Queue: SQS" in r.out, r.out
    assert "why: The README wording" in r.out, r.out
    r = cli(repo, "approve", "all")
    assert r.code == 0, r
    assert f"withdraws {mfa[:12]} decision: Auth: require MFA for admins" in r.out, r.out
