"""A question whose characters unfold into thousands of words is refused, not searched."""

from __future__ import annotations

from kit.home import hermetic  # noqa: F401
from kit.repos import log_entry, make_repo, repo_with_a_commit  # noqa: F401
from kit.run import Via

from git_lifeline.app.workspace import Workspace


def test_a_question_whose_characters_unfold_into_thousands_of_words_is_refused_not_searched(repo):
    """The 4,000-character limit counted the characters given: 3,999 U+FDFA fold into 71,982
    characters and 12,000 words, each a pass over the synonym table (5.5 s of a server's one
    worker, ten times the longest question the limit allows in plain words)."""
    import time

    from git_lifeline.errors import InputError

    log_entry(
        repo, "decision", "Use Postgres for orders", "Transactions across the order tables.", via=Via.THIS_PROCESS
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
