"""Verify reads a large range's blobs in one `git cat-file --batch` (git/blobs.py
read_blobs) and judges each there, ahead of the walk; a small range reads each blob
through libgit2. Both must give the same verdict on every blob, tampered, malformed,
holding a credential, renamed or missing, through verify and through the pre-receive
hook (whose incoming objects git keeps in a quarantine only its environment names),
whatever refs/replace/* would put in a blob's place."""

from __future__ import annotations

import json
import os

import pygit2
import pytest
from helpers import add_commit, cli, git, init_repo, make_entry, open_ledger, path_of, stored_entry, ts_at
from secret_corpus import expand
from test_every_reader_judges_a_blob_alike import corpus

from git_lifeline.app.hooks import install
from git_lifeline.git.checks import BATCH_READ_MIN
from git_lifeline.git.repo import open_repo
from git_lifeline.git.verify import verify_line

PADDING = BATCH_READ_MIN + 44  # valid entries that take the "many" line over the batch threshold


def _hostile(base: dict) -> dict:
    """path -> blob bytes: the malformed corpus, an entry holding a credential, and a
    valid entry stored under another id's path."""
    files = {path_of(entry_id): data for entry_id, data in corpus(base).values()}
    leaked = stored_entry(summary="Deploy notes", body="token " + expand("ghp_{{a:36}}", "batch"), ts=ts_at(60))
    files[path_of(leaked.id)] = leaked.to_json()
    files[path_of("d" * 64)] = make_entry(61, kind="note", summary="Moved elsewhere").to_json()
    return files


GONE = make_entry(62, kind="note", summary="Its blob is gone")


def _line(repo, name: str, padding: int, files: dict) -> None:
    """A line `name`: two parents, `padding` valid entries, then the hostile blobs, then
    a commit naming GONE (whose blob the fixture removes)."""
    led = open_ledger(repo, name)
    led.append([make_entry(1), make_entry(2)])
    if padding:
        led.append([make_entry(100 + i, kind="note", summary=f"Padding {i}") for i in range(padding)])
    ref = f"refs/lifeline/{name}"
    add_commit(repo, lambda f: {**f, **files}, ref=ref)
    add_commit(repo, lambda f: {**f, path_of(GONE.id): GONE.to_json()}, ref=ref)


def _verdicts(report) -> set:
    return {(p.code, p.message) for p in report.problems}


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("batch") / "repo")
    base = json.loads(make_entry(3, parents=[make_entry(1).id, make_entry(2).id], dedup_key="k").to_json())
    files = _hostile(base)
    _line(repo, "few", 0, files)
    _line(repo, "many", PADDING, files)
    oid = str(pygit2.Repository(str(repo)).create_blob(GONE.to_json()))
    os.remove(repo / ".git" / "objects" / oid[:2] / oid[2:])
    # git would read a valid entry in place of the tampered one, were replace refs honoured
    cases = corpus(base)
    tampered, valid = (git(repo, "hash-object", "-w", "--stdin", input=cases[k][1]).strip()
                       for k in ("tampered", "valid"))
    git(repo, "replace", tampered, valid)
    return repo, files


def test_a_batch_read_and_a_blob_by_blob_read_give_the_same_verdicts(lines):
    repo, files = lines
    few = verify_line(open_ledger(repo, "few").store)
    many = verify_line(open_ledger(repo, "many").store)
    assert len(files) + 3 < BATCH_READ_MIN, "the 'few' line must stay below the batch threshold"
    assert PADDING + len(files) >= BATCH_READ_MIN
    assert _verdicts(few) == _verdicts(many)
    codes = {p.code for p in many.problems}
    assert {"bad-entry", "secret", "missing-object"} <= codes, codes
    messages = "\n".join(p.message for p in many.problems)
    assert "content does not match its id" in messages
    assert "not valid JSON" in messages
    assert "stored under another id's path" in messages


def test_the_verify_command_names_every_hostile_blob_of_a_large_line(lines):
    repo, _files = lines
    out = cli(repo, "verify", "--line", "many")
    assert out.code != 0
    for fragment in ("content does not match its id", "unknown kind 'gossip'", "secret", "renamed",
                     "missing-object"):
        assert fragment in out.out + out.err, fragment


def test_the_pre_receive_hook_rejects_a_tampered_entry_among_many(tmp_path, dispatch_bin, monkeypatch):
    monkeypatch.setenv("PATH", str(dispatch_bin) + os.pathsep + os.environ.get("PATH", ""))
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(server))
    install(open_repo(str(server)), ["pre-receive"])
    client = init_repo(tmp_path / "client")
    git(client, "remote", "add", "origin", str(server))
    led = open_ledger(client)
    entries = [make_entry(i, kind="note", summary=f"Entry {i}") for i in range(PADDING)]
    led.append(entries)
    victim = entries[PADDING // 2]
    doc = json.loads(victim.to_json())
    doc["summary"] = "Edited after the fact"
    forged = (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()
    add_commit(client, lambda f: {**f, path_of(victim.id): forged})
    proc = git_push(client)
    assert proc[0] != 0
    assert "content does not match its id" in proc[1] and victim.id[:12] in proc[1], proc[1]
    assert git(server, "for-each-ref", "refs/lifeline/").strip() == ""


def git_push(repo):
    import subprocess

    from helpers import subprocess_env
    proc = subprocess.run(["git", "push", "--no-verify", "origin", "refs/lifeline/main"], cwd=str(repo),
                          capture_output=True, env=subprocess_env(), timeout=300)
    return proc.returncode, proc.stderr.decode("utf-8", "replace")
