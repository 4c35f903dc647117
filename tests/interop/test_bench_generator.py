"""The benchmark's ledger generator (bench/gen.py) writes ledgers both tools import.

No timing here: the benchmarks themselves run by hand (docs/PERFORMANCE.md). These
tests keep the generator honest, so a benchmark never measures a ledger that the
importer refuses, or a ledger without the shapes the benchmark claims to contain.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone

from kit.run import ROOT, cli

sys.path.insert(0, str(ROOT / "bench"))
import gen  # noqa: E402

from git_lifeline.core.entry import KINDS  # noqa: E402


def test_generated_ledger_is_accepted_by_import_with_every_id_intact(repo, tmp_path):
    src = tmp_path / "LIFELINE.md"
    gen.make(src, "realistic", 50, seed=3)
    out = cli(repo, "import", "--from", str(src), "--strict", "--json")
    assert out.code == 0, out
    doc = json.loads(out.out)
    assert (doc["read"], doc["added"], doc["mismatched"], doc["skipped"]) == (50, 50, [], [])
    assert cli(repo, "verify").code == 0


def test_pathological_ledgers_are_accepted_by_import(repo, tmp_path):
    chain, pairs = tmp_path / "chain.md", tmp_path / "pairs.md"
    assert gen.make(chain, "chain", 20)["kinds"] == {"correction": 20, "bootstrap": 1, "decision": 1}
    assert gen.make(pairs, "pairs", 10)["kinds"] == {"correction": 10, "decision": 10, "bootstrap": 1}
    for src, n in ((chain, 22), (pairs, 21)):
        out = cli(repo, "--line", src.stem, "import", "--from", str(src), "--strict", "--json")
        assert out.code == 0, out
        assert json.loads(out.out)["added"] == n


def test_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path):
    a, b, c = tmp_path / "a.md", tmp_path / "b.md", tmp_path / "c.md"
    gen.make(a, "realistic", 300, seed=7)
    gen.make(b, "realistic", 300, seed=7)
    gen.make(c, "realistic", 300, seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_realistic_ledger_has_every_kind_in_its_share_and_every_shape():
    entries, shapes = gen.generate("realistic", 3000, seed=1)
    stats = gen.stats(entries, shapes)
    assert stats["entries"] == 3000
    assert set(stats["kinds"]) == set(KINDS)
    for kind, share in gen.SHARES.items():
        assert abs(stats["shares"][kind] - share) < 0.002, kind
    for shape in (
        "correction: revise",
        "correction: revert",
        "correction: close",
        "correction: unpin",
        "pin",
        "on a thread",
    ):
        assert shapes.get(shape, 0) > 0, shape
    assert shapes["longest revision chain"] >= 3
    ids = [e.id for e in entries]
    assert len(set(ids)) == len(ids)
    seen: set = set()
    for e in entries:  # oldest first, every parent written before its child
        assert all(p in seen for p in e.parents)
        seen.add(e.id)
    assert [e.ts for e in entries] == sorted(e.ts for e in entries)


def test_a_million_entry_ledger_is_not_dated_in_the_future_so_verify_does_not_refuse_it():
    # At one entry every 10 minutes the millionth entry was dated 2042, and verify refused
    # every entry past today's date as "in the future": a generated ledger must verify.
    g = gen.Generator(seed=1, expected=1_000_000)
    g.written = 999_999
    last = g._ts()
    assert last < gen.T0 + timedelta(seconds=gen.SPAN_SECONDS + 1)
    assert last < datetime(2025, 1, 2, tzinfo=timezone.utc)
    g.written = 999_998
    assert g._ts() < last  # still strictly increasing at the tighter spacing


def test_the_spacing_of_ledgers_up_to_100k_entries_is_what_it_was():
    # the figures of docs/PERFORMANCE.md were taken on these bytes
    assert gen.Generator(expected=100_001).step == 600
