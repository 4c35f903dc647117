"""git hands pre-receive and pre-push their ref updates on stdin as bytes: one update a line,
ended by a line feed, its fields apart by one space. A ref name holds no ASCII space or
control character, but it may hold any other character, Unicode spaces and line separators
included. The hooks read that input as text split by Python's rules (str.split, splitlines),
which also cut at U+00A0, U+3000, U+0085, U+2028: an update of `refs/lifeline/a<U+00A0>b`
split into four fields and was skipped, so a code commit landed under refs/lifeline/ past
the server's gate; `refs/lifeline/a<U+2028>b` was judged as a line `a`. Real servers, the real
git, no mocks; each test failed before the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.repos import client, commit_file, git_push
from kit.run import cli, git

from git_lifeline.app.hook_files import install
from git_lifeline.git.repo import open_repo

# each a valid git ref name component: git refuses only ASCII controls, space and ~^:?*[\
NAMES = {
    "no-break space": "a\u00a0b",
    "ideographic space": "a\u3000b",
    "next line": "a\u0085b",
    "line separator": "a\u2028b",
    "trailing next line": "main\u0085",
}


def ledger_refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/lifeline", "refs/lifeline-review")


def with_code_under(tmp_path: Path, server: Path, name: str) -> Path:
    """A clone whose ref `refs/lifeline/<name>` names a code commit (no ledger at all)."""
    a = client(tmp_path, "a", server)
    commit_file(a)
    git(a, "update-ref", f"refs/lifeline/{name}", "HEAD")
    return a


@pytest.mark.parametrize("name", sorted(NAMES), ids=sorted(NAMES))
def test_pre_receive_refuses_a_ref_of_ours_whose_name_holds_a_unicode_space(tmp_path, server, name):
    ref = f"refs/lifeline/{NAMES[name]}"
    a = with_code_under(tmp_path, server, NAMES[name])
    code, err = git_push(a, f"{ref}:{ref}", flags=("--no-verify",))
    assert code != 0 and "ledger update refused" in err and "not a valid line name" in err, err
    assert ledger_refs(server) == ""


@pytest.mark.parametrize("name", sorted(NAMES), ids=sorted(NAMES))
def test_pre_push_refuses_a_ref_of_ours_whose_name_holds_a_unicode_space(tmp_path, remote, git_dispatch, name):
    ref = f"refs/lifeline/{NAMES[name]}"
    a = with_code_under(tmp_path, remote, NAMES[name])
    install(open_repo(str(a)), ["pre-push"])
    code, err = git_push(a, f"{ref}:{ref}")
    assert code != 0 and "push refused" in err and "not a valid line name" in err, err
    assert ledger_refs(remote) == ""


def test_the_hooks_still_pass_a_good_line_with_code_in_the_same_push(tmp_path, server):
    a = client(tmp_path, "a", server)
    commit_file(a)
    assert cli(a, "log", "--kind", "note", "--summary", "A note", "--body", "why").code == 0
    code, err = git_push(a, "HEAD:refs/heads/main", "refs/lifeline/main")
    assert code == 0, err
    assert ledger_refs(server) == "refs/lifeline/main"
