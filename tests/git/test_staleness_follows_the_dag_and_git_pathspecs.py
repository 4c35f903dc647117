"""Staleness and `why` read the code as git does: `paths:` are git pathspecs matched by
git, renames are followed, and what a decision saw is the code commit recorded when it
was appended (the DAG), not a clock; nothing from an entry reaches git as an option."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from kit.entries import make_entry
from kit.repos import code_commit, open_ledger
from kit.run import cli, git

from git_lifeline.app.draft import Draft
from git_lifeline.git.history import code_trailer, recorded_code
from git_lifeline.git.repo import open_repo
from git_lifeline.git.store import LineStore


def at(when: str) -> datetime:
    return datetime.fromisoformat(when.replace("Z", "+00:00"))


def stale_json(repo: Path, *more) -> list:
    res = cli(repo, "stale", "--json", *more)
    assert res.code == 0, res
    return json.loads(res.out)


def log_decision(repo: Path, summary: str, body: str, *more) -> str:
    res = cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", body, "--json", *more)
    assert res.code == 0, res
    return json.loads(res.out)["entry"]["id"]


def test_a_code_commit_in_the_same_second_as_the_decision_counts(repo):
    before = code_commit(repo, "db/schema.sql", 5, "2026-01-01T10:00:00Z", "schema")
    d = log_decision(repo, "Database: PostgreSQL", "paths: db/\n\nACID.")
    message = git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")
    assert f"Lifeline-Code: {before}" in message  # recorded outside the entry, in its ledger commit
    second = git(repo, "log", "-1", "--format=%cI", "refs/lifeline/main")  # the decision's own second
    same = code_commit(repo, "db/schema.sql", 2, second, "same second")
    rows = stale_json(repo)
    assert [(r["id"], r["commits"], r["lines"]) for r in rows] == [(d, [same], 2)]


def test_star_sql_finds_a_schema_in_a_subdirectory_as_git_log_does(repo):
    code_commit(repo, "README", 1, "2026-01-01T10:00:00Z", "readme")
    log_decision(repo, "Schema rules", "paths: *.sql\n\nNormalise.")
    c = code_commit(repo, "db/schema.sql", 3, "2030-01-01T00:00:00Z", "schema")
    assert git(repo, "log", "--format=%H", "--", "*.sql") == c
    assert [r["commits"] for r in stale_json(repo)] == [[c]]


def test_a_file_renamed_after_the_decision_is_still_its_code(repo):
    code_commit(repo, "src/db.py", 20, "2026-01-01T10:00:00Z", "db layer")
    d = log_decision(repo, "Storage: one module", "paths: src/db.py\n\nOne place.")
    moved = code_commit(repo, "src/store/db.py", 0, "2030-01-01T00:00:00Z", "move", mv=("src/db.py", "src/store/db.py"))
    edited = code_commit(repo, "src/store/db.py", 4, "2030-01-02T00:00:00Z", "edit under the new name")
    rows = stale_json(repo)
    assert [r["id"] for r in rows] == [d]
    assert rows[0]["commits"] == [edited, moved]
    assert rows[0]["lines"] == 4 and rows[0]["where"] == {"src/store/": 4}  # a pure rename moves no line


def test_why_follows_a_file_across_a_rename_and_reads_paths_from_the_current_directory(repo):
    code_commit(repo, "README", 1, "2026-01-01T10:00:00Z", "readme")
    d = log_decision(repo, "Parser: hand-written", "Control over errors.")
    (repo / "src").mkdir()
    (repo / "src" / "parse.py").write_text("".join(f"def rule_{n}(): ...\n" for n in range(20)))
    git(repo, "add", "src/parse.py")
    git(repo, "commit", "-q", "-m", "parser", "-m", f"Lifeline: {d}")
    code_commit(
        repo,
        "src/lang/parse.py",
        1,
        "2030-01-01T00:00:00Z",
        "move the parser",
        mv=("src/parse.py", "src/lang/parse.py"),
    )
    res = cli(repo, "why", "src/lang/parse.py")
    assert res.code == 0 and d[:8] in res.out and "(commit" in res.out, res
    res = cli(repo / "src", "why", "lang/parse.py")  # relative to where the user stands, as in git
    assert res.code == 0 and d[:8] in res.out, res
    res = cli(repo / "src" / "lang", "why", "../lang")
    assert res.code == 0 and d[:8] not in res.out  # the directory's history, no rename to follow into it
    assert d[:8] in cli(repo / "src", "why", "parse.py").out  # the old name: a path of the history
    assert cli(repo / "src", "why", "nothing.py").code == 2  # neither a path from here nor a commit


def test_a_recheck_made_against_a_later_commit_covers_what_it_saw(repo):
    code_commit(repo, "api/app.py", 3, "2026-01-01T10:00:00Z", "api")
    led = open_ledger(repo)
    d = led.log(
        Draft(kind="decision", summary="API: REST", body="paths: api/\n\nSimple.", ts="2026-01-01T10:00:01Z")
    ).entry
    code_commit(repo, "api/app.py", 2, "2026-01-02T10:00:00Z", "grow the api")
    assert [len(s.commits) for s in led.stale()] == [1]
    # a note naming the decision, made in the same second as the code it looked at
    led.log(Draft(kind="note", summary="Still REST", body="Checked.", parents=[d.id], ts="2026-01-02T10:00:00Z"))
    assert led.stale() == []
    c = code_commit(repo, "api/app.py", 1, "2026-01-02T10:00:00Z", "same second, after the re-check")
    assert [s.commits for s in led.stale()] == [[c]]


def test_an_entry_without_a_code_record_falls_back_to_time(repo):
    code_commit(repo, "lib/a.py", 3, "2026-01-05T00:00:00Z", "lib")
    led = open_ledger(repo)
    # dated before HEAD (imports, backdated entries): no record of the code it saw
    led.log(
        Draft(kind="decision", summary="Lib: stdlib only", body="paths: lib/\n\nFew deps.", ts="2026-01-01T00:00:00Z")
    )
    assert "Lifeline-Code" not in git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")
    assert [len(s.commits) for s in led.stale()] == [1]  # the commit after it by time


def test_a_ledger_commit_claiming_another_entrys_id_records_nothing_for_it(repo):
    base = code_commit(repo, "x/a.py", 1, "2026-01-01T00:00:00Z", "x")
    store = LineStore(open_repo(str(repo)))
    d = make_entry(1, body="paths: x/\n\nWhy.", ts=at("2026-02-01T00:00:00Z"))
    store.append([d], lambda new: f"decision\n\nLifeline-Id: {d.id}\n")
    later = code_commit(repo, "x/a.py", 1, "2026-03-01T00:00:00Z", "x again")
    liar = make_entry(2, ts=at("2026-04-01T00:00:00Z"))
    store.append([liar], lambda new: f"note\n\nLifeline-Id: {liar.id}\nLifeline-Id: {d.id}\n")
    assert code_trailer(git(repo, "log", "-1", "--format=%B", "refs/lifeline/main"))[0] == later
    made, _ = recorded_code(store, {d.id: "2026-02-01T00:00:00.000000"}, {})
    assert made == {d.id: base}


def test_a_hostile_commit_header_or_pathspec_never_reaches_git_as_an_option(repo, tmp_path):
    code_commit(repo, "src/a.py", 1, "2026-01-01T00:00:00Z", "a")
    target = tmp_path / "owned"
    store = LineStore(open_repo(str(repo)))
    for i, body in enumerate((f"commit: --output={target}\npaths: src/\n\nx", f"paths: --output={target} src/\n\nx")):
        store.append([make_entry(i, body=body, ts=at("2026-01-02T00:00:00Z"))], lambda new: "decision\n")
    code_commit(repo, "src/a.py", 1, "2026-01-03T00:00:00Z", "b")
    for args in (("stale",), ("context",)):
        res = cli(repo, *args)
        assert res.code == 0, res
    assert not target.exists()
    # the bad commit: header is ignored and its entry's paths still count; a paths: header holding a
    # hostile value is invalid as a whole (FORMAT §8), so that entry has no code to go stale
    assert len(stale_json(repo)) == 1


def test_git_pathspec_settings_in_the_environment_do_not_change_the_verdict(repo):
    code_commit(repo, "README", 1, "2026-01-01T10:00:00Z", "readme")
    log_decision(repo, "Schema rules", "paths: *.sql\n\nNormalise.")
    code_commit(repo, "db/schema.sql", 3, "2030-01-01T00:00:00Z", "schema")
    res = cli(repo, "stale", "--json", env={"GIT_LITERAL_PATHSPECS": "1"})
    assert res.code == 0 and len(json.loads(res.out)) == 1, res


def test_a_damaged_code_changes_cache_is_never_served(repo):
    code_commit(repo, "src/a.py", 3, "2026-01-01T10:00:00Z", "a")
    led = open_ledger(repo)
    led.log(Draft(kind="decision", summary="Src rules", body="paths: src/\n\nWhy.", ts="2026-01-01T10:00:01Z"))
    c = code_commit(repo, "src/a.py", 2, "2026-01-02T00:00:00Z", "b")
    assert [s.commits for s in led.stale()] == [[c]]
    cache = repo / ".git" / "lifeline" / "code-changes.json"
    doc = json.loads(cache.read_text())
    assert doc["head"] == c and len(doc["entries"]) == 1  # remembered for this HEAD
    for key in doc["entries"]:
        doc["entries"][key] = []  # the answer emptied, the digest left as it was
    cache.write_text(json.dumps(doc))
    assert [s.commits for s in led.stale()] == [[c]]
    cache.write_text("{not json")
    assert [s.commits for s in led.stale()] == [[c]]
    d = code_commit(repo, "src/a.py", 1, "2026-01-03T00:00:00Z", "c")
    assert [s.commits for s in led.stale()] == [[d, c]]  # a new HEAD: the old answers are not used
