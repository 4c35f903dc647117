"""Recall looks a concept's words up in an index of each entry's stems instead of scanning
them; the index must find exactly what a scan finds, or recall answers differently."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from git_lifeline.views.recall import Words, concepts
from git_lifeline.views.recall_words import PREFIX_FROM, stem

WORDS = st.sampled_from(
    [
        "log",
        "login",
        "logins",
        "logo",
        "sign",
        "in",
        "auth",
        "authent",
        "authentication",
        "db",
        "dbs",
        "data",
        "database",
        "",
        "pay",
        "payment",
        "payout",
        "a",
        "ab",
        "abc",
    ]
)


def scan(stems: list, alt: tuple) -> bool:
    """The plain reading of the rule: the words of `alt` one after another, each equal to the
    entry's word or, from PREFIX_FROM characters, its start."""

    def matches(a: str, w: str) -> bool:
        return w.startswith(a) if len(a) >= PREFIX_FROM else w == a

    n = len(alt)
    return any(all(matches(alt[j], stems[i + j]) for j in range(n)) for i in range(len(stems) - n + 1))


@given(st.lists(WORDS, max_size=12), st.lists(WORDS.filter(bool), min_size=1, max_size=3))
def test_the_stem_index_finds_exactly_what_a_scan_of_the_words_finds(stems, alt):
    assert Words(stems).has(tuple(alt)) == scan(stems, tuple(alt))


def test_a_phrase_split_across_the_summary_and_the_why_is_not_found():
    head = [stem(w) for w in "Sign".lower().split()]
    words = Words(head + [""] + [stem(w) for w in "in on the app".lower().split()])
    (sign_in,) = [c for c in concepts("sign in") if c.text == "sign in"]
    assert not sign_in.found_in(words)
    assert sign_in.found_in(Words(["sign", "in"]))


def test_the_index_kept_between_questions_stays_within_its_budget_whatever_the_bodies():
    from git_lifeline.views import recall

    body = "word " * 12_000  # 60,000 characters: a body near the 64 KiB limit
    for i in range(12):  # 720,000 characters in all: past the budget
        recall._stemmed(f"{i:040x}", "a summary", body + str(i))
        recall._stemmed(f"{i:040x}", "a summary", body + str(i))  # asked again: kept, not counted twice
    kept = sum(len(s) + len(b) for _, s, b in recall._stemmed_cache)
    assert kept == recall._stemmed_chars <= recall.STEMMED_BUDGET_CHARS
    assert len(recall._stemmed_cache) >= 1
    huge = "x " * (recall.STEMMED_BUDGET_CHARS // 4)
    head, words = recall._stemmed("f" * 40, "s", huge)  # larger than an eighth of the budget: answered, not kept
    assert words.has(("x",)) and ("f" * 40, "s", huge) not in recall._stemmed_cache


def test_disabling_a_feature_is_not_read_as_a_question_about_accessibility():
    (disable,) = [c for c in concepts("how do we disable a feature") if c.text.startswith("disab")]
    assert ("a11y",) not in disable.alternatives
    (disability,) = [c for c in concepts("apps for people with disabilities") if c.text.startswith("disab")]
    assert ("a11y",) in disability.alternatives
