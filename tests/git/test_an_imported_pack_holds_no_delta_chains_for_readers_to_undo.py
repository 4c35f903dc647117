"""Issue 30: `git fast-import` deltas each blob against the one streamed before it, up to
50 deep, so an imported line's blobs came in chains that every later whole-line read
(verify, a cold cache build, recall) undid in id order: `git cat-file` of 100,000
imported entries cost 1.75 s of git's CPU, 0.75 s with no chains, for a pack 9% larger.
The import writes its pack without deltas; a later `git gc` deltas as it sees fit."""

from __future__ import annotations

from kit.realistic_ledger import build
from kit.repos import init_repo, open_ledger
from kit.run import git

from git_lifeline.git.bulk import BulkWriter


def test_an_imported_pack_stores_every_blob_whole(tmp_path):
    repo = init_repo(tmp_path / "repo")
    entries, _facts = build()
    assert len(entries) > 100  # similar JSON blobs, one after another: what fast-import deltas
    BulkWriter(open_ledger(repo).store).publish(entries, lambda new: f"import {len(new)}")
    packs = sorted((repo / ".git" / "objects" / "pack").glob("*.idx"))
    assert packs, "the import wrote no pack"
    listing = git(repo, "verify-pack", "-v", *map(str, packs))
    assert "chain length" not in listing, listing[-400:]
    blobs = [line for line in listing.splitlines() if " blob " in line]
    assert len(blobs) >= len(entries)
