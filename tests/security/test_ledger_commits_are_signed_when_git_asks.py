"""Ledger commits are signed when the user's git config asks for it (commit.gpgSign), with
git's own signing setup, and `verify --signatures` reports unsigned, badly signed and
untrusted commits. The signing key is a throwaway ssh key made by the test."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from kit.entries import make_entry, stored_entry
from kit.home import AUTHOR_EMAIL
from kit.repos import init_repo, open_ledger, snapshot
from kit.run import cli, git
from kit.tamper import add_commit

from git_lifeline.core import seed as interop

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")


def _git_version() -> tuple:
    m = re.search(r"(\d+)\.(\d+)", git(".", "--version"))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


if _git_version() < (2, 34):  # ssh signing arrived in git 2.34
    pytestmark = pytest.mark.skip(reason="git older than 2.34 cannot sign with ssh keys")


def make_key(directory, name: str):
    key = directory / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    ours, theirs = make_key(d, "signer"), make_key(d, "stranger")
    allowed = d / "allowed_signers"
    pub = ours.with_suffix(".pub").read_text().split()
    allowed.write_text(f"{AUTHOR_EMAIL} {pub[0]} {pub[1]}\n")
    return {"ours": ours, "theirs": theirs, "allowed": allowed}


def configure_signing(repo, keys, key="ours") -> None:
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(keys[key]))
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.ssh.allowedSignersFile", str(keys["allowed"]))


@pytest.fixture
def signed_repo(repo, keys):
    configure_signing(repo, keys)
    return repo


def line_commits(repo, ref="refs/lifeline/main") -> list:
    return git(repo, "rev-list", ref).split()


def test_every_write_is_a_signed_commit_that_git_verifies(signed_repo, tmp_path, record_counts):
    repo = signed_repo
    assert cli(repo, "log", "--kind", "decision", "--summary", "Signed decision", "--body", "why").code == 0
    assert cli(repo, "checkpoint", "--next", "keep signing").code == 0
    open_ledger(repo).append([make_entry(5), make_entry(6)])  # in-process, a batch
    seed = tmp_path / "seed.md"
    seed.write_text(interop.render_seed_markdown([stored_entry(summary="Imported", body="from the seed")], "main"))
    assert cli(repo, "import", "--from", str(seed)).code == 0  # fast-import, then re-signed
    commits = line_commits(repo)
    assert len(commits) == 4
    for c in commits:
        assert "gpgsig -----BEGIN SSH SIGNATURE-----" in git(repo, "cat-file", "-p", c)
        git(repo, "verify-commit", c)  # raises on failure
    res = cli(repo, "verify", "--signatures")
    assert res.code == 0, res
    assert "4 commits verified, 4 signatures good" in res.out, res
    record_counts("signatures", tried=1, held=1, lost=0)


def test_a_signed_commit_carries_the_same_tree_message_and_times_as_an_unsigned_one(
    repo, keys, tmp_path, record_counts
):
    plain = init_repo(tmp_path / "plain")
    configure_signing(repo, keys)
    e = make_entry(1)
    for r in (repo, plain):
        open_ledger(r).append([e])
    signed, unsigned = (git(r, "cat-file", "-p", "refs/lifeline/main") for r in (repo, plain))
    without_sig = re.sub(
        r"gpgsig -----BEGIN SSH SIGNATURE-----\n(?: .*\n)*? -----END SSH SIGNATURE-----\n", "", signed + "\n"
    )
    assert without_sig.rstrip("\n") == unsigned
    record_counts("signatures", tried=1, held=1, lost=0)


def test_signatures_are_checked_only_when_asked(signed_repo, record_counts):
    open_ledger(signed_repo).append([make_entry(1)])
    add_commit(signed_repo, lambda files: files)  # an unsigned commit, otherwise valid
    assert cli(signed_repo, "verify").code == 0
    record_counts("signatures", tried=1, held=1, lost=0)


def test_verify_signatures_reports_an_unsigned_commit(signed_repo, record_counts):
    open_ledger(signed_repo).append([make_entry(1)])
    unsigned = add_commit(signed_repo, lambda files: files)
    res = cli(signed_repo, "verify", "--signatures")
    assert res.code == 1, res
    assert f"  unsigned: commit {unsigned[:8]} is not signed" in res.out, res
    record_counts("signatures", tried=1, held=1, lost=0)


def test_verify_signatures_reports_a_commit_signed_by_an_untrusted_key(signed_repo, keys, record_counts):
    open_ledger(signed_repo).append([make_entry(1)])
    configure_signing(signed_repo, keys, key="theirs")
    open_ledger(signed_repo).append([make_entry(2)])
    stranger = git(signed_repo, "rev-parse", "refs/lifeline/main")
    res = cli(signed_repo, "verify", "--signatures")
    assert res.code == 1, res
    assert f"  untrusted-signature: commit {stranger[:8]}" in res.out, res
    record_counts("signatures", tried=1, held=1, lost=0)


def test_verify_signatures_reports_a_commit_changed_after_signing(signed_repo, record_counts):
    open_ledger(signed_repo).append([make_entry(1)])
    raw = git(signed_repo, "cat-file", "commit", "refs/lifeline/main") + "\n"
    forged = git(
        signed_repo,
        "hash-object",
        "-t",
        "commit",
        "-w",
        "--stdin",
        input=raw.replace("Decision number 1", "Decision number 2", 1).encode(),  # the subject
    )
    assert forged != git(signed_repo, "rev-parse", "refs/lifeline/main"), "the forgery changed nothing"
    git(signed_repo, "update-ref", "refs/lifeline/main", forged)
    res = cli(signed_repo, "verify", "--signatures")
    assert res.code == 1, res
    assert f"  bad-signature: commit {forged[:8]}" in res.out, res
    record_counts("signatures", tried=1, held=1, lost=0)


def test_a_signing_failure_is_a_clear_error_and_moves_nothing(signed_repo, tmp_path, record_counts):
    open_ledger(signed_repo).append([make_entry(1)])
    git(signed_repo, "config", "user.signingkey", str(tmp_path / "no-such-key"))
    before = snapshot(signed_repo)
    res = cli(signed_repo, "log", "--kind", "note", "--summary", "unsignable", "--body", "b")
    assert res.code == 2, res
    assert "cannot sign the" in res.err and "commit.gpgSign is set" in res.err and "Traceback" not in res.err, res
    assert snapshot(signed_repo)["refs"] == before["refs"]
    assert cli(signed_repo, "verify").code == 0
    record_counts("signatures", tried=1, held=1, lost=0)
