"""A 10,000-entry import writes a commit message of bounded size."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kit.run import cli, git

from git_lifeline.core.entry import Entry
from git_lifeline.core.seed import render_seed_markdown


def test_a_10k_import_writes_a_bounded_commit_message(repo, tmp_path):
    # it used to list every id: a 780 KB message for 10,000 entries
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    entries = [
        Entry.new(
            kind="note",
            summary=f"Note {i}",
            author="A <a@example.com>",
            body=f"Why {i}.",
            ts=base + timedelta(seconds=i),
        )
        for i in range(10_000)
    ]
    source = tmp_path / "LIFELINE.md"
    source.write_text(render_seed_markdown(entries, "main"))
    res = cli(repo, "import", "--from", str(source))
    assert res.code == 0 and "10000 added" in res.out, res
    message = git(repo, "log", "-1", "--format=%B", "refs/lifeline/main")
    assert len(message.encode()) < 4096
    assert message.startswith("lifeline: add 10000 entries")
    assert "the commit's tree holds all 10000" in message
    named = git(repo, "log", "-1", "--format=%(trailers:key=Lifeline-Id,valueonly)", "refs/lifeline/main").split()
    assert named == [e.id for e in sorted(entries, key=lambda e: (e.ts, e.id))[:20]]
