"""Anchors on real repositories: a decision whose `paths:` names lines of a file
(`file#L5-8`) or a symbol (`file#login`) is stale only when a commit touches those lines
or that body, followed across edits above them and across a rename; a deleted file reads
*removed*; a malformed range is refused at write time and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit.repos import logged_id
from kit.run import Via, cli, git

from git_lifeline.core.anchors import Hunk, LineAnchor, SymbolAnchor, map_lines, parse_anchor

FAST = Via.THIS_PROCESS


def numbered(n: int = 20) -> str:
    return "".join(f"x{i} = {i}\n" for i in range(1, n + 1))


FUNCS = "def login(user):\n    token = 1\n    return token\n\n\ndef logout(user):\n    return None\n"


def commit(repo: Path, files: dict, message: str) -> str:
    for path, text in files.items():
        if text is None:
            git(repo, "rm", "-q", path)
            continue
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def edit(repo: Path, path: str, old: str, new: str, message: str) -> str:
    text = (repo / path).read_text()
    assert old in text
    return commit(repo, {path: text.replace(old, new, 1)}, message)


def decision(repo: Path, summary: str, paths: str) -> str:
    return logged_id(repo, "decision", summary, None, "--paths", paths, via=FAST)


def stale(repo: Path) -> dict:
    res = cli(repo, "stale", "--json", via=FAST)
    assert res.code == 0, res
    return {row["id"]: row for row in json.loads(res.out)}


def test_an_edit_outside_the_range_does_not_stale_it_and_one_inside_does(repo):
    commit(repo, {"a.py": numbered()}, "code")
    d = decision(repo, "Lines 5 to 8 hold the limits", "a.py#L5-8")
    edit(repo, "a.py", "x1 = 1\n", "# three new lines\n# above\n# the range\nx1 = 1\n", "lines above move it")
    edit(repo, "a.py", "x4 = 4\nx5", "x4 = 44\nx5", "the line just before")
    edit(repo, "a.py", "x9 = 9\n", "x9 = 99\n", "the line just after")
    assert d not in stale(repo)
    inside = edit(repo, "a.py", "x6 = 6\n", "x6 = 66\n", "inside")
    row = stale(repo)[d]
    assert (row["commits"], row["lines"], row["lines_now"], row["grade"]) == ([inside], 2, 4, "touched")


def test_the_range_is_followed_across_a_rename(repo):
    commit(repo, {"a.py": numbered()}, "code")
    d = decision(repo, "Lines 5 to 8 hold the limits", "a.py#L5-8")
    git(repo, "mv", "a.py", "b.py")
    git(repo, "commit", "-q", "-m", "rename")
    edit(repo, "b.py", "x12 = 12\n", "x12 = 0\n", "outside, after the rename")
    assert d not in stale(repo)
    inside = edit(repo, "b.py", "x7 = 7\n", "x7 = 77\n", "inside, after the rename")
    assert stale(repo)[d]["commits"] == [inside]


def test_a_symbol_stales_only_when_its_body_changes(repo):
    commit(repo, {"auth.py": FUNCS}, "code")
    login = decision(repo, "Login issues one token", "auth.py#login")
    edit(repo, "auth.py", "    return None\n", "    return False\n", "logout changes")
    assert login not in stale(repo)
    body = edit(repo, "auth.py", "    token = 1\n", "    token = 2\n", "login changes")
    assert stale(repo)[login]["commits"] == [body]


def test_a_deleted_file_or_symbol_reads_removed(repo):
    commit(repo, {"a.py": numbered(), "auth.py": FUNCS}, "code")
    lines = decision(repo, "Lines 5 to 8 hold the limits", "a.py#L5-8")
    login = decision(repo, "Login issues one token", "auth.py#login")
    commit(repo, {"a.py": None, "auth.py": FUNCS.split("\n\n\n", 1)[1]}, "drop a.py and login")
    rows = stale(repo)
    assert (rows[lines]["grade"], rows[lines]["files_now"]) == ("removed", 0)
    assert (rows[login]["grade"], rows[login]["files_now"]) == ("removed", 0)


def test_pr_grades_a_branch_by_the_lines_a_decision_names(repo):
    commit(repo, {"a.py": numbered()}, "code")
    d = decision(repo, "Lines 5 to 8 hold the limits", "a.py#L5-8")
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, "a.py", "x15 = 15\n", "x15 = 0\n", "outside")
    res = cli(repo, "pr", "main...feature", "--format", "json", via=FAST)
    assert res.code == 0, res
    assert json.loads(res.out)["touched"] == []
    edit(repo, "a.py", "x5 = 5\n", "x5 = 0\n", "inside")
    [t] = json.loads(cli(repo, "pr", "main...feature", "--format", "json", via=FAST).out)["touched"]
    assert (t["id"], t["paths"], t["lines"], t["lines_now"]) == (d, ["a.py#L5-8"], 2, 4)


@pytest.mark.parametrize("paths", ["a.py#L8-5", "a.py#L0-3", "a.py#L5-", "a.py#5-8", "src/*.py#L1-2", "#login"])
def test_a_malformed_range_is_refused_at_write_and_writes_nothing(repo, paths):
    commit(repo, {"a.py": numbered()}, "code")
    decision(repo, "Something before", "a.py")
    before = git(repo, "rev-parse", "refs/lifeline/main")
    for args in (["--paths", paths], ["--body", f"paths: {paths}\n\nWhy."]):
        res = cli(repo, "log", "--kind", "decision", "--summary", "Bad range", *args, via=FAST)
        assert res.code == 2, (args, res)
        assert "paths:" in res.err and paths.split("#")[0] in res.err
    assert git(repo, "rev-parse", "refs/lifeline/main") == before


def test_what_is_an_anchor_and_what_stays_a_pathspec():
    assert parse_anchor("src/auth.py#L10-40") == LineAnchor("src/auth.py", 10, 40)
    assert parse_anchor("/src/auth.py#L10-L40") == LineAnchor("src/auth.py", 10, 40)
    assert parse_anchor("src/auth.py#L12") == LineAnchor("src/auth.py", 12, 12)
    assert parse_anchor("src/auth.py#login") == SymbolAnchor("src/auth.py", "login")
    for pathspec in ("src/", "*.sql", ":(literal)notes#1.md", ":(glob)src/**/x#L1-2", "notes#.md", "c#"):
        assert parse_anchor(pathspec) is None, pathspec


def test_a_range_keeps_its_lines_across_hunks_that_straddle_its_edges():
    # lines 4 and 5 edited in one hunk, 3 lines inserted at the top: 5..8 is now 8..11
    hunks = [Hunk(0, 0, 1, 3), Hunk(4, 2, 7, 2)]
    assert map_lines(hunks, 5, 8) == (8, 11)
    assert map_lines([Hunk(4, 6, 3, 0)], 5, 8) is None  # all deleted
    assert map_lines([Hunk(6, 1, 6, 3)], 5, 8) == (5, 10)  # grew inside
    assert map_lines([Hunk(9, 0, 10, 2)], 5, 8) == (5, 8)  # added just after


def test_reading_again_at_the_same_head_asks_git_nothing_about_the_anchors(repo, tmp_path, monkeypatch):
    commit(repo, {"a.py": numbered(), "auth.py": FUNCS}, "code")
    lines = decision(repo, "Lines 5 to 8 hold the limits", "a.py#L5-8")
    decision(repo, "Login issues one token", "auth.py#login")
    edit(repo, "a.py", "x1 = 1\n", "# moved\nx1 = 1\n", "above the range")
    edit(repo, "a.py", "x6 = 6\n", "x6 = 66\n", "inside")
    assert list(stale(repo)) == [lines]
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    assert list(stale(repo)) == [lines]
    cli(repo, "context", via=FAST)
    asked = [
        line
        for line in trace.read_text().splitlines()
        if "built-in: git log" in line or "built-in: git diff" in line or "cat-file -e" in line
    ]
    assert asked == []  # the resolved anchors, their logs and sizes are remembered for this HEAD


def test_glob_and_top_magic_name_less_code_and_so_grade_sharper(repo):
    commit(repo, {"src/core.py": numbered(200), "src/api/views.py": numbered(10)}, "code")
    broad = decision(repo, "The source tree is one package", "src/")
    top_level = decision(repo, "Top-level modules stay small", ":(glob)src/*.py")
    api = decision(repo, "Views stay thin", ":(top)src/api/")
    text = (repo / "src/api/views.py").read_text()
    commit(repo, {"src/api/views.py": text.replace(" = ", " == ")}, "rewrite the views")
    rows = stale(repo)
    assert top_level not in rows  # `*` under :(glob) stops at `/`
    assert (rows[broad]["grade"], rows[api]["grade"]) == ("touched", "rewritten")
    assert list(rows) == [api, broad]  # strongest first


def test_a_symbol_gone_from_a_file_whose_name_holds_a_colon_reads_removed(repo):
    commit(repo, {"lib:auth.py": FUNCS}, "code")
    login = decision(repo, "Login issues one token", "lib:auth.py#login")
    commit(repo, {"lib:auth.py": FUNCS.split("\n\n\n", 1)[1]}, "drop login")
    assert stale(repo)[login]["grade"] == "removed"
