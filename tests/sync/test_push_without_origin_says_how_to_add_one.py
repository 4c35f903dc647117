"""A push with no remote says how to add one; with remotes but no origin, it names them."""

from __future__ import annotations

from kit.run import cli, git


def test_push_with_no_remote_says_how_to_add_one(repo):
    # it used to say "git lifeline pull <remote>"
    assert cli(repo, "log", "--kind", "note", "--summary", "s", "--body", "b").code == 0
    for verb in ("push", "sync", "pull", "fetch"):
        res = cli(repo, verb)
        assert res.code == 2, res
        assert "no remote" in res.err and "git remote add origin <url>" in res.err and "pull <remote>" not in res.err


def test_push_with_remotes_but_no_origin_names_them(repo, tmp_path):
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "backup.git"))
    git(repo, "remote", "add", "backup", str(tmp_path / "backup.git"))
    res = cli(repo, "push")
    assert res.code == 2 and "name one of backup (e.g. git lifeline push backup)" in res.err, res
