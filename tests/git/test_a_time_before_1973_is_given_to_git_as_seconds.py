"""git reads `--before=@N` as seconds only when N has nine digits or more (from 1973-03-03);
a smaller N it reads as a day of the month or a year. Entries may be dated from 1970, so
the code commit an entry was made against (the `--as-of` window's start, the commit before
an entry's time) must be found for such times too: git is given seconds with a zone."""

from __future__ import annotations

from datetime import datetime, timezone

from kit.repos import code_commit, init_repo, open_workspace


def test_the_commit_before_a_1971_time_is_the_1971_commit(tmp_path):
    repo = init_repo(tmp_path / "repo")
    early = code_commit(repo, "src/a.py", 2, "1971-06-01T12:00:00Z", "early")
    code_commit(repo, "src/a.py", 2, "2020-06-01T12:00:00Z", "late")
    gr = open_workspace(repo).gr
    when = int(datetime(1971, 7, 1, tzinfo=timezone.utc).timestamp())
    assert gr.last_commit_before(when) == early.strip()
    assert gr.last_commit_before(int(datetime(1970, 6, 1, tzinfo=timezone.utc).timestamp())) is None
