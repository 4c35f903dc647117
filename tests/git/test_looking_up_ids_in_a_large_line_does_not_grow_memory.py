"""Issue 30: importing 125,000 entries into a line of 875,000 grew the process by ~400 MB,
and generating a million-entry ledger peaked at 1.6 GB: pygit2 (1.21) keeps a reference
to every name a Tree is indexed with, and a path lookup ("a/b/c") also leaks native
memory, so every `lookup` of an id (each entry of an import is looked up) leaked ~240
bytes. Looking ids up must leave nothing behind."""

from __future__ import annotations

import tracemalloc

import pygit2
from kit.repos import init_repo
from kit.run import cli

from git_lifeline.git.trees import TreeLookup, lookup


def test_a_thousand_lookups_of_fresh_ids_leave_no_memory_behind(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "log", "--kind", "note", "--summary", "one", "--body", "why").code == 0
    r = pygit2.Repository(str(repo))
    top = r.revparse_single("refs/lifeline/main").tree
    entries = r[top["entries"].id]
    assert isinstance(entries, pygit2.Tree)
    stored = [a.name + b.name + c.name for a in entries for b in r[a.id] for c in r[b.id]]
    assert len(stored) == 1 and lookup(entries, stored[0]) is not None
    # ids that are absent but share the stored one's fan-out directories, and the stored one
    probes = [stored[0][:4] + f"{k:060x}" for k in range(2000)] + [stored[0]] * 2000
    for key in probes[:50]:  # warm up whatever is cached once
        lookup(entries, key[:64])
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    found = sum(lookup(entries, "".join(key)) is not None for key in probes)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert found == 2000
    assert grown < 50_000, f"{grown} bytes left behind by {len(probes)} lookups"


def test_looking_up_many_ids_in_one_tree_finds_what_each_lookup_finds(tmp_path):
    # An import looks every new id up in the line's tree through one TreeLookup, which reads
    # each first-level fan-out tree once: it must answer as a lookup of each id alone.
    repo = init_repo(tmp_path / "repo")
    for i in range(3):
        assert cli(repo, "log", "--kind", "note", "--summary", f"note {i}", "--body", "why").code == 0
    r = pygit2.Repository(str(repo))
    entries = r[r.revparse_single("refs/lifeline/main").tree["entries"].id]
    assert isinstance(entries, pygit2.Tree)
    stored = [a.name + b.name + c.name for a in entries for b in r[a.id] for c in r[b.id]]
    probes = stored + [s[:4] + "f" * 60 for s in stored] + ["ff" * 32, "zz" + "0" * 62, stored[0][:2] + "/x"]
    many = TreeLookup(entries)
    assert [many.find(k) for k in probes] == [lookup(entries, k) for k in probes]
    assert [many.find(k) is not None for k in stored] == [True] * len(stored)
    assert TreeLookup(None).find(stored[0]) is None
