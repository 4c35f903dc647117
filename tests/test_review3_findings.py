"""Findings of a third adversarial review (recall's stem index and vocabulary, the policy
read from the trusted ref, the interpreter form written for clients).

Each test is named after the failure it prevents; each failed before its fix.
"""

from __future__ import annotations

import os

from review_support import cli, git, hermetic, make_repo, ref_value, repo  # noqa: F401

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
from git_lifeline.views import recall

LINE = "refs/lifeline/main"


# ---- recall's stem index kept between questions ------------------------------------------
def test_bodies_whose_characters_unfold_into_many_words_cannot_hold_more_index_than_the_budget():
    """U+FDFA folds (NFKD) into 18 characters and four words: counted by the characters
    given, thirty such bodies were kept as 90,000 characters while their index was built
    from 1,620,000 (a full budget of them held some 190 MB, four times what it was meant to hold)."""
    recall._stemmed_cache.clear()
    recall._stemmed_chars = 0
    body = "\ufdfa" * 3000  # 9,000 bytes: far inside an entry's 64 KiB
    for i in range(30):
        recall._stemmed(f"{i:040x}", "a summary", body + str(i))
    held = sum(len(recall.fold(s)) + len(recall.fold(b)) for _, s, b in recall._stemmed_cache)
    assert held <= recall.STEMMED_BUDGET_CHARS, held
    assert held == recall._stemmed_chars
    big = "\ufdfa" * 5000  # 90,000 characters once folded: over an eighth of the budget
    recall._stemmed("f" * 40, "s", big)
    assert ("f" * 40, "s", big) not in recall._stemmed_cache


# ---- the policy on the trusted ref ---------------------------------------------------------
def commit_tree_entry(repo, mode: str, target: str) -> None:
    """Commit `.lifeline/policy.json` as something other than a regular file (a symbolic
    link, or a submodule's commit), the way a pushed branch can."""
    if mode == "120000":
        (repo / ".lifeline").mkdir(exist_ok=True)
        os.symlink(target, repo / ".lifeline" / "policy.json")
        git(repo, "add", ".lifeline/policy.json")
    else:
        git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{target},.lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "policy")


def test_a_policy_committed_as_a_symbolic_link_is_not_a_policy_file(repo):
    """A link's blob is its target's name: a link named '{"default": "direct"}' gave every
    agent direct writes while the checkout shows a dangling link no one can read."""
    commit_tree_entry(repo, "120000", '{"default": "direct"}')
    out = Agents(Workspace.open(str(repo)).ledger())
    try:
        result = out.write(Draft("decision", "Drop the audit log", "Faster.", agent="claude-code"))
    except Exception as exc:  # refused: the policy is not a file
        assert "is not a file" in str(exc), exc
    else:
        raise AssertionError(f"an agent's write went through a linked policy: {result}")
    assert ref_value(repo, LINE) is None
    r = cli(repo, "policy")
    assert r.code != 0 and "is not a file" in r.err, r


def test_a_policy_committed_as_a_submodule_is_reported_not_a_crash(repo):
    """A gitlink's id names a commit of another repository: reading it as a blob failed with
    'object missing (run git fsck)' and doctor stopped there instead of listing its checks."""
    commit_tree_entry(repo, "160000", "1234567890123456789012345678901234567890")
    r = cli(repo, "policy")
    assert r.code != 0 and "is not a file" in r.err and "fsck" not in r.err, r
    d = cli(repo, "doctor")
    assert "policy" in d.out and "is not a file" in d.out and "fsck" not in d.out + d.err, d


# ---- the question's length -----------------------------------------------------------------
def test_a_question_whose_characters_unfold_into_thousands_of_words_is_refused_not_searched(repo):
    """The 4,000-character limit counted the characters given: 3,999 U+FDFA fold into 71,982
    characters and 12,000 words, each a pass over the synonym table (5.5 s of a server's one
    worker, ten times the longest question the limit allows in plain words)."""
    import time

    from git_lifeline.errors import InputError

    assert (
        cli(
            repo,
            "log",
            "--kind",
            "decision",
            "--summary",
            "Use Postgres for orders",
            "--body",
            "Transactions across the order tables.",
        ).code
        == 0
    )
    led = Workspace.open(str(repo)).ledger()
    started = time.monotonic()
    try:
        led.recall("\ufdfa" * 3999)
    except InputError as exc:
        assert "recall takes at most 4000" in str(exc), exc
    else:
        raise AssertionError("a question of 72,000 folded characters was searched")
    assert time.monotonic() - started < 1.0
    assert [h.id for h in led.recall("Which databasé, Postgrés?")]  # accents fold and are fine
