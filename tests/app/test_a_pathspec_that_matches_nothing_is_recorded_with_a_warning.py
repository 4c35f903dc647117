"""`--paths` with a pathspec that matches no file is recorded (the code may come later) but
never silently: such a decision can never go stale, so stderr names the pathspec; exit 0."""

from __future__ import annotations

from kit.repos import commit_file
from kit.run import cli


def test_a_pathspec_matching_no_file_warns_naming_it_and_still_records(repo):
    (repo / "src").mkdir()
    commit_file(repo, "src/app.py", "print(1)\n")
    r = cli(repo, "log", "--kind", "decision", "--summary", "Queue", "--body", "Why.",
            "--paths", "srcx/**", "--paths", "src/**", expect=0)  # fmt: skip
    assert "recorded" in r.out, r
    assert "'srcx/**' matches no file" in r.err and "'src/**'" not in r.err, r
    quiet = cli(repo, "log", "--kind", "decision", "--summary", "Other", "--body", "Why.", "--paths", "src/**")
    assert quiet.code == 0 and "matches no file" not in quiet.err, quiet
