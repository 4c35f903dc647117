"""A word the ledger never uses weighs the most in recall's abstention, so a question that
writes the ledger's word otherwise — one letter left out or two swapped ("accesibility"), run
together ("wifi" for the ledger's "Wi-Fi"), or inflected with another last letter ("policy" for
the ledger's "policies") — was refused although the entry that answers it was there. Those
forms are read from the ledger's own vocabulary (views/recall.py, `ledger_forms`), never from a
list of words; a word that is another word ("internal" is not "interval") stays a word the
ledger never uses."""

from __future__ import annotations

import json

import pytest
from kit.run import cli

BOOTSTRAP = ("bootstrap", "Thermostat firmware and cloud", "Why: homes. Who: four developers.")
ENTRIES = {
    "accessibility": (
        "decision",
        "Accessibility: screen readers are a release blocker",
        "Checked before each release.",
    ),
    "wifi": ("decision", "Wi-Fi onboarding: the device hosts an access point", "The app joins it to pass the network."),
    "interval": ("decision", "Retry interval: 30 s between attempts", "Backoff doubles it up to 10 minutes."),
    "retention": ("decision", "Retention policies: logs are kept 30 days", "Older ones are deleted nightly."),
    "backup": ("decision", "Backups: one copy off site", "Encrypted before upload."),
}


def logged(repo, kind: str, summary: str, body: str) -> str:
    r = cli(repo, "log", "--kind", kind, "--summary", summary, "--body", body, "--json")
    assert r.code == 0, r
    return json.loads(r.out)["entry"]["id"]


def recalled(repo, question: str) -> dict:
    r = cli(repo, "recall", "--json", question)
    assert r.code == 0, r
    return json.loads(r.out)


@pytest.fixture
def ledger(repo) -> dict[str, str]:
    logged(repo, *BOOTSTRAP)
    return {name: logged(repo, *entry) for name, entry in ENTRIES.items()}


@pytest.mark.parametrize(
    "question, answer",
    [
        ("accesibility", "accessibility"),  # a letter left out
        ("attmepts", "interval"),  # two letters swapped
        ("how does wifi work", "wifi"),  # run together
        ("which policy", "retention"),  # the ledger's plural changes the last letter
        ("how many copies", "backup"),  # and so does the question's
    ],
)
def test_a_word_written_otherwise_finds_the_entry_that_uses_it(repo, ledger, question, answer):
    got = recalled(repo, question)
    assert not got["abstained"], got
    assert got["hits"][0]["id"] == ledger[answer], got


def test_a_word_that_is_another_word_is_not_taken_for_it(repo, ledger):
    got = recalled(repo, "internal")
    assert got["abstained"] and "internal" in got["reason"], got


def test_a_pasted_page_of_unknown_words_looks_up_only_a_few_of_them_in_the_vocabulary(tmp_path):
    """Each word the ledger never uses is looked up in its vocabulary in some hundred forms
    (~6 ms at 60,000 words): a question of 300 such words cost 2 s of CPU before the lookups
    were bounded per question (FORMS_AT_MOST)."""
    import random
    import sqlite3
    import string

    from git_lifeline.views.cache_rows import SCHEMA
    from git_lifeline.views.recall import FORMS_AT_MOST
    from git_lifeline.views.recall_answer import answer

    db = sqlite3.connect(str(tmp_path / "cache.db"))
    db.executescript(SCHEMA)
    db.execute(
        "INSERT INTO entries(id, blob, ts, kind, ok, summary, body, dedup, json) VALUES (?,?,?,?,?,?,?,?,?)",
        ("0" * 64, "", "2026-01-01T00:00:00Z", "decision", 1, "Geocoding: Nominatim", "Self-hosted.", None, "{}"),
    )
    db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
    rng = random.Random(3)
    question = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(12)) for _ in range(300))
    lookups: list[str] = []
    db.set_trace_callback(lambda sql: lookups.append(sql) if "lifeline_vocab WHERE" in sql else None)
    assert answer(db, question[:4000], 5).abstained
    assert 0 < len(lookups) <= FORMS_AT_MOST, len(lookups)
