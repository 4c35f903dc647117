"""Staleness cost (issue 28, item 11): one `paths: *` decision dated 2001 made every
context read the whole code history again, uncached (a long answer was never
remembered); after each code commit every question was read again from the start.
Now a question reads at most WALK_LIMIT commits, and after a new code commit only what
HEAD gained. Counted in git's own trace (GIT_TRACE), never timed."""

from __future__ import annotations

import json
from pathlib import Path

from kit.repos import open_ledger
from kit.run import Via, cli, git

from git_lifeline.app.draft import Draft
from git_lifeline.git.codelog import WALK_LIMIT

COMMITS = WALK_LIMIT + 200


def many_commits(repo: Path, n: int) -> None:
    """`n` real code commits, each changing one file, written by git fast-import."""
    out = []
    for i in range(n):
        data = f"v{i}\n".encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer A <a@example.com> {1_600_000_000 + i} +0000\n".encode())
        out.append(b"data 2\nc\n")
        out.append(f"M 100644 inline src/f{i % 50}.txt\ndata {len(data)}\n".encode() + data + b"\n")
    git(repo, "fast-import", "--quiet", input=b"".join(out))
    git(repo, "checkout", "-q", "-f", "main")


def log_runs(trace: Path) -> list:
    """The `git log` commands git traced, each as its argv line."""
    return [line for line in trace.read_text().splitlines() if "built-in: git log" in line]


def test_a_star_decision_from_2001_reads_a_bounded_walk_and_only_the_new_commit_after_one(repo, tmp_path, monkeypatch):
    many_commits(repo, COMMITS)
    led = open_ledger(repo)
    led.log(Draft("decision", "Everything is one module", "paths: *\n\nOld.", ts="2001-01-01T00:00:00Z"))
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))

    rows = json.loads(cli(repo, "stale", "--json", via=Via.THIS_PROCESS).out)
    assert len(rows) == 1 and len(rows[0]["commits"]) == WALK_LIMIT  # before: every one of COMMITS
    assert "1000+ commits" in cli(repo, "stale", via=Via.THIS_PROCESS).out
    trace.write_text("")
    cli(repo, "context", via=Via.THIS_PROCESS)
    assert log_runs(trace) == []  # before: read again, the answer was too long to remember

    old_head = git(repo, "rev-parse", "HEAD")
    (repo / "src" / "f1.txt").write_text("new\n")
    git(repo, "commit", "-q", "-am", "one more")
    trace.write_text("")
    rows = json.loads(cli(repo, "stale", "--json", via=Via.THIS_PROCESS).out)
    runs = log_runs(trace)
    assert runs and all(f"^{old_head}" in run for run in runs), runs  # only what HEAD gained
    assert rows[0]["commits"][0] == git(repo, "rev-parse", "HEAD") and len(rows[0]["commits"]) == WALK_LIMIT
