"""Where a decision is marked "code changed since", the reader is told how to clear the
mark: `stale` and the context (what an agent reads) both name `git lifeline reaffirm`
and the commit trailer `Lifeline: <id>`. The context named only `reaffirm`."""

from __future__ import annotations

from kit.run import Via, cli, git

FAST = Via.THIS_PROCESS


def test_stale_and_the_context_name_both_ways_to_clear_a_mark(repo):
    (repo / "db.sql").write_text("create table t (id int);\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "schema")
    res = cli(repo, "log", "--kind", "decision", "--summary", "One table", "--paths", "db.sql", via=FAST)
    assert res.code == 0, res
    (repo / "db.sql").write_text("create table t (id bigint);\n")
    git(repo, "commit", "-q", "-am", "widen")
    for args in (("stale",), ("context",)):
        out = cli(repo, *args, via=FAST).out
        assert "code changed since" in out, (args, out)
        assert "git lifeline reaffirm <id>" in out and "Lifeline: <id>" in out, (args, out)
