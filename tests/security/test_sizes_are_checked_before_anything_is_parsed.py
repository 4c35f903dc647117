"""Sizes are checked before parsing, wherever a blob or a file is read (issue 14.11).

A record blob pulled from a hook-less remote, an entry blob, a lifeline-context ledger to
import (markdown or SQLite), a projection to migrate: each has a largest valid size, and
anything past it is refused by that size, named, before a parser sees it. A device, a
FIFO or a sparse 300 MB file given as a source is refused without being read. Every
case runs the real CLI; nothing is written."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from kit.repos import commit_file, head, init_repo, open_ledger, snapshot
from kit.run import ROOT, cli, git
from kit.tamper import add_commit

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.core.entry import MAX_BLOB_BYTES, utcnow
from git_lifeline.git.records import MAX_RECORD_BYTES, Content, make_decision, make_proposed

SEED = ROOT / "tests" / "data" / "seed"
BIG = 32 << 20  # far past any valid record or entry, small enough for a test machine
SECONDS = 60


def record_path(rid: str) -> str:
    return f"records/{rid[:2]}/{rid[2:4]}/{rid[4:]}"


def entry_path(eid: str) -> str:
    return f"entries/{eid[:2]}/{eid[2:4]}/{eid[4:]}"


@pytest.fixture
def hookless(tmp_path):
    """A client whose line main and review trail are on a bare remote without hooks."""
    client = init_repo(tmp_path / "client")
    commit_file(client)
    led = open_ledger(client)
    led.log(Draft(kind="bootstrap", summary="Project", body="why"))
    Agents(led).propose(Draft(kind="note", summary="An agent's note", body="b"), via="cli")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(client, "remote", "add", "origin", str(bare))
    git(
        client,
        "push",
        "-q",
        "origin",
        "main",
        "refs/lifeline/*:refs/lifeline/*",
        "refs/lifeline-review/*:refs/lifeline-review/*",
    )
    puller = tmp_path / "puller"
    git(tmp_path, "clone", "-q", str(bare), str(puller))
    assert cli(puller, "pull").code == 0
    return client, bare, puller


def _oversized_record(client: Path) -> None:
    doc = make_decision("rejected", "main", "Rita <rita@example.com>", "ab" * 32, why="x").doc
    data = b'{"by":"' + b"a" * BIG + b'",' + repr(doc).encode()[1:]  # far too large, whatever it says
    rid = hashlib.sha256(data).hexdigest()
    add_commit(client, lambda files: {**files, record_path(rid): data}, ref="refs/lifeline-review/main")


def _oversized_entry(client: Path) -> None:
    data = b'{"body":"' + b"a" * BIG + b'"}\n'
    eid = hashlib.sha256(data).hexdigest()
    add_commit(client, lambda files: {**files, entry_path(eid): data})


BLOBS = {
    "record": (_oversized_record, "refs/lifeline-review/main", "larger than any record can be"),
    "entry": (_oversized_entry, "refs/lifeline/main", "larger than any entry can be"),
}


@pytest.mark.parametrize("kind", sorted(BLOBS))
def test_an_oversized_blob_from_a_hookless_remote_is_refused_by_its_size(hookless, kind, record_counts):
    client, bare, puller = hookless
    spoil, ref, words = BLOBS[kind]
    spoil(client)
    git(client, "push", "-q", "--no-verify", "origin", f"{ref}:{ref}")
    before = head(puller, ref)
    start = time.monotonic()
    res = cli(puller, "pull")
    took = time.monotonic() - start
    assert res.code == 1, res
    assert words in res.err and "Traceback" not in res.err, res
    assert head(puller, ref) == before
    assert took < SECONDS, took
    res = cli(puller, "verify")  # the blob is in the object database now (fetched): verify says the same
    assert res.code in (0, 1) and "internal error" not in res.err, res
    record_counts("sizes checked before parsing", tried=1, held=1, lost=0)


def test_the_size_limits_hold_every_valid_record_and_entry():
    # the largest valid proposal: a body of MAX_BODY_BYTES, all quotes (each escaped to two bytes)
    from git_lifeline.core.entry import MAX_BODY_BYTES

    content = Content(
        agent="a" * 200,
        author="b" * 200,
        body='"' * MAX_BODY_BYTES,
        kind="note",
        model="m" * 200,
        parents=(),
        provider="p" * 200,
        summary="s" * 300,
    )
    rec = make_proposed("main", "Rita <rita@example.com>", utcnow(), content, "cli")
    assert len(rec.to_json()) <= MAX_RECORD_BYTES
    assert MAX_RECORD_BYTES > MAX_BLOB_BYTES


# ---- import and migrate sources ---------------------------------------------------------------
@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    commit_file(r)
    return r


def test_an_import_record_larger_than_any_entry_is_refused_before_its_fields_are_parsed(repo, tmp_path, record_counts):
    text = (SEED / "LIFELINE.md").read_text(encoding="utf-8")
    swollen = text.replace("Schemaless documents fit the first prototype.", "x" * (2 * MAX_BLOB_BYTES), 1)
    assert swollen != text
    source = tmp_path / "LIFELINE.md"
    source.write_text(swollen, encoding="utf-8")
    before = snapshot(repo)
    res = cli(repo, "import", "--from", str(source))
    assert res.code == 2 and "#0002" in res.err and "larger than any entry can be" in res.err, res
    assert snapshot(repo) == before
    record_counts("sizes checked before parsing", tried=1, held=1, lost=0)


def test_a_sqlite_payload_larger_than_any_entry_is_not_even_fetched(repo, tmp_path, record_counts):
    db = tmp_path / "ledger.db"
    shutil.copy(SEED / "ledger.db", db)
    con = sqlite3.connect(db)
    con.execute("UPDATE entries SET payload = ? WHERE seq = 2", ("{" + " " * (4 * MAX_BLOB_BYTES) + "}",))
    con.commit()
    con.close()
    before = snapshot(repo)
    res = cli(repo, "import", "--from", str(db))
    assert res.code == 2 and "seq 2" in res.err and "payload is larger than any entry can be" in res.err, res
    assert snapshot(repo) == before
    record_counts("sizes checked before parsing", tried=1, held=1, lost=0)


def _sparse(path: Path) -> Path:
    with open(path, "wb") as f:
        f.truncate(300 << 20)  # 300 MB that cost no disk
    return path


SOURCES = {
    "dev-zero": lambda tmp: Path("/dev/zero"),
    "fifo": lambda tmp: (os.mkfifo(tmp / "fifo"), tmp / "fifo")[1],
    "sparse-300mb": lambda tmp: _sparse(tmp / "huge.md"),
}


@pytest.mark.parametrize("command", ["import", "migrate"])
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_source_that_is_not_a_bounded_regular_file_is_refused_unread(repo, tmp_path, command, source, record_counts):
    path = SOURCES[source](tmp_path)
    before = snapshot(repo)
    start = time.monotonic()
    res = cli(repo, command, "--from", str(path))
    assert time.monotonic() - start < SECONDS
    assert res.code == 2, res
    assert "not a regular file" in res.err or "bytes" in res.err, res
    assert snapshot(repo) == before
    record_counts("sizes checked before parsing", tried=1, held=1, lost=0)
