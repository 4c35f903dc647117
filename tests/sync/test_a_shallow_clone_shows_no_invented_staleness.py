"""A `--depth 1` clone (CI's default) invents no staleness: the commit it was cut at has
the whole tree as its diff, so it is never counted; a decision whose code history
reaches the cut reads "staleness unknown (shallow clone)" once, in `stale` and the
context, and `doctor` says so and how to deepen."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from kit.run import Via, cli, git

FAST = Via.THIS_PROCESS


def commit_file(repo: Path, path: str, text: str, message: str, env: Optional[dict] = None) -> None:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=env)


def test_a_depth_one_clone_marks_no_decision_stale_and_says_staleness_is_unknown_once(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    commit_file(origin, "db/schema.sql", "".join(f"col{n}\n" for n in range(4494)), "schema")
    commit_file(origin, "src/app.py", "print()\n", "app")
    for summary, paths in (("Database: PostgreSQL", "db/"), ("App: one module", "src/")):
        body = f"paths: {paths}\n\nWhy."
        assert cli(origin, "log", "--kind", "decision", "--summary", summary, "--body", body, via=FAST).code == 0
    later = (datetime.now(timezone.utc) + timedelta(minutes=1)).isoformat()  # the decisions' second is past
    commit_file(origin, "README", "after the decisions\n", "docs", env={"GIT_COMMITTER_DATE": later})
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", origin.as_uri(), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/lifeline/main:refs/lifeline/main")
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"

    res = cli(clone, "stale", "--json", via=FAST)
    assert res.code == 0, res
    assert json.loads(res.out) == []  # before: both marked, "1 commit, 4494 lines"
    text = cli(clone, "stale", via=FAST).out
    assert text.count("staleness unknown (shallow clone)") == 1 and "2 decisions" in text
    assert "git fetch --deepen" in text
    context = cli(clone, "context", via=FAST).out
    assert "⚠ code changed since" not in context
    assert context.count("staleness unknown (shallow clone)") == 1

    doctor = cli(clone, "doctor", "--json", via=FAST)
    assert "staleness unknown (shallow clone)" in doctor.out and "--shallow-since" in doctor.out

    # deepened far enough, the truth comes back: nothing changed db/ or src/ since
    git(clone, "fetch", "-q", "--unshallow", "origin")
    assert json.loads(cli(clone, "stale", "--json", via=FAST).out) == []
    assert "staleness unknown" not in cli(clone, "stale", via=FAST).out
