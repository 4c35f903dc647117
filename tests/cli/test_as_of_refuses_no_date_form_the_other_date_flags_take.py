"""`context --as-of` reads every date form `--since` and `--valid-until` read (core/dates.py),
not only an ISO day: `--as-of yesterday` is not "neither a date nor a commit"."""

from __future__ import annotations

import pytest
from kit.run import cli


@pytest.mark.parametrize("form", ["yesterday", "2 weeks ago", "7d"])
def test_as_of_a_date_in_the_past_in_any_git_form_shows_the_ledger_before_todays_decision(repo, form):
    cli(repo, "log", "--kind", "decision", "--summary", "Recorded today", "--body", "Because.", expect=0)
    r = cli(repo, "context", "--as-of", form, expect=0)
    assert "Recorded today" not in r.out, r


@pytest.mark.parametrize("form", ["now", "tomorrow"])
def test_as_of_now_or_later_in_any_git_form_shows_todays_decision(repo, form):
    cli(repo, "log", "--kind", "decision", "--summary", "Recorded today", "--body", "Because.", expect=0)
    r = cli(repo, "context", "--as-of", form, expect=0)
    assert "Recorded today" in r.out, r


def test_as_of_neither_a_date_nor_a_commit_names_the_date_forms_it_takes(repo):
    cli(repo, "log", "--kind", "decision", "--summary", "Recorded today", "--body", "Because.", expect=0)
    r = cli(repo, "context", "--as-of", "sometime soonish", expect=2)
    assert "--as-of 'sometime soonish'" in r.err and "2 weeks ago" in r.err and "commit" in r.err, r
