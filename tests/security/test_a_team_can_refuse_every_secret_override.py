"""`git config lifeline.allowSecretOverride false` refuses a teammate's `--allow-secret`
entry: a server's pre-receive rejects the push, a teammate's pull leaves that line out and
says why, and verify reports it (the override stays the human's decision elsewhere)."""

from __future__ import annotations

from pathlib import Path

from kit.repos import client, ref
from kit.run import cli, git
from kit.secrets import expand

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


# ---- the policy on the trusted ref refuses them too (issue 28) -------------------------------
REFUSING_POLICY = '{"version": 1, "allow_secret_override": false}\n'


def commit_refusing_policy(repo: Path) -> None:
    (repo / ".lifeline").mkdir(exist_ok=True)
    (repo / ".lifeline" / "policy.json").write_text(REFUSING_POLICY)
    git(repo, "add", ".lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "Refuse secret overrides")


def test_a_server_whose_policy_refuses_overrides_rejects_the_push_whatever_its_config(tmp_path, server):
    alice = configured(tmp_path, "alice", server)
    commit_refusing_policy(alice)
    git(alice, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(server, "config", "lifeline.allowSecretOverride", "true")  # the policy's refusal wins
    log_override(alice)
    r = cli(alice, "push")
    assert r.code != 0, r
    assert ref(server, "refs/lifeline/main") is None
    assert "allow_secret_override" in r.out + r.err, r


def test_a_teammate_reading_a_refusing_policy_from_the_remote_pulls_without_the_override(tmp_path, remote):
    alice = configured(tmp_path, "alice", remote)
    log_override(alice)
    assert cli(alice, "push").code == 0
    commit_refusing_policy(alice)
    git(alice, "push", "-q", "origin", "HEAD:refs/heads/main")
    bob = configured(tmp_path, "bob", remote)
    git(bob, "fetch", "-q", "origin")
    git(bob, "remote", "set-head", "origin", "main")  # what a clone sets: the trusted ref
    r = cli(bob, "pull")
    assert ref(bob, "refs/lifeline/main") is None, r
    assert "allow_secret_override" in r.out + r.err, r
    v = cli(alice, "verify")  # alice's own default branch holds the policy now
    assert v.code != 0 and "overrides the secret scan" in v.out + v.err, v


def test_a_policy_that_allows_overrides_never_outvotes_a_refusing_config(tmp_path, remote):
    alice = configured(tmp_path, "alice", remote)
    (alice / ".lifeline").mkdir()
    (alice / ".lifeline" / "policy.json").write_text('{"version": 1, "allow_secret_override": true}\n')
    git(alice, "add", ".")
    git(alice, "commit", "-q", "-m", "policy")
    log_override(alice)
    assert cli(alice, "verify").code == 0
    git(alice, "config", "lifeline.allowSecretOverride", "false")
    assert cli(alice, "verify").code != 0


def test_a_policy_refusing_overrides_with_a_mistake_elsewhere_still_refuses(tmp_path, remote):
    alice = configured(tmp_path, "alice", remote)
    log_override(alice)
    (alice / ".lifeline").mkdir()
    (alice / ".lifeline" / "policy.json").write_text('{"version": 1, "allow_secret_override": false, "typo": 1}\n')
    git(alice, "add", ".")
    git(alice, "commit", "-q", "-m", "policy")
    v = cli(alice, "verify")
    assert v.code != 0 and "overrides the secret scan" in v.out + v.err, v
