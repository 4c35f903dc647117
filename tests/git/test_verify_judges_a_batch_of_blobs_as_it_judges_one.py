"""Verify reads a large range's blobs in one `git cat-file --batch` (git/blobs.py
read_blobs) and judges each there, ahead of the walk (checks.BATCH_READ_MIN); a
smaller range reads each blob through libgit2. Both must give the same verdict on every
blob, tampered, malformed, holding a credential, renamed or missing, whatever
refs/replace/* would put in a blob's place; in verify itself (the threshold lowered) and
in the pre-receive hook on a line past the threshold (the incoming objects are in a
quarantine that only git's environment names)."""

from __future__ import annotations

import json
import os

import pygit2
import pytest
from kit.entries import corpus, make_entry, path_of, stored_entry, ts_at
from kit.home import AUTHOR
from kit.repos import bare, git_push, init_repo, open_ledger
from kit.run import LONG_TIMEOUT, git
from kit.secrets import expand
from kit.tamper import add_commit

from git_lifeline.core.entry import compute_id, format_ts
from git_lifeline.git import checks
from git_lifeline.git.verify import verify_log

GONE = make_entry(62, kind="note", summary="Its blob is gone")


def _hostile(base: dict) -> dict:
    """path -> blob bytes: the malformed corpus, an entry holding a credential, and a
    valid entry stored under another id's path."""
    files = {path_of(entry_id): data for entry_id, data in corpus(base).values()}
    leaked = stored_entry(summary="Deploy notes", body="token " + expand("ghp_{{a:36}}", "batch"), ts=ts_at(60))
    files[path_of(leaked.id)] = leaked.to_json()
    files[path_of("d" * 64)] = make_entry(61, kind="note", summary="Moved elsewhere").to_json()
    return files


def _padding(count: int) -> dict:
    """path -> blob of `count` valid notes, built directly (Entry.new for each would
    make the large line's fixture several times slower)."""
    files = {}
    for i in range(count):
        doc = dict(
            kind="note",
            author=AUTHOR,
            agent="human",
            provider="none",
            model="human",
            summary=f"Padding note {i}",
            body=f"Written to fill the line ({i}).",
            parents=[],
        )
        doc["id"] = compute_id(
            *(doc[k] for k in ("kind", "author", "agent", "provider", "model", "summary", "body", "parents"))
        )
        doc.update(dedup_key=None, ts=format_ts(ts_at(100 + i % 1000)))
        files[path_of(doc["id"])] = (
            json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
        ).encode()
    return files


def _hostile_line(repo, name: str, padding: int) -> None:
    """A line `name`: two parents, `padding` valid notes, the hostile blobs, then a commit
    naming GONE, whose blob is then removed; a replace ref offers git a valid entry in
    place of the tampered one."""
    p1, p2 = make_entry(1), make_entry(2)
    open_ledger(repo, name).append([p1, p2])
    base = json.loads(make_entry(3, parents=[p1.id, p2.id], dedup_key="k").to_json())
    ref = f"refs/lifeline/{name}"
    add_commit(repo, lambda f: {**f, **_padding(padding), **_hostile(base)}, ref=ref)
    add_commit(repo, lambda f: {**f, path_of(GONE.id): GONE.to_json()}, ref=ref)
    oid = str(pygit2.Repository(str(repo)).create_blob(GONE.to_json()))
    os.remove(repo / ".git" / "objects" / oid[:2] / oid[2:])
    cases = corpus(base)
    tampered, valid = (git(repo, "hash-object", "-w", "--stdin", input=cases[k][1]) for k in ("tampered", "valid"))
    git(repo, "replace", "-f", tampered, valid)


def _verdicts(report) -> set:
    return {(p.code, p.message) for p in report.problems}


def test_a_batch_read_and_a_blob_by_blob_read_give_the_same_verdicts(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "repo")
    _hostile_line(repo, "main", 0)
    one_by_one = verify_log(open_ledger(repo).store)
    monkeypatch.setattr(checks, "BATCH_READ_MIN", 1)
    batch = verify_log(open_ledger(repo).store)
    assert _verdicts(one_by_one) == _verdicts(batch)
    codes = {p.code for p in batch.problems}
    assert {"bad-entry", "secret", "missing-object"} <= codes, codes
    messages = "\n".join(p.message for p in batch.problems)
    for fragment in (
        "content does not match its id",
        "not valid JSON",
        "stored under another id's path",
        "unknown kind 'gossip'",
    ):
        assert fragment in messages, fragment


HOOK_LINE, HOOK_BATCH_FROM = 400, 100  # checks.batch_read_min: no 40,000-entry line needed


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A line of HOOK_LINE valid notes and the hostile blobs, and a bare server with the
    pre-receive hook (told to read in a batch from HOOK_BATCH_FROM blobs on)."""
    base = tmp_path_factory.mktemp("batch")
    repo = init_repo(base / "client")
    _hostile_line(repo, "main", HOOK_LINE)
    server = bare(base, "server.git", hook=True)
    git(repo, "remote", "add", "origin", str(server))
    return repo, server


def test_the_pre_receive_hook_rejects_hostile_blobs_among_many(large, dispatch_bin, monkeypatch):
    repo, server = large
    monkeypatch.setenv("PATH", str(dispatch_bin) + os.pathsep + os.environ.get("PATH", ""))
    # the missing blob would stop the push in the client; the rest goes to the server
    git(repo, "update-ref", "refs/lifeline/sent", "refs/lifeline/main~1")
    # the knob takes the hook down the batch path on a line of HOOK_LINE (git puts its own
    # exec path first on the hook's PATH, so which path ran is not seen from here)
    env = {"GIT_LIFELINE_VERIFY_BATCH_FROM": str(HOOK_BATCH_FROM)}
    code, err = git_push(repo, "refs/lifeline/sent", flags=("--no-verify",), env=env, timeout=LONG_TIMEOUT)
    assert code != 0, err
    assert "content does not match its id" in err, err
    assert git(server, "for-each-ref", "refs/lifeline/") == ""


@pytest.mark.parametrize(
    "value, expected",
    [
        ("100", 100),
        ("", checks.BATCH_READ_MIN),
        ("0", checks.BATCH_READ_MIN),
        ("-5", checks.BATCH_READ_MIN),
        ("1e3", checks.BATCH_READ_MIN),
        ("\u0661\u0662", checks.BATCH_READ_MIN),
    ],
)
def test_the_batch_threshold_knob_takes_only_a_positive_whole_number(monkeypatch, value, expected):
    monkeypatch.setenv("GIT_LIFELINE_VERIFY_BATCH_FROM", value)
    assert checks.batch_read_min() == expected
