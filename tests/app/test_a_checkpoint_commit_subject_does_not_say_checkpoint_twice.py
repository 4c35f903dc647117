"""A checkpoint's derived summary opens with `checkpoint <thread>:`; its ledger commit's
subject is that summary, not "checkpoint: checkpoint main: ..."."""

from __future__ import annotations

from kit.run import cli, git


def test_a_checkpoint_commit_subject_says_checkpoint_once_and_a_decisions_still_names_its_kind(repo):
    cli(repo, "checkpoint", "--next", "Write the tests", expect=0)
    subject = git(repo, "log", "-1", "--format=%s", "refs/lifeline/main")
    assert subject == "checkpoint main: Write the tests", subject
    cli(repo, "log", "--kind", "decision", "--summary", "Use SQS", "--body", "Managed.", expect=0)
    assert git(repo, "log", "-1", "--format=%s", "refs/lifeline/main") == "decision: Use SQS"
