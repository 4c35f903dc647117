"""The door to git: opening the repository, reading config, running the git executable.

Settings are read through `git config` (not libgit2) so that `git -c`, GIT_DIR,
GIT_CONFIG_* and includes behave exactly as users expect from git itself.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ..errors import InputError, LifelineError, NotARepoError, explain_with
from . import command
from .command import run_git
from .libgit2 import pygit2
from .reffiles import common_dir_of, lifeline_dir_of


@dataclass
class GitRepo:
    """An opened repository plus the paths and settings every layer above needs."""

    repo: pygit2.Repository
    git_dir: Path  # this worktree's git dir
    common_dir: Path  # shared by all linked worktrees: refs, objects, our cache
    workdir: Optional[Path]
    _config: Optional[command.GitConfig] = None

    @property
    def is_bare(self) -> bool:
        return self.workdir is None

    def git(
        self,
        args: list[str],
        check: bool = True,
        input: Optional[bytes] = None,
        env: Optional[dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> subprocess.CompletedProcess:
        cwd = command.git_cwd(str(self.git_dir), str(self.workdir) if self.workdir else None)
        return run_git(
            ["--git-dir", str(self.git_dir), *args], cwd=cwd, check=check, input=input, env=env, timeout=timeout
        )

    def config(self) -> command.GitConfig:
        """All of git's config as seen by `git config --list` (last value wins)."""
        if self._config is None:
            self._config = command.read_config(str(self.git_dir), str(self.workdir) if self.workdir else None)
        return self._config

    def forget_config(self) -> None:
        """Drop the configuration read so far: it no longer holds once git's config was written."""
        self._config = None

    def config_add(self, key: str, value: str) -> None:
        """`git config --add key value` (one more value of a multi-valued key)."""
        self.git(["config", "--add", key, value])
        self.forget_config()

    def config_set(self, key: str, value: str) -> None:
        """`git config key value`."""
        self.git(["config", key, value])
        self.forget_config()

    def config_get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        return command.config_get(self.config(), key, default)

    def config_all(self, key: str) -> list[str]:
        return list(self.config().get(key.lower(), []))

    def config_bool(self, key: str, default: bool) -> bool:
        return command.config_bool(self.config(), key, default)

    def config_int(self, key: str, default: int) -> int:
        return command.config_int(self.config(), key, default)

    def identity(self) -> tuple[str, str]:
        """(name, email) as git would commit with; a clear error when unset."""
        name = os.environ.get("GIT_AUTHOR_NAME") or self.config_get("user.name")
        email = os.environ.get("GIT_AUTHOR_EMAIL") or self.config_get("user.email")
        if not name or not email:
            raise InputError(
                "no git identity configured: set it with",
                '  git config --global user.name "Your Name"',
                "  git config --global user.email you@example.com",
            )
        return name, email

    def lifeline_dir(self) -> Path:
        """Where the rebuildable cache lives: inside the shared git dir, never the tree."""
        return Path(lifeline_dir_of(str(self.common_dir)))

    # ---- reading revisions (for the app layer, which never touches pygit2) ----------------
    def tracks(self, path: str) -> bool:
        """Whether the index tracks `path` (relative to the top of the work tree, taken literally)."""
        return self.git(["ls-files", "--error-unmatch", "--", f":(top,literal){path}"], check=False).returncode == 0

    def is_shallow(self) -> bool:
        proc = self.git(["rev-parse", "--is-shallow-repository"], check=False)
        return proc.stdout.decode("utf-8", "replace").strip() == "true"

    def work_tree_status(self, pathspecs: Sequence[str]) -> bytes:
        """`git status --porcelain=v1 -z` of the work tree under `pathspecs`, untracked files
        included. --no-optional-locks: a caller that only looks (a hook beside an agent's
        own git) must not take the index lock."""
        argv = ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--", *pathspecs]
        return self.git(argv, check=False).stdout

    def names_commit(self, rev: str) -> bool:
        """Whether git's rev-parse reads `rev` as a commit (never as an option)."""
        argv = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"]
        return self.git(argv, check=False).returncode == 0

    def last_commit_before(self, timestamp: int) -> Optional[str]:
        """The newest commit on HEAD committed before `timestamp` (seconds), or None."""
        proc = self.git(["rev-list", "-1", at_time("--before", timestamp - 1), "HEAD", "--"], check=False)
        return (proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else "") or None

    def ahead_behind(self, ours: str, theirs: str) -> tuple[Optional[int], Optional[int]]:
        """(commits only in `ours`, commits only in `theirs`), or (None, None) when git cannot tell."""
        proc = self.git(["rev-list", "--left-right", "--count", f"{ours}...{theirs}"], check=False)
        parts = proc.stdout.decode("utf-8", "replace").split()
        if proc.returncode != 0 or len(parts) != 2:
            return None, None
        return int(parts[0]), int(parts[1])

    def resolve_commit(self, rev: str) -> Optional[str]:
        """The commit `rev` names (an oid, a prefix, a ref, HEAD~2...), or None when it names none."""
        try:
            return str(self.repo.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether commit `ancestor` is `descendant` or in its history."""
        return ancestor == descendant or self.repo.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor))


def _object_format(git_dir: Path) -> str:
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "sha1"
    in_ext = False
    for raw in text.splitlines():
        line = raw.strip().lower()
        if line.startswith("["):
            in_ext = line.startswith("[extensions")
        elif in_ext and line.replace(" ", "").startswith("objectformat="):
            return line.split("=", 1)[1].strip()
    return "sha1"


def open_repo(start: Optional[str] = None) -> GitRepo:
    """Find the repository that contains `start` (default: cwd, or GIT_DIR when set)."""
    env_git_dir = os.environ.get("GIT_DIR")
    if env_git_dir and start is None:
        found = str(Path(env_git_dir).resolve())
    else:
        where = start or os.getcwd()
        discovered = pygit2.discover_repository(where)
        if discovered is None:
            raise NotARepoError(f"not a git repository (or any parent up to /): {where}")
        found = discovered
    git_dir = Path(found).resolve()
    common_dir = Path(common_dir_of(str(git_dir)))
    fmt = _object_format(common_dir)
    if fmt != "sha1":
        raise NotARepoError(
            f"this repository uses the {fmt} object format; git-lifeline supports only "
            "sha1 repositories today (pygit2 cannot read the others)"
        )
    try:
        repo = pygit2.Repository(str(git_dir))
    except pygit2.GitError as exc:
        raise NotARepoError(f"cannot open the git repository at {git_dir}: {exc}") from None
    workdir = Path(repo.workdir).resolve() if repo.workdir and not repo.is_bare else None
    return GitRepo(repo=repo, git_dir=git_dir, common_dir=common_dir, workdir=workdir)


_OID = re.compile(r"[0-9a-f]{40}")


def repository_failure(exc: BaseException) -> Optional[LifelineError]:
    """The clear error for a failure of the repository itself (what the faces show instead
    of a traceback), or None when `exc` is not one.

    * pygit2 raises KeyError(<oid>) for an object the database lacks;
    * the OS (through pygit2, sqlite3 or Python) reports a read-only or full disk, or a
      permission problem, as OSError or pygit2.GitError.
    """
    import sqlite3

    from ..errors import RepositoryError

    if isinstance(exc, KeyError) and exc.args and _OID.fullmatch(str(exc.args[0])):
        return RepositoryError(
            f"object {exc.args[0]} is missing from the repository (a damaged or incomplete "
            "object database: run `git fsck`); the line was not changed"
        )
    if isinstance(exc, (OSError, pygit2.GitError, sqlite3.OperationalError)):
        text = str(exc) or type(exc).__name__
        return RepositoryError(f"the repository could not be read or written: {text}; the line was not changed")
    return None


def run_program(argv: list[str], stdin: bytes) -> int:
    """Run a program (a user's own hook) with our standard streams and `stdin` as its
    input; its exit code."""
    return subprocess.run(argv, input=stdin).returncode


explain_with(repository_failure)  # lets errors.describe_failure, the faces' one boundary, read pygit2's failures


def at_time(option: str, seconds: int) -> str:
    """git's `--since`/`--before` for a time in seconds: `@N` alone is read as seconds only
    from nine digits up (1973-03-03), a smaller N as a day or a year; with a zone it is
    always seconds (entries may be dated from 1970)."""
    return f"{option}=@{seconds} +0000"
