"""Reading the ledger like git reads history: list's limits and formats, one meaning of
--since everywhere, the pager and colour by git's rules, -q. Through the real CLI; the
pager tests run it on a real pseudo-terminal."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import pytest
from kit.entries import make_entry
from kit.home import AUTHOR
from kit.repos import commit_file, open_ledger
from kit.run import cli, git
from kit.terminal import on_a_terminal

DAY = timedelta(days=1)


@pytest.fixture
def dated(repo):
    """Five entries, one a day, the last a day ago (a minute less); two by an agent."""
    now = datetime.now(timezone.utc)
    led = open_ledger(repo)
    entries = []
    for i in range(5):
        who = dict(agent="claude-code", provider="anthropic", model="opus") if i % 2 else {}
        entries.append(
            make_entry(
                i,
                kind="decision" if i < 3 else "note",
                summary=f"Entry {i}",
                ts=now - (5 - i) * DAY + timedelta(minutes=1),
                **who,
            )
        )
    led.append(entries)
    return repo, entries


def ids(res) -> list:
    return [line.split()[0] for line in res.out.splitlines() if line.strip()]


def short(entries) -> list:
    return [e.id[:8] for e in entries]


# ---- list ------------------------------------------------------------------------------------
def test_list_n_keeps_the_newest_in_list_order(dated):
    repo, entries = dated
    assert ids(cli(repo, "list", "-n", "2")) == short(entries[-2:])
    assert ids(cli(repo, "list", "--max-count", "0")) == []
    assert cli(repo, "list", "-n", "-1").code == 2


def test_list_since_and_until_take_gits_dates_and_whole_days(dated):
    repo, entries = dated
    assert ids(cli(repo, "list", "--since", "3 days ago")) == short(entries[2:])
    assert ids(cli(repo, "list", "--since", "3.days.ago", "--until", "yesterday")) == short(entries[2:])
    day = entries[1].ts.date().isoformat()
    assert ids(cli(repo, "list", "--since", day, "--until", day)) == short(entries[1:2])  # the whole UTC day
    assert ids(cli(repo, "list", "--after", day, "--before", day)) == short(entries[1:2])
    res = cli(repo, "list", "--since", "a fortnight-ish")
    assert res.code == 2 and "--since 'a fortnight-ish': not a date" in res.err


def test_list_filters_by_kind_and_by_author_pattern(dated):
    repo, entries = dated
    assert ids(cli(repo, "list", "--kind", "note")) == short(entries[3:])
    assert ids(cli(repo, "list", "--author", "CLAUDE")) == short([entries[1], entries[3]])
    assert ids(cli(repo, "list", "--author", "^Test Author <test@", "--kind", "decision")) == short(entries[:3])
    assert ids(cli(repo, "list", "--author", "nobody")) == []
    assert cli(repo, "list", "--author", "(").code == 2


def test_list_oneline_and_format_placeholders(dated):
    repo, entries = dated
    e = entries[1]
    assert cli(repo, "list", "--oneline").out.splitlines()[1] == f"{e.id[:8]} {e.kind}: {e.summary}"
    fmt = "%H|%h|%s|%k|%an|%ae|%aN|%as|%aI|%at|%g|%gp|%gm|%p|%d|%%|%n"
    line = cli(repo, "list", "--format", fmt, "-n", "1").out.split("\n")[0]
    last = entries[-1]
    assert line == (
        f"{last.id}|{last.id[:8]}|{last.summary}|note|Test Author|test@example.com|{AUTHOR}|"
        f"{last.ts:%Y-%m-%d}|{last.ts:%Y-%m-%dT%H:%M:%S}+00:00|{int(last.ts.timestamp())}|"
        f"human|none|human|||%|"
    )
    assert cli(repo, "list", "--format=format:%ar", "-n", "2").out.split() == ["1", "day", "ago", "23", "hours", "ago"]
    assert cli(repo, "list", "--pretty=oneline", "-n", "1").out.strip() == f"{last.id[:8]} note: {last.summary}"


def test_an_unknown_format_placeholder_is_refused(dated):
    repo, _ = dated
    res = cli(repo, "list", "--format", "%h %zz")
    assert res.code == 2 and "unknown placeholder '%zz'" in res.err
    assert cli(repo, "list", "--oneline", "--format", "%h").code == 2


# ---- one --since ----------------------------------------------------------------------------
def test_audit_since_takes_the_same_dates_as_list(repo):
    assert cli(repo, "log", "--kind", "note", "--summary", "s", "--body", "b").code == 0
    assert cli(repo, "propose", "--kind", "note", "--summary", "p", "--body", "b").code == 0
    assert cli(repo, "reject", "all", "--why", "no").code == 0
    assert "rejected" in cli(repo, "audit", "--since", "2 weeks ago").out
    assert "no direct agent writes" in cli(repo, "audit", "--since", "tomorrow").out
    assert cli(repo, "audit", "--since", "yesterday-ish").code == 2


def test_stale_since_is_a_date_and_since_commit_a_revision(repo):
    # --since used to be a revision in stale and a date in audit
    commit_file(repo, "app.py", "v1\n")
    res = cli(repo, "log", "--kind", "decision", "--summary", "App", "--body", "Why.", "--paths", "app.py")
    assert res.code == 0
    later = f"@{int(time.time()) + 3600} +0000"
    (repo / "app.py").write_text("v2\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "change", env={"GIT_AUTHOR_DATE": later, "GIT_COMMITTER_DATE": later})
    assert "code changed since" in cli(repo, "stale").out
    assert "code changed since" in cli(repo, "stale", "--since", "yesterday").out
    assert "no decision in force" in cli(repo, "stale", "--since", "in 2 days").out
    assert "no decision in force" in cli(repo, "stale", "--since-commit", "HEAD").out
    assert "code changed since" in cli(repo, "stale", "--since-commit", "HEAD~1").out
    old = cli(repo, "stale", "--since", "HEAD")  # the old form still works, and says it is deprecated
    assert old.code == 0 and "no decision in force" in old.out
    assert "use --since-commit HEAD" in old.err
    assert cli(repo, "stale", "--since", "nonsense").code == 2
    assert cli(repo, "stale", "--since", "yesterday", "--since-commit", "HEAD").code == 2


# ---- -q ------------------------------------------------------------------------------------
def test_quiet_says_nothing_on_success_and_still_reports_errors(repo):
    for argv in (["-q", "log"], ["log", "-q"]):
        res = cli(repo, *argv, "--kind", "note", "--summary", f"Quiet {argv[0]}", "--body", "b")
        assert res.code == 0 and res.out == "" and res.err == "", res
    res = cli(repo, "-q", "log", "--kind", "note", "--summary", "s", "--body", "path: x\n\nb")
    assert res.out == "" and "warning: body line 1" in res.err
    res = cli(repo, "log", "-q", "--kind", "gossip", "--summary", "s", "--body", "b")
    assert res.code == 2 and "unknown kind" in res.err


# ---- colour --------------------------------------------------------------------------------
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_colour_follows_the_option_then_color_lifeline_then_color_ui(dated):
    repo, entries = dated
    assert not ANSI.search(cli(repo, "list").out)  # auto, and not a terminal
    coloured = cli(repo, "--color=always", "list").out
    assert f"\x1b[33m{entries[0].id[:8]}\x1b[m" in coloured
    assert ANSI.search(cli(repo, "--color", "list").out)  # --color alone is always
    git(repo, "config", "color.ui", "always")
    assert ANSI.search(cli(repo, "list").out)
    git(repo, "config", "color.lifeline", "never")
    assert not ANSI.search(cli(repo, "list").out)
    assert ANSI.search(cli(repo, "--color=always", "list").out)
    git(repo, "config", "color.lifeline", "always")
    assert not ANSI.search(cli(repo, "--no-color", "list").out)
    assert "%Cred" not in cli(repo, "--color=always", "list", "--format", "%Cred%h%Creset", "-n", "1").out
    assert "\x1b[31m" in cli(repo, "--color=always", "list", "--format", "%Cred%h%Creset", "-n", "1").out
    assert not ANSI.search(cli(repo, "list", "--json").out)


# ---- the pager, on a real terminal -------------------------------------------------------------
@pytest.fixture
def pager(tmp_path):
    """A pager that keeps what it was given and the environment git would give it."""
    paged = tmp_path / "paged"
    script = tmp_path / "pager.sh"
    script.write_text(
        f"#!/bin/sh\ncat > '{paged}'\necho \"LESS=$LESS LV=$LV IN_USE=$GIT_PAGER_IN_USE\" > '{paged}.env'\n"
    )
    script.chmod(0o755)
    return str(script), paged


def test_a_listing_on_a_terminal_goes_through_the_pager_with_gits_environment(dated, pager):
    repo, entries = dated
    command, paged = pager
    code, shown = on_a_terminal(repo, "list", env={"GIT_PAGER": command})
    assert code == 0
    assert entries[0].id[:8] in paged.read_text() and entries[0].id[:8] not in shown
    assert paged.with_suffix(".env").read_text().strip() == "LESS=FRX LV=-c IN_USE=true"
    assert "\x1b[33m" in paged.read_text()  # colour is on in the pager (auto)


def test_the_pager_comes_from_core_pager_then_pager_then_less_and_pager_lifeline_overrides(dated, pager, tmp_path):
    repo, entries = dated
    command, paged = pager
    git(repo, "config", "core.pager", command)
    assert on_a_terminal(repo, "list", env={"PAGER": "false"})[0] == 0 and paged.exists()
    paged.unlink()
    other = tmp_path / "other"
    git(repo, "config", "pager.lifeline", f"cat > '{other}'")
    on_a_terminal(repo, "list", env={})
    assert other.exists() and not paged.exists()
    git(repo, "config", "pager.lifeline", "false")
    code, shown = on_a_terminal(repo, "list", env={})
    assert code == 0 and entries[0].id[:8] in shown and not paged.exists()


def test_no_pager_and_a_pipe_and_git_paging_already_mean_no_pager(dated, pager):
    repo, entries = dated
    command, paged = pager
    code, shown = on_a_terminal(repo, "--no-pager", "list", env={"GIT_PAGER": command})
    assert code == 0 and entries[0].id[:8] in shown and not paged.exists()
    code, shown = on_a_terminal(repo, "list", env={"GIT_PAGER": command, "GIT_PAGER_IN_USE": "true"})
    assert entries[0].id[:8] in shown and not paged.exists()
    res = cli(repo, "list", env={"GIT_PAGER": command})  # stdout is a pipe
    assert entries[0].id[:8] in res.out and not paged.exists()
    code, shown = on_a_terminal(
        repo, "log", "--kind", "note", "--summary", "w", "--body", "b", env={"GIT_PAGER": command}
    )
    assert "recorded" in shown and not paged.exists()  # a write is not paged...
    on_a_terminal(repo, "-p", "log", "--kind", "note", "--summary", "w2", "--body", "b", env={"GIT_PAGER": command})
    assert "recorded" in paged.read_text()  # ...unless -p asks for it


def test_an_error_on_a_terminal_still_reaches_the_human_through_the_pager(dated, pager):
    repo, _ = dated
    command, paged = pager
    code, shown = on_a_terminal(repo, "list", "--since", "nonsense", env={"GIT_PAGER": command})
    assert code == 2 and "not a date" in shown + (paged.read_text() if paged.exists() else "")
