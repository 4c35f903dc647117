"""`log --agent codex` leaves --provider and --model at their defaults (`none`, `human`):
review and audit show "codex", never "codex (none/human)"; what an agent did say is shown."""

from __future__ import annotations

import re

from kit.run import cli


def proposal_id(out: str) -> str:
    m = re.search(r"proposal ([0-9a-f]{8}) filed", out)
    assert m, out
    return m.group(1)


def test_review_and_audit_show_an_agent_without_provider_or_model_by_its_name_alone(repo):
    filed = cli(repo, "log", "--kind", "note", "--summary", "From codex", "--body", "x", "--agent", "codex", expect=0)
    pid = proposal_id(filed.out)
    review = cli(repo, "review", expect=0).out
    assert "by codex, " in review and "none/human" not in review, review
    cli(repo, "approve", pid, expect=0)
    audit = cli(repo, "audit", expect=0).out
    assert "proposed by codex; approved by" in audit and "none/human" not in audit, audit


def test_review_shows_the_provider_and_model_an_agent_did_name(repo):
    cli(repo, "log", "--kind", "note", "--summary", "From codex", "--body", "x", "--agent", "codex",
        "--model", "gpt-5", expect=0)  # fmt: skip
    review = cli(repo, "review", expect=0).out
    assert "by codex (gpt-5), " in review, review
