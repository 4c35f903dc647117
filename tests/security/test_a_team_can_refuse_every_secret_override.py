"""`git config lifeline.allowSecretOverride false` refuses a teammate's `--allow-secret`
entry: a server's pre-receive rejects the push, a teammate's pull leaves that line out and
says why, and verify reports it (the override stays the human's decision elsewhere)."""

from __future__ import annotations

from pathlib import Path

from helpers import cli, client, git, ref
from secret_corpus import expand

TOKEN = expand("ghp_{{a:36}}", "team-override-token")


def configured(tmp_path: Path, name: str, url: Path) -> Path:
    repo = client(tmp_path, name, url)
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "test@example.com")
    return repo


def log_override(repo: Path) -> None:
    r = cli(repo, "log", "--kind", "note", "--summary", "Key", "--body", f"Use {TOKEN}", "--allow-secret", "ok")
    assert r.code == 0, r


def test_a_server_refusing_overrides_rejects_the_push(tmp_path, server):
    git(server, "config", "lifeline.allowSecretOverride", "false")
    alice = configured(tmp_path, "alice", server)
    log_override(alice)
    r = cli(alice, "push")
    assert r.code != 0, r
    assert ref(server, "refs/lifeline/main") is None
    assert "allowSecretOverride" in r.out + r.err, r


def test_a_teammate_refusing_overrides_pulls_without_it_and_is_told(tmp_path, remote):
    alice = configured(tmp_path, "alice", remote)
    log_override(alice)
    assert cli(alice, "push").code == 0
    bob = configured(tmp_path, "bob", remote)
    git(bob, "config", "lifeline.allowSecretOverride", "false")
    r = cli(bob, "pull")
    assert ref(bob, "refs/lifeline/main") is None, r
    assert "allowSecretOverride" in r.out + r.err, r
    carol = configured(tmp_path, "carol", remote)  # a teammate who allows it
    pulled = cli(carol, "pull")
    assert pulled.code == 0 and "overrides the secret scan" in pulled.err, pulled  # never silently
    git(carol, "config", "lifeline.allowSecretOverride", "false")
    v = cli(carol, "verify")
    assert v.code != 0 and "allowSecretOverride" in v.out + v.err, v
