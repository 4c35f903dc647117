"""`conflicts --exit-code` exits 1 while it lists conflicts and 0 when there are none, as
`git diff --exit-code` does, so CI can fail on a conflict; without the flag listing stays a
success."""

from __future__ import annotations

from kit.run import cli


def decide(repo, summary: str) -> None:
    cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", "Why.", "--subject", "queue", expect=0)


def test_conflicts_exit_code_is_1_with_conflicts_and_0_without(repo):
    decide(repo, "Use SQS")
    assert "no conflicting decisions" in cli(repo, "conflicts", "--exit-code", expect=0).out
    decide(repo, "Use Kafka")
    listed = cli(repo, "conflicts", "--exit-code", expect=1)
    assert "'queue': 2 decisions in force" in listed.out, listed
    cli(repo, "conflicts", "--exit-code", "--json", expect=1)
    cli(repo, "conflicts", expect=0)


def test_stale_since_commit_that_names_no_commit_names_since_commit_in_its_error(repo):
    r = cli(repo, "stale", "--since-commit", "nope", expect=2)
    assert "--since-commit 'nope': not a commit" in r.err, r
