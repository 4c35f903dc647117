"""The git executable and git's config, without libgit2.

Everything here is plain subprocess work, so a process that never opens the repository
with pygit2 (the warm `context`, app/warm_context.py) reads settings exactly as every
other command does: through `git config`, so that `git -c`, GIT_DIR, GIT_CONFIG_* and
includes behave as users expect from git itself. git/repo.py's GitRepo reads its
config through the same functions.
"""

from __future__ import annotations

import subprocess
from typing import Optional

from ..errors import InputError, LifelineError


class GitCommandError(LifelineError):
    """The git executable failed; carries its stderr."""


def run_git(args: list[str], cwd: Optional[str] = None, check: bool = True,
            input: Optional[bytes] = None, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env)
    except FileNotFoundError:
        raise LifelineError("the git executable was not found on PATH") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitCommandError(f"git {' '.join(args[:2])} failed: {err}")
    return proc


def git_cwd(git_dir: str, workdir: Optional[str]) -> str:
    """Where git runs for a repository: its work tree, else (bare) its git dir."""
    return workdir if workdir else git_dir


def read_config(git_dir: str, workdir: Optional[str]) -> dict:
    """All of git's config as `git config --list` shows it: {lowercased key: [values]}
    (the last value is the one that holds; what git could list when it fails)."""
    return _listed(git_dir, workdir)[1]


def read_config_strictly(git_dir: str, workdir: Optional[str]) -> Optional[dict]:
    """read_config, or None when git failed or warned while listing it (a repository
    extension it does not know makes it skip the repository's own config with a warning;
    a broken include): a reader that must be sure of every setting takes None as "not sure"."""
    proc, values = _listed(git_dir, workdir)
    return values if proc.returncode == 0 and not proc.stderr else None


def _listed(git_dir: str, workdir: Optional[str]) -> tuple:
    proc = run_git(["--git-dir", git_dir, "config", "-z", "--list"], cwd=git_cwd(git_dir, workdir), check=False)
    values: dict = {}
    for item in proc.stdout.decode("utf-8", "replace").split("\0"):
        if not item:
            continue
        key, _, value = item.partition("\n")
        values.setdefault(key.lower(), []).append(value)
    return proc, values


def config_get(values: dict, key: str, default: Optional[str] = None) -> Optional[str]:
    found = values.get(key.lower())
    return found[-1] if found else default


def config_bool(values: dict, key: str, default: bool) -> bool:
    value = config_get(values, key)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in ("", "true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise InputError(f"git config {key} has a value that is not a boolean: {value!r}")


def config_int(values: dict, key: str, default: int) -> int:
    value = config_get(values, key)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise InputError(f"git config {key} has a value that is not a whole number: {value!r}") from None
