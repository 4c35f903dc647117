"""Recall's stem index kept between questions stays within its budget, even for bodies whose
characters unfold into many words.
"""

from __future__ import annotations

from kit.home import hermetic  # noqa: F401
from kit.repos import make_repo, repo_with_a_commit  # noqa: F401

from git_lifeline.views import recall, recall_words


def test_bodies_whose_characters_unfold_into_many_words_cannot_hold_more_index_than_the_budget():
    """U+FDFA folds (NFKD) into 18 characters and four words: counted by the characters
    given, thirty such bodies were kept as 90,000 characters while their index was built
    from 1,620,000 (a full budget of them held some 190 MB, four times what it was meant to hold)."""
    recall._stemmed_cache.clear()
    recall._stemmed_chars = 0
    body = "\ufdfa" * 3000  # 9,000 bytes: far inside an entry's 64 KiB
    for i in range(30):
        recall._stemmed(f"{i:040x}", "a summary", body + str(i))
    held = sum(len(recall_words.fold(s)) + len(recall_words.fold(b)) for _, s, b in recall._stemmed_cache)
    assert held <= recall.STEMMED_BUDGET_CHARS, held
    assert held == recall._stemmed_chars
    big = "\ufdfa" * 5000  # 90,000 characters once folded: over an eighth of the budget
    recall._stemmed("f" * 40, "s", big)
    assert ("f" * 40, "s", big) not in recall._stemmed_cache
