"""A later `verify` adds the verdicts it makes to the file an earlier one wrote (appended,
not rewritten: git/verdicts.py), keeps every earlier one, and a torn last key (a crash
mid-append) is cut off, never read as a verdict nor left to shift the keys after it."""

from __future__ import annotations

from kit.entries import make_entry
from kit.repos import init_repo, open_ledger
from kit.run import cli


def _kept(repo) -> bytes:
    files = list((repo / ".git" / "lifeline").glob("verdicts-*.bin"))
    assert len(files) == 1, files
    return files[0].read_bytes()


def _keys(data: bytes) -> set:
    return {data[i : i + 32] for i in range(0, len(data), 32)}


def test_a_later_verify_appends_its_verdicts_and_cuts_a_torn_key(tmp_path):
    repo = init_repo(tmp_path / "repo")
    first = [make_entry(i) for i in range(3)]
    open_ledger(repo).append(first)
    assert cli(repo, "verify").code == 0
    assert _keys(_kept(repo)) == {bytes.fromhex(e.id) for e in first}

    more = [make_entry(i) for i in range(3, 5)]
    open_ledger(repo).append(more)
    assert cli(repo, "verify").code == 0
    data = _kept(repo)
    assert len(data) == 32 * 5 and _keys(data) == {bytes.fromhex(e.id) for e in first + more}

    path = next((repo / ".git" / "lifeline").glob("verdicts-*.bin"))
    path.write_bytes(data + b"\x01" * 7)  # a crash seven bytes into the next key
    last = make_entry(5)
    open_ledger(repo).append([last])
    assert cli(repo, "verify").code == 0
    data = _kept(repo)
    assert len(data) == 32 * 6, len(data)
    assert _keys(data) == {bytes.fromhex(e.id) for e in [*first, *more, last]}
