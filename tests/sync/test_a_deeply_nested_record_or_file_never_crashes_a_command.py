"""Issue 28, item 8: JSON nested fifty thousand levels deep is valid JSON, and the
parser raised RecursionError on it. One such review record on a remote that runs no hook
crashed `pull`, `sync`, `clone` and `verify` for every teammate (exit 3, no line came in);
the same in `.mcp.json` or `.claude/settings.json` crashed `init`, `status` and `doctor`.
Every JSON parse of outside input now goes through one bounded reader (core/json_input.py):
the record is a bad record of its line, the file a file left untouched."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from kit.repos import commit_file, head, init_repo, open_ledger
from kit.run import ROOT, cli, git
from kit.tamper import add_commit

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.core.json_input import MAX_DEPTH, JSONInputError, read_json

DEEP = 50_000  # 100 KB: within the size of a record, far past any recursion limit
NESTED = ("[" * DEEP + "]" * DEEP).encode()


def nested_record(repo: Path, line: str) -> None:
    data = b'{"v":' + NESTED + b"}\n"
    rid = hashlib.sha256(data).hexdigest()
    path = f"records/{rid[:2]}/{rid[2:4]}/{rid[4:]}"
    add_commit(repo, lambda files: {**files, path: data}, ref=f"refs/lifeline-review/{line}")


@pytest.fixture
def remote_with_a_nested_record(tmp_path):
    """A bare remote without hooks: line main (good) and line ops, whose review trail ends
    in a record nested DEEP levels deep."""
    a = init_repo(tmp_path / "a")
    commit_file(a)
    open_ledger(a).log(Draft(kind="bootstrap", summary="Project", body="why"))
    Agents(open_ledger(a, "ops")).propose(Draft(kind="note", summary="Runbook", body="steps"), via="cli")
    nested_record(a, "ops")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(a, "remote", "add", "origin", str(bare))
    git(
        a,
        "push",
        "-q",
        "origin",
        "main",
        "refs/lifeline/*:refs/lifeline/*",
        "refs/lifeline-review/*:refs/lifeline-review/*",
    )
    return a, bare


def assert_no_crash(res) -> None:
    assert res.code != 3 and "Traceback" not in res.err and "internal error" not in res.err, res
    assert "RecursionError" not in res.err + res.out, res


def test_pull_of_a_nested_record_brings_the_other_lines(remote_with_a_nested_record, tmp_path):
    _, bare = remote_with_a_nested_record
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    res = cli(b, "pull")
    assert_no_crash(res)
    assert res.code == 1 and "line ops" in res.err and "nested deeper than" in res.err, res
    assert head(b, "refs/lifeline/main") == head(bare, "refs/lifeline/main")


def test_sync_with_a_nested_record_exits_1_and_brings_the_other_lines(remote_with_a_nested_record, tmp_path):
    _, bare = remote_with_a_nested_record
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    res = cli(b, "sync")
    assert_no_crash(res)
    assert res.code == 1 and head(b, "refs/lifeline/main") == head(bare, "refs/lifeline/main"), res


def test_clone_of_a_remote_with_a_nested_record_brings_the_other_lines(remote_with_a_nested_record, tmp_path):
    _, bare = remote_with_a_nested_record
    res = cli(tmp_path, "clone", str(bare), str(tmp_path / "c"))
    assert_no_crash(res)
    assert head(tmp_path / "c", "refs/lifeline/main") == head(bare, "refs/lifeline/main"), res


def test_verify_reports_a_nested_record_as_a_bad_record(remote_with_a_nested_record):
    a, _ = remote_with_a_nested_record
    res = cli(a, "verify")
    assert_no_crash(res)
    assert res.code != 0 and "bad-record" in res.out + res.err and "nested deeper than" in res.out + res.err, res


@pytest.mark.parametrize("name", [".mcp.json", ".claude/settings.json"])
@pytest.mark.parametrize("command", [("init",), ("status",), ("doctor",)])
def test_a_nested_agent_client_file_is_left_untouched_never_a_crash(tmp_path, name, command):
    repo = init_repo(tmp_path / "repo")
    commit_file(repo)
    target = repo / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(b'{"mcpServers": {"x": ' + NESTED + b"}}")
    before = target.read_bytes()
    res = cli(repo, *command)
    assert_no_crash(res)
    assert target.read_bytes() == before
    if command == ("init",):
        assert "nested deeper than" in res.out + res.err, res


def test_the_bounded_reader_refuses_past_its_depth_and_size_and_reads_within():
    within = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert read_json(within, len(within)) is not None
    for hostile, bound in (("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), 10**6), (NESTED, 10**6), ("[1]", 2)):
        with pytest.raises(JSONInputError):
            read_json(hostile, bound)


def test_every_json_parse_of_input_goes_through_the_bounded_reader():
    # json.loads / json.load elsewhere would be a parse the bounds do not cover; the one
    # left is the CLI turning an Entry we just encoded back into a dict for --json.
    allowed = {"core/json_input.py": None, "cli/common.py": "json.loads(e.to_json())"}
    found = []
    for path in sorted((ROOT / "git_lifeline").rglob("*.py")):
        rel = path.relative_to(ROOT / "git_lifeline").as_posix()
        for line in path.read_text().splitlines():
            if re.search(r"\bjson\.loads?\(|\.decode\(", line) and "JSONDecoder" not in line:
                if re.search(r"\bjson\.loads?\(", line) and rel not in allowed:
                    found.append(f"{rel}: {line.strip()}")
                elif rel == "cli/common.py" and "json.loads(" in line and allowed[rel] not in line:
                    found.append(f"{rel}: {line.strip()}")
    assert found == []
