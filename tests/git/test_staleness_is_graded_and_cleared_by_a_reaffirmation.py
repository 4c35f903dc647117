"""Graded staleness and re-affirmation on real repositories: a deleted module reads
*removed* and outranks a touched comment; a `Lifeline:` trailer and `git lifeline
reaffirm` each clear a mark without changing the decision's why."""

from __future__ import annotations

import json
from pathlib import Path

from kit.repos import logged_id
from kit.run import Via, cli, git

FAST = Via.THIS_PROCESS


def commit_files(repo: Path, files: dict, message: str) -> str:
    for path, text in files.items():
        f = repo / path
        if text is None:
            git(repo, "rm", "-q", "-r", path)
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def decision(repo: Path, summary: str, body: str) -> str:
    return logged_id(repo, "decision", summary, body, via=FAST)


def stale_rows(repo: Path) -> list:
    res = cli(repo, "stale", "--json", via=FAST)
    assert res.code == 0, res
    return json.loads(res.out)


def lines(n: int, word: str = "code") -> str:
    return "".join(f"{word} {i}\n" for i in range(n))


def two_decisions(repo: Path) -> tuple:
    commit_files(repo, {"src/legacy/io.py": lines(50), "src/api/handlers.py": lines(200)}, "code")
    legacy = decision(repo, "Legacy IO stays isolated", "paths: src/legacy/\n\nOne door to the old system.")
    api = decision(repo, "Handlers are thin", "paths: src/api/\n\nLogic lives below.")
    return legacy, api


def test_a_deleted_module_reads_removed_and_outranks_a_touched_comment(repo):
    legacy, api = two_decisions(repo)
    commit_files(repo, {"src/api/handlers.py": "# a comment\n" + lines(200)}, "comment")
    commit_files(repo, {"src/api/handlers.py": "# a comment, again\n" + lines(200)}, "comment again")
    commit_files(repo, {"src/legacy/io.py": None}, "drop the legacy module")
    rows = stale_rows(repo)
    assert [(r["id"], r["grade"]) for r in rows] == [(legacy, "removed"), (api, "touched")]
    assert rows[0]["files_now"] == 0 and rows[1]["lines_now"] == 201
    text = cli(repo, "stale", via=FAST).out
    assert text.index("removed") < text.index("touched")
    assert "git lifeline reaffirm" in text


def test_most_of_a_file_changed_reads_rewritten(repo):
    _legacy, api = two_decisions(repo)
    commit_files(repo, {"src/api/handlers.py": lines(120, "new")}, "rewrite")
    assert [(r["id"], r["grade"]) for r in stale_rows(repo)] == [(api, "rewritten")]


def why_of(repo: Path, entry_id: str) -> str:
    res = cli(repo, "show", entry_id, "--json", via=FAST)
    assert res.code == 0, res
    return json.loads(res.out)["body"]


def test_reaffirm_clears_the_mark_and_leaves_the_why_as_it_was(repo):
    _legacy, api = two_decisions(repo)
    before = why_of(repo, api)
    commit_files(repo, {"src/api/handlers.py": "# note\n" + lines(200)}, "comment")
    assert api in [r["id"] for r in stale_rows(repo)]
    res = cli(repo, "reaffirm", api[:10], "--body", "Still thin after the comment.", via=FAST)
    assert res.code == 0, res
    assert api not in [r["id"] for r in stale_rows(repo)]
    assert why_of(repo, api) == before
    shown = cli(repo, "show", api[:10], via=FAST).out
    assert "re-affirmed" in shown and "Still thin after the comment." in shown
    commit_files(repo, {"src/api/handlers.py": "# note 2\n" + lines(200)}, "another")
    assert api in [r["id"] for r in stale_rows(repo)]  # until the code changes again


def test_reaffirm_at_an_older_commit_leaves_what_came_after_it_counted(repo):
    _legacy, api = two_decisions(repo)
    first = commit_files(repo, {"src/api/handlers.py": "# one\n" + lines(200)}, "one")
    second = commit_files(repo, {"src/api/handlers.py": "# two\n" + lines(200)}, "two")
    assert cli(repo, "reaffirm", api[:10], "--at", first, via=FAST).code == 0
    [row] = stale_rows(repo)
    assert row["id"] == api and row["commits"] == [second]


def test_reaffirm_refuses_what_is_no_decision_in_force_or_no_commit_and_writes_nothing(repo):
    _legacy, api = two_decisions(repo)
    head = git(repo, "rev-parse", "refs/lifeline/main")
    for args in (
        ["reaffirm", api[:10], "--at", "--all"],
        ["reaffirm", api[:10], "--at", "nope"],
        ["reaffirm", "ffffff"],
    ):
        res = cli(repo, *args, via=FAST)
        assert res.code == 2, (args, res)
    assert git(repo, "rev-parse", "refs/lifeline/main") == head


def test_a_commit_whose_trailer_names_the_decision_clears_its_mark(repo):
    _legacy, api = two_decisions(repo)
    before = why_of(repo, api)
    commit_files(repo, {"src/api/handlers.py": "# implements\n" + lines(200)}, f"implement\n\nLifeline: {api[:12]}")
    assert api not in [r["id"] for r in stale_rows(repo)]
    assert why_of(repo, api) == before
    later = commit_files(repo, {"src/api/handlers.py": "# later\n" + lines(200)}, "later")
    assert [r["commits"] for r in stale_rows(repo) if r["id"] == api] == [[later]]
