"""`import --from DIR` never follows a link out of the directory nor reads a file unbounded,
and `policy init` never writes through a link out of the work tree.
"""

from __future__ import annotations

import pytest
from kit.repos import bare, configured_client
from kit.run import cli, git


@pytest.mark.parametrize("target", ["outside", "huge", "device"])
def test_adr_import_never_follows_a_link_nor_reads_a_file_unbounded(tmp_path, target):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    adrs = tmp_path / "adr"
    adrs.mkdir()
    (adrs / "0001-use-sqlite.md").write_text("# Use SQLite\n\n## Context\n\nSmall data.\n")
    if target == "outside":  # a file of the user's, which would travel with the next push
        private = tmp_path / "private-notes.md"
        private.write_text("# My private notes\n\nThe staging password is hunter2-but-longer.\n")
        (adrs / "0002-leak.md").symlink_to(private)
    elif target == "huge":
        (adrs / "0002-huge.md").write_bytes(b"# Huge\n\n" + b"x" * (2 << 20))
    else:
        (adrs / "0002-zero.md").symlink_to("/dev/zero")
    r = cli(repo, "import", "--from", str(adrs))
    assert r.code == 2 and ("symbolic link" in r.err or "larger than" in r.err), r
    assert git(repo, "rev-parse", "-q", "--verify", "refs/lifeline/main", check=False) == "", r


def test_policy_init_never_writes_through_a_link_out_of_the_work_tree(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / ".lifeline").symlink_to(outside)  # a tracked link, from a clone or a branch
    r = cli(repo, "policy", "--init")
    assert r.code == 2 and "out of the work tree" in r.err, r
    assert not (outside / "policy.json").exists()
