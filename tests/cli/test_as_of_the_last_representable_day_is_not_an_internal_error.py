"""--as-of on the last day a datetime holds is read, not an internal error."""

from __future__ import annotations

from pathlib import Path

from helpers import cli, client, git


def bare(tmp_path: Path, name: str = "server.git") -> Path:
    path = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", str(path))
    return path


def configured_client(tmp_path: Path, name: str, url: Path) -> Path:
    repo = client(tmp_path, name, url)
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "test@example.com")
    return repo


def log_decision(repo: Path, summary: str = "First decision", body: str = "Because.") -> None:
    r = cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", body)
    assert r.code == 0, r


def test_as_of_the_last_representable_day_is_read_not_an_internal_error(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    log_decision(repo)
    r = cli(repo, "context", "--as-of", "9999-12-31")
    assert r.code == 0 and "First decision" in r.out, r
