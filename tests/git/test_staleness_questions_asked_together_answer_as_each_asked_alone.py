"""A cold `context` of a ledger whose decisions name code that has not changed since ran one
`git log` per decision that names `paths:` (33 processes at 1,000 entries, a sixth of its
CPU). The questions over one range of commits are now asked of one `git log` over the union
of their pathspecs first (git/code_together.py); each answer must stay what its own
walk gives, and any question whose pathspecs could widen the union's answer walks alone.
Counted in git's own trace (GIT_TRACE), never timed."""

from __future__ import annotations

import os
from pathlib import Path

from kit.repos import code_commit
from kit.run import git

from git_lifeline.git.code_together import GROUP_MIN
from git_lifeline.git.codelog import CodeLog, code_changes
from git_lifeline.git.repo import open_repo


def log_runs(trace: Path) -> list:
    return [line for line in trace.read_text().splitlines() if "built-in: git log" in line]


def history(repo: Path) -> dict:
    """Code under src/, some of it changed after 2030, renamed, excluded: {name: commit}."""
    made = {
        "a": code_commit(repo, "src/a/x.py", 3, "2026-01-01T00:00:00Z", "a"),
        "b": code_commit(repo, "src/b/y.py", 3, "2026-01-02T00:00:00Z", "b"),
        "c": code_commit(repo, "src/c/z.py", 3, "2026-01-03T00:00:00Z", "c"),
        "d": code_commit(repo, "docs/d.md", 3, "2026-01-04T00:00:00Z", "d"),
    }
    made["later"] = code_commit(repo, "src/b/y.py", 2, "2030-06-01T00:00:00Z", "later")
    made["moved"] = code_commit(repo, "src/e/z.py", 0, "2030-07-01T00:00:00Z", "moved", mv=("src/c/z.py", "src/e/z.py"))
    return made


def answers_alone(repo: Path, head: str, questions: list) -> dict:
    gr = open_repo(str(repo))
    return {q: code_changes(gr, head, q[1], q[2], q[0]) for q in questions}


def test_questions_about_code_untouched_since_are_answered_by_one_git_log(repo, tmp_path, monkeypatch):
    history(repo)
    head = git(repo, "rev-parse", "HEAD")
    since = 1_900_000_000  # 2030-03-17: after a, b, c, d, before `later` and `moved`
    questions = [(("src/a/**",), (), since), (("docs/",), (), since - 10), (("src/a/x.py", "docs/d.md"), (), since + 5)]
    assert len(questions) >= GROUP_MIN
    expected = answers_alone(repo, head, questions)
    assert all(log == [] for log in expected.values())
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    got = CodeLog(open_repo(str(repo)), head).changes(questions)
    assert got == expected
    assert len(log_runs(trace)) == 1  # before: one per question


def test_a_touched_question_among_them_still_gets_its_own_walk_and_the_others_theirs(repo):
    history(repo)
    head = git(repo, "rev-parse", "HEAD")
    since = 1_900_000_000
    questions = [
        (("src/a/**",), (), since),
        (("src/b/",), (), since),  # changed in 2030
        (("src/c/z.py",), (), since),  # renamed away in 2030
        (("docs/",), (), None),  # no time bound: the whole history
        ((":(exclude)src/b", "src/"), (), since),  # magic: walks alone
        (("src/",), (), since),
    ]
    expected = answers_alone(repo, head, questions)
    assert expected[questions[1]] and expected[questions[2]] and expected[questions[3]]
    got = CodeLog(open_repo(str(repo)), head).changes(questions)
    assert got == expected


def test_questions_behind_hidden_commits_are_asked_over_their_own_range(repo):
    made = history(repo)
    head = git(repo, "rev-parse", "HEAD")
    questions = [
        (("src/a/**",), (made["d"],), None),
        (("docs/",), (made["d"],), None),
        (("src/c/",), (made["d"],), None),  # renamed away after d: touched in this range
        (("src/b/",), (made["later"],), None),
        (("docs/",), (made["later"],), None),
        (("src/a/",), (made["later"],), None),
    ]
    expected = answers_alone(repo, head, questions)
    got = CodeLog(open_repo(str(repo)), head).changes(questions)
    assert got == expected
    assert expected[questions[2]] and not expected[questions[0]]


def test_questions_too_long_to_ask_together_are_asked_in_parts_not_refused_by_the_system(repo, tmp_path, monkeypatch):
    # a decision's `paths:` may be 64 KB (its body's bound): enough of them in one range made
    # a union longer than the system lets one process be given (E2BIG), and every read
    # of the ledger failed, though each question alone is asked as ever
    history(repo)
    head = git(repo, "rev-parse", "HEAD")
    each = tuple(f"src/q{{}}/{i}/" + "d" * 5000 for i in range(12))  # 60 KB of pathspecs
    count = os.sysconf("SC_ARG_MAX") // (12 * 5000) + 2
    questions = [(tuple(spec.format(n) for spec in each), (), None) for n in range(count)]
    expected = answers_alone(repo, head, questions)
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    assert CodeLog(open_repo(str(repo)), head).changes(questions) == expected
    assert len(log_runs(trace)) < count  # still asked together, in parts


def test_a_merge_a_later_since_shows_behind_hidden_commits_is_not_lost_to_an_earlier_since(repo):
    # behind hidden commits git's walk is limited: a parent older than `since` is no longer
    # relevant, so a merge that took one side for src/a/ differs only from the other, old,
    # side. Alone, with a later `since`, both parents are old and the merge is shown; with the
    # earliest `since` of the range, its newer side counts and the union saw nothing
    hidden = code_commit(repo, "docs/start.md", 1, "2019-01-01T00:00:00Z", "start")
    git(repo, "checkout", "-q", "-b", "side")
    code_commit(repo, "src/a/x.py", 2, "2020-01-01T00:00:00Z", "side")
    git(repo, "checkout", "-q", "-")
    code_commit(repo, "docs/other.md", 1, "2028-01-01T00:00:00Z", "main")
    when = {"GIT_AUTHOR_DATE": "2031-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2031-01-01T00:00:00Z"}
    git(repo, "merge", "-q", "-s", "ours", "side", "-m", "merge", env=when)
    head = git(repo, "rev-parse", "HEAD")
    questions = [
        (("src/a/",), (hidden,), 1_900_000_000),  # 2030: after main's 2028 commit
        (("src/b/",), (hidden,), 1_700_000_000),  # 2023
        (("src/c/",), (hidden,), 1_700_000_000),
    ]
    expected = answers_alone(repo, head, questions)
    assert [row.commit for row in expected[questions[0]]] == [head]
    assert CodeLog(open_repo(str(repo)), head).changes(questions) == expected


def test_a_decision_dated_before_1973_does_not_hide_the_code_changed_under_the_others(repo):
    # git reads `--since=@N` as seconds only from nine digits up (1973-03-03): a smaller N
    # (a valid entry of 1971) was read as a day of the month, and as the range's earliest
    # `since` it made the union's walk skip the code every other question asks about
    history(repo)  # src/b/ changed in 2030, src/a/ in 2026 only
    code_commit(repo, "src/a/x.py", 1, "2026-06-01T00:00:00Z", "a again")
    head = git(repo, "rev-parse", "HEAD")
    questions = [(("docs/",), (), 40_000_000), (("src/a/",), (), 1_760_000_000), (("src/c/",), (), 1_760_000_000)]
    expected = answers_alone(repo, head, questions)
    assert expected[questions[1]]  # src/a/ changed in 2026
    assert CodeLog(open_repo(str(repo)), head).changes(questions) == expected
    assert expected[questions[0]]  # since 1971: all of docs/ (git's own reading was "this month")
