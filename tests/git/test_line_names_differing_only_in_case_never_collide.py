"""Two line names equal but for case (`Main` and `main`; generally equal after NFKC and
case folding) are one ref on a case-insensitive file system (macOS, Windows keep a loose
ref as a file), so one clone would read or overwrite the other line. No write creates
such a pair, and no gate lets one land: pull, push, the pre-push and pre-receive hooks
and verify all ask the one check (fanout.name_clashes), for a line and its review trail
alike. A single line is never refused for its case, and an existing pair keeps working
where it was made: verify names it, and no gate lets it spread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit.repos import client, git_push, init_repo, open_ledger, snapshot
from kit.run import cli, git

from git_lifeline.app.draft import Draft


def log(repo: Path, line: str, summary: str = "A decision") -> None:
    res = cli(repo, "--line", line, "log", "--kind", "note", "--summary", summary, "--body", "why")
    assert res.code == 0, res


# ---- the rule ------------------------------------------------------------------------------------
def test_names_equal_after_case_folding_clash_and_a_name_already_present_never_does():
    from git_lifeline.git.fanout import name_clashes, name_key

    assert name_clashes({"main"}, ["Main"]) == {"Main": "main"}
    assert name_clashes(set(), ["MAIN", "main"]) == {"MAIN": "main", "main": "MAIN"}
    assert name_clashes({"Main", "main"}, ["Main"]) == {}  # already there: not refused here
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
    entry = open_ledger(repo, "research").log(Draft(kind="note", summary="Finding", body="measured")).entry
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
    entry = open_ledger(repo).log(Draft(kind="note", summary="A decision", body="why")).entry
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


# ---- gates -----------------------------------------------------------------------------------------
def hand_made_pair(tmp_path: Path, repo: Path) -> None:
    """`main` and `Main` side by side in `repo`, as git itself (or a clone made before the
    rule) can hold them: `Main` fetched by hand from another repository."""
    log(repo, "main")
    other = init_repo(tmp_path / f"other-{repo.name}")
    log(other, "Main", "Written elsewhere")
    git(repo, "fetch", "-q", str(other), "refs/lifeline/Main:refs/lifeline/Main")


def with_trail(repo: Path, line: str) -> None:
    """A review trail for `line` (a proposal), as `git lifeline propose` writes one."""
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.trails import ReviewTrail

    entry = open_ledger(repo, line).entries()[0]
    ReviewTrail(open_repo(str(repo)), line).propose(entry, "Ana <ana@example.com>", "cli")


def ref(repo: Path, name: str):
    return git(repo, "rev-parse", "-q", "--verify", name, check=False) or None


def lifeline_refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/lifeline", "refs/lifeline-review")


def test_a_pushed_pair_of_lines_colliding_by_case_is_refused_by_pre_receive(tmp_path, server):
    a = client(tmp_path, "a", server)
    hand_made_pair(tmp_path, a)
    code, err = git_push(a, "refs/lifeline/main", "refs/lifeline/Main", flags=("--no-verify",))
    assert code != 0 and "ledger update refused" in err and "name-clash" in err, err
    assert lifeline_refs(server) == ""


@pytest.mark.parametrize("family", ["refs/lifeline/", "refs/lifeline-review/"])
def test_pre_receive_refuses_a_line_or_review_trail_colliding_by_case_with_a_line_the_server_has(
    tmp_path, server, family
):
    a = client(tmp_path, "a", server)
    log(a, "main")
    code, err = git_push(a, "refs/lifeline/main")
    assert code == 0, err
    b = client(tmp_path, "b", server)
    log(b, "MAIN")
    with_trail(b, "MAIN")
    before = lifeline_refs(server)
    code, err = git_push(b, f"{family}MAIN", flags=("--no-verify",))
    assert code != 0 and "name-clash" in err and "'main'" in err, err
    assert lifeline_refs(server) == before


def test_pre_push_refuses_a_line_colliding_by_case_with_one_the_remote_has(tmp_path, remote, git_dispatch):
    from git_lifeline.app.hook_files import install
    from git_lifeline.git.repo import open_repo

    a = client(tmp_path, "a", remote)
    log(a, "main")
    assert cli(a, "push").code == 0
    b = client(tmp_path, "b", remote)
    assert cli(b, "fetch").code == 0
    log(b, "Main")  # nothing here is named main: b only fetched it
    install(open_repo(str(b)), ["pre-push"])
    code, err = git_push(b, "refs/lifeline/Main")
    assert code != 0 and "push refused" in err and "name-clash" in err, err
    assert ref(remote, "refs/lifeline/Main") is None


def test_git_lifeline_push_refuses_a_pair_colliding_by_case_and_pushes_nothing(tmp_path, remote):
    a = client(tmp_path, "a", remote)
    hand_made_pair(tmp_path, a)
    res = cli(a, "push")
    assert res.code == 1 and "name-clash" in res.err and "nothing was pushed" in res.err, res
    assert lifeline_refs(remote) == ""


def remote_offering_a_pair(tmp_path: Path, remote: Path) -> Path:
    """A hook-less remote holding line main, and line Main with its review trail (pushed
    by hand from another clone); returns the clone that wrote main."""
    a = client(tmp_path, "a", remote)
    log(a, "main")
    assert cli(a, "push").code == 0
    x = client(tmp_path, "x", remote)
    log(x, "Main", "Written on x")
    with_trail(x, "Main")
    code, err = git_push(x, "refs/lifeline/Main", "refs/lifeline-review/Main")
    assert code == 0, err
    return a


def test_pull_refuses_a_line_colliding_by_case_with_one_we_have_and_brings_the_others(tmp_path, remote):
    a = remote_offering_a_pair(tmp_path, remote)
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "--line", "main").code == 0
    log(a, "main", "More")
    log(a, "ops")
    assert cli(a, "push").code == 0
    res = cli(b, "pull")
    assert res.code == 1 and "name-clash" in res.err and "line Main" in res.err, res
    assert "Traceback" not in res.err, res
    assert ref(b, "refs/lifeline/Main") is None and ref(b, "refs/lifeline-review/Main") is None
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main")
    assert ref(b, "refs/lifeline/ops") == ref(a, "refs/lifeline/ops")


def test_pull_refuses_both_lines_of_a_pair_colliding_by_case_when_neither_is_here(tmp_path, remote):
    remote_offering_a_pair(tmp_path, remote)
    c = client(tmp_path, "c", remote)
    res = cli(c, "pull")
    assert res.code == 1 and "name-clash" in res.err, res
    assert lifeline_refs(c) == ""


def test_verify_names_a_pair_of_lines_colliding_by_case(tmp_path):
    repo = init_repo(tmp_path / "repo")
    hand_made_pair(tmp_path, repo)
    res = cli(repo, "verify")
    assert res.code == 1, res
    assert res.out.count("name-clash") == 2 and "'Main'" in res.out and "'main'" in res.out, res
    # each line of the pair still reads as itself
    assert [e.summary for e in open_ledger(repo, "Main").entries()] == ["Written elsewhere"]


# ---- reads -------------------------------------------------------------------------------------------
READS = [["list"], ["show", "HEAD"], ["render"], ["context"], ["verify"]]


@pytest.mark.parametrize("argv", READS, ids=[a[0] for a in READS])
def test_a_read_of_a_line_differing_only_in_case_from_one_in_use_names_that_line_and_writes_nothing(tmp_path, argv):
    """Where the file system ignores case, `--line Main` found the ref file of `main` and
    read (and rendered, and cached) it as line Main; where it does not, it read as an
    unknown or empty line. Either way the user is told which line the name stands for."""
    repo = init_repo(tmp_path / "repo")
    log(repo, "main")
    before = snapshot(repo)
    res = cli(repo, "--line", "Main", *argv)
    assert res.code == 2 and "'Main'" in res.err and "'main'" in res.err and "only in case" in res.err, res
    assert "--line main" in res.err, res
    assert snapshot(repo) == before and not (repo / "LIFELINE.Main.md").exists()


def test_an_agent_asking_for_a_line_differing_only_in_case_is_told_which_line_it_is(tmp_path):
    """The MCP door answered `Main` with an empty context (or, where case is ignored, with
    the entries of `main` under the name Main)."""
    from git_lifeline.errors import InputError
    from git_lifeline.mcp.server import Door, context_text

    repo = init_repo(tmp_path / "repo")
    log(repo, "main")
    door = Door(str(repo))
    with pytest.raises(InputError, match="only in case"):
        context_text(door.ledger("Main"), 8000, None)
    assert "A decision" in context_text(door.ledger("main"), 8000, None)


@pytest.mark.parametrize("ignorecase", ["true", "false"])
def test_a_clashing_name_is_refused_and_the_line_in_use_still_written_whatever_core_ignorecase_says(
    tmp_path, ignorecase
):
    """core.ignorecase (set by git where the file system ignores case) makes every check
    list the refs instead of trusting a lookup by the exact name; both ways agree here."""
    repo = init_repo(tmp_path / "repo")
    git(repo, "config", "core.ignorecase", ignorecase)
    log(repo, "main")
    log(repo, "main", "Second")
    before = snapshot(repo)
    res = cli(repo, "--line", "MAIN", "log", "--kind", "note", "--summary", "S", "--body", "b")
    assert res.code == 2 and "only in case" in res.err, res
    assert snapshot(repo) == before
    assert len(open_ledger(repo, "main").entries()) == 2


def test_pull_says_a_line_left_out_for_its_name_clashes_and_how_to_part_the_pair_not_that_it_fails_verification(
    tmp_path, remote
):
    """The refusal said the line 'fails verification' and told whoever pushed it to run
    `git lifeline verify --line Main` on their clone, where it passes: nothing there is
    wrong but its name beside ours."""
    a = remote_offering_a_pair(tmp_path, remote)
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "--line", "main").code == 0
    res = cli(b, "pull")
    assert res.code == 1 and "name-clash" in res.err, res
    assert "verification" not in res.err and "verify --line Main" not in res.err, res
    assert "git lifeline promote --from Main" in res.err and "refs/lifeline/Main" in res.err, res
    assert "git lifeline sync origin --line main" in res.err, res
    assert ref(b, "refs/lifeline/main") == ref(a, "refs/lifeline/main")


def test_status_names_a_remote_line_differing_only_in_case_from_ours_instead_of_failing_or_reading_ours(
    tmp_path, remote
):
    """Status reads every line here and on the remote as last fetched; the remote's `Main`
    beside our `main` is shown as a clash, never read through our ref (where case is
    ignored, `Main` finds the file of `main`), and status still answers."""
    remote_offering_a_pair(tmp_path, remote)
    b = client(tmp_path, "b", remote)
    assert cli(b, "pull", "--line", "main").code == 0
    assert cli(b, "fetch").code == 0
    res = cli(b, "status", "--quick")
    assert res.code == 0, res
    assert "line Main: name-clash: differs only in case from line main" in res.out, res
    assert "line main: head " in res.out, res
    rows = {r["line"]: r for r in json.loads(cli(b, "status", "--quick", "--json").out)["lines"]}
    assert rows["Main"]["clash"] == "main" and rows["Main"]["head"] is None and rows["main"]["clash"] is None
