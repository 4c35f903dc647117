"""Header fields from options (--paths, --subject, --valid-from, --valid-until) on log,
propose and the agents' door; git's date forms; typos and misplaced headers reported.

Each test runs the real CLI in a real repository."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from kit.repos import log_entry, open_ledger
from kit.run import cli, git

from git_lifeline.app.draft import Draft, Headers
from git_lifeline.core.dates import DateError, parse_when

NOW = datetime(2026, 11, 27, 10, 30, tzinfo=timezone.utc)  # a Friday


def log(repo, *args, expect=0):
    res = cli(repo, "log", "--kind", "decision", "--summary", "Database: PostgreSQL", *args)
    assert res.code == expect, res
    return res


def only_entry(repo):
    entries = open_ledger(repo).entries()
    assert len(entries) == 1
    return entries[0]


def nothing_written(repo) -> bool:
    return git(repo, "for-each-ref", "refs/lifeline/") == ""


# ---- the dates ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, stored",
    [
        ("2026-12-31", "2026-12-31"),
        ("2026-12-31T10:00", "2026-12-31T10:00:00Z"),
        ("2026-12-31 12:00:05+02:00", "2026-12-31T10:00:05Z"),
        ("@1700000000", "2023-11-14T22:13:20Z"),
        ("now", "2026-11-27T10:30:00Z"),
        ("today", "2026-11-27"),
        ("yesterday", "2026-11-26"),
        ("tomorrow", "2026-11-28"),
        ("2 weeks ago", "2026-11-13T10:30:00Z"),
        ("2.weeks.ago", "2026-11-13T10:30:00Z"),
        ("a week ago", "2026-11-20T10:30:00Z"),
        ("7d", "2026-11-20T10:30:00Z"),
        ("30m", "2026-11-27T10:00:00Z"),
        ("in 3 days", "2026-11-30T10:30:00Z"),
        ("3 days from now", "2026-11-30T10:30:00Z"),
        ("last friday", "2026-11-20"),
        ("friday", "2026-11-20"),
        ("next friday", "2026-12-04"),
        ("next monday", "2026-11-30"),
        ("last week", "2026-11-20T10:30:00Z"),
        ("1 month ago", "2026-10-27T10:30:00Z"),
    ],
)
def test_git_date_forms_and_future_forms_mean_one_utc_day_or_time(text, stored):
    assert parse_when(text, NOW).header() == stored


@pytest.mark.parametrize(
    "text", ["next yeer", "garbage", "2026-13-45", "2026-02-30", "", "in three fortnights", "friday the 13th"]
)
def test_a_date_that_no_form_reads_is_refused_not_read_as_now(text):
    # git's own approxidate reads `garbage` as now and `in 3 days` as three days ago
    with pytest.raises(DateError):
        parse_when(text, NOW)


# ---- writing them ---------------------------------------------------------------------------
def test_header_flags_are_written_checked_and_normalised_on_top_of_the_body(repo):
    log(
        repo,
        "--body",
        "ACID needed by audit.",
        "--paths",
        "db/**",
        "--paths",
        "*.sql",
        "--subject",
        " database ",
        "--valid-from",
        "2026-01-01",
        "--valid-until",
        "2026-12-31T18:00+01:00",
    )
    e = only_entry(repo)
    assert e.body == (
        "subject: database\npaths: db/**, *.sql\nvalid-from: 2026-01-01\n"
        "valid-until: 2026-12-31T17:00:00Z\n\nACID needed by audit."
    )
    assert open_ledger(repo).state().fold.facts[e.id]["paths"] == "db/**, *.sql"


def test_a_relative_validity_date_is_stored_as_the_day_it_names(repo):
    log(repo, "--body", "Until the freeze.", "--valid-until", "yesterday")
    e = only_entry(repo)
    today = datetime.now(timezone.utc).date()
    assert f"valid-until: {parse_when('yesterday').header()}" in e.body
    assert str(today) not in e.body
    # yesterday's window is closed: the decision left the decisions in force on its own
    st = open_ledger(repo).state()
    assert e.id in st.expired and e.id not in st.decision_ids


def test_header_flags_merge_with_a_header_typed_in_the_body_and_with_a_thread(repo):
    log(repo, "--body", "thread: infra\nWhy.", "--paths", "db/**")
    assert only_entry(repo).body == "paths: db/**\nthread: infra\nWhy."
    log_entry(repo, "note", "On infra", "b", "--thread", "infra", "--subject", "infra")


@pytest.mark.parametrize(
    "args, says",
    [
        (["--valid-until", "next yeer"], "--valid-until 'next yeer': not a date"),
        (["--valid-from", "tomorrow", "--valid-until", "yesterday"], "after valid-until"),
        (["--paths", "src dir/**"], "cannot hold whitespace"),
        (["--paths", "a,b"], "cannot hold whitespace, a comma"),
        (["--paths", "--output=/tmp/x"], "cannot start with '-'"),
        (["--paths", ""], "empty pathspec"),
        (["--subject", "two\nlines"], "--subject"),
        (["--body", "paths: a\n\nWhy.", "--paths", "b"], "the body's header says 'paths: a'"),
    ],
)
def test_an_invalid_header_option_is_refused_with_exit_2_and_nothing_written(repo, args, says):
    argv = args if "--body" in args else [*args, "--body", "Why."]
    res = log(repo, *argv, expect=2)
    assert says in res.err and "Traceback" not in res.err, res
    assert nothing_written(repo)


@pytest.mark.parametrize(
    "header", ["valid-until: next year", "valid-until: 2026-02-30", "valid-from: 2026-12-31T10:00+02:00"]
)
def test_a_validity_header_typed_in_the_body_that_the_truth_cannot_read_is_refused(repo, header):
    # it used to be stored, compared as text, and could never be edited
    res = log(repo, "--body", f"{header}\n\nWhy.", expect=2)
    assert "body header: valid-" in res.err, res
    assert nothing_written(repo)


def test_a_typo_header_is_warned_at_write_and_reported_by_verify_lint(repo):
    res = log(repo, "--body", "path: src/**\n\nWhy.")
    assert "warning: body line 1 'path:' looks like a header" in res.err and "did you mean 'paths:'" in res.err
    e = only_entry(repo)
    assert e.body == "path: src/**\n\nWhy."  # written as given: the id is the content's
    lint = cli(repo, "verify", "--lint")
    assert lint.code == 0, lint
    assert f"warning: entry {e.id[:8]}: body line 1 'path:'" in lint.out
    assert "path:" not in cli(repo, "verify").out  # without --lint, nothing


def test_a_header_written_after_the_first_line_of_prose_is_warned(repo):
    res = log(repo, "--body", "We chose PostgreSQL.\npaths: db/**")
    assert "body line 2 'paths:' is prose, not a header: it comes after the first line of prose" in res.err
    assert "(or use --paths)" in res.err
    res = cli(repo, "log", "--kind", "decision", "--summary", "Queue", "--body", "paths: q/**\n\nsubject: queue\nWhy")
    assert "body line 3 'subject:' is prose, not a header: the header ended at the blank line 2" in res.err


def test_prose_that_merely_starts_like_a_sentence_is_not_warned(repo):
    for body in (
        "Note: this is prose.",
        "We chose X.\n\n```yaml\npaths: not a header\n```",
        "thread: t\ngoal:\n  - a list block",
    ):
        res = cli(repo, "log", "--kind", "note", "--summary", body.split("\n")[0], "--body", body)
        assert res.code == 0 and "warning" not in res.err, (body, res)


def test_propose_takes_the_header_flags(repo):
    res = cli(
        repo,
        "propose",
        "--kind",
        "decision",
        "--summary",
        "Cache: Redis",
        "--body",
        "Speed.",
        "--paths",
        "cache/**",
        "--subject",
        "cache",
        "--valid-until",
        "2030-01-01",
        "--json",
    )
    assert res.code == 0, res
    body = json.loads(res.out)["content"]["body"]
    assert body == "subject: cache\npaths: cache/**\nvalid-until: 2030-01-01\n\nSpeed."
    bad = cli(repo, "propose", "--kind", "decision", "--summary", "x", "--body", "y", "--valid-from", "someday")
    assert bad.code == 2 and "--valid-from 'someday'" in bad.err


def test_the_agents_door_takes_headers_for_the_mcp_write_tools(repo):
    from git_lifeline.app.agents import Agents
    from git_lifeline.app.workspace import Workspace

    led = Workspace.open(str(repo)).ledger()
    out = Agents(led).write(
        Draft(
            "decision",
            "Queue: RabbitMQ",
            "The team runs it.",
            agent="claude-code",
            headers=Headers(paths=("queue/**",), subject="queue", valid_until="in 2 weeks"),
        )
    )
    assert out.mode == "propose"
    assert out.entry.body.startswith("subject: queue\npaths: queue/**\nvalid-until: ")
    from git_lifeline.errors import InputError

    with pytest.raises(InputError):
        Agents(led).write(Draft("decision", "x", "y", agent="claude-code", headers=Headers(valid_until="whenever")))
    with pytest.raises(TypeError, match="path"):
        Headers(path=["a"])  # type: ignore[call-arg]  # a misspelt header is refused by its type


def test_the_same_flags_give_the_same_id_on_every_machine(repo, tmp_path):
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    for where in (repo, other):
        log(where, "--body", "Why.", "--paths", "db/**", "--subject", "database", "--valid-until", "2027-01-01")
    assert only_entry(repo).id == only_entry(other).id
