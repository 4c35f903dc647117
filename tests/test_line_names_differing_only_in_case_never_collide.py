"""Two line names equal but for case (`Main` and `main`; generally equal after NFKC and
case folding) are one ref on a case-insensitive file system (macOS, Windows keep a loose
ref as a file), so one clone would read or overwrite the other line. No write creates
such a pair, and no gate lets one land: pull, push, the pre-push and pre-receive hooks
and verify all ask the one check (fanout.name_clashes), for a line and its review trail
alike. A single line is never refused for its case, and an existing pair keeps working
where it was made: verify names it, and no gate lets it spread."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cli, init_repo, open_ledger, snapshot


def log(repo: Path, line: str, summary: str = "A decision") -> None:
    res = cli(repo, "--line", line, "log", "--kind", "note", "--summary", summary, "--body", "why")
    assert res.code == 0, res


# ---- the rule ------------------------------------------------------------------------------------
def test_names_equal_after_case_folding_clash_and_a_name_already_present_never_does():
    from git_lifeline.git.fanout import name_clashes, name_key
    assert name_clashes({"main"}, ["Main"]) == {"Main": "main"}
    assert name_clashes(set(), ["MAIN", "main"]) == {"MAIN": "main", "main": "MAIN"}
    assert name_clashes({"Main", "main"}, ["Main"]) == {}           # already there: not refused here
    assert name_clashes({"Research"}, ["research-2", "ops"]) == {}  # uppercase alone is fine
    assert name_clashes({"ops"}, ["OPS"]) == {"OPS": "ops"}
    # NFKC then case folding, not lower(): what a file system that ignores case folds
    assert name_key("STRASSE") == name_key("Straße") and name_key("ﬁle") == name_key("FILE")


# ---- writes --------------------------------------------------------------------------------------
def export_of(repo: Path, tmp_path: Path) -> Path:
    out = tmp_path / "exported.md"
    res = cli(repo, "export", "-o", str(out))
    assert res.code == 0, res
    return out


WRITES = {
    "log": lambda repo, tmp: ["log", "--kind", "note", "--summary", "Another", "--body", "why"],
    "import": lambda repo, tmp: ["import", "--from", str(export_of(repo, tmp))],
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_line_differing_only_in_case_from_an_existing_one_is_refused_and_nothing_is_written(tmp_path, write):
    repo = init_repo(tmp_path / "repo")
    log(repo, "main")
    args = WRITES[write](repo, tmp_path)
    before = snapshot(repo)
    res = cli(repo, "--line", "Main", *args)
    assert res.code == 2, res
    assert "'Main'" in res.err and "'main'" in res.err and "only in case" in res.err, res
    assert "Traceback" not in res.err, res
    assert snapshot(repo) == before


def test_promote_into_a_line_differing_only_in_case_from_an_existing_one_is_refused(tmp_path):
    repo = init_repo(tmp_path / "repo")
    log(repo, "main")
    entry = open_ledger(repo, "research").log(kind="note", summary="Finding", body="measured").entry
    before = snapshot(repo)
    res = cli(repo, "promote", "--from", "research", "--to", "MAIN", "--id", entry.id[:12])
    assert res.code == 2 and "only in case" in res.err, res
    assert snapshot(repo) == before


def test_a_review_trail_whose_name_differs_only_in_case_from_a_line_is_never_created(tmp_path):
    """A line and its review trail share the name: `refs/lifeline-review/Main` would
    clash with `refs/lifeline/main` on every clone that checks out both."""
    from git_lifeline.errors import InputError
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.trails import ReviewTrail
    repo = init_repo(tmp_path / "repo")
    entry = open_ledger(repo).log(kind="note", summary="A decision", body="why").entry
    before = snapshot(repo)
    with pytest.raises(InputError, match="only in case"):
        ReviewTrail(open_repo(str(repo)), "Main").propose(entry, "Ana <ana@example.com>", "cli")
    assert snapshot(repo) == before


def test_a_line_differing_only_in_case_is_refused_whichever_of_the_two_came_first(tmp_path):
    """The line with capitals came first: it is written and verified like any other; the
    lowercase name is the one refused."""
    repo = init_repo(tmp_path / "repo")
    log(repo, "Research")
    log(repo, "Research", "Again")
    assert cli(repo, "--line", "Research", "verify").code == 0
    before = snapshot(repo)
    res = cli(repo, "--line", "research", "log", "--kind", "note", "--summary", "S", "--body", "b")
    assert res.code == 2 and "'Research'" in res.err, res
    assert snapshot(repo) == before
    assert len(open_ledger(repo, "Research").entries()) == 2
