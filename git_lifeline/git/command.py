"""The git executable and git's config, without libgit2.

Nothing here needs pygit2, so a process that never opens the repository with it (the
warm `context`, app/warm_context.py) reads settings exactly as every other command does:
through `git config`, so that `git -c`, GIT_DIR, GIT_CONFIG_* and includes behave as
users expect from git itself. git/repo.py's GitRepo reads its config through the same
functions. The config listing is spawned directly (`_spawned`); `run_git` imports the
subprocess module only when called.
"""

from __future__ import annotations

import os
import select
import signal
from typing import TYPE_CHECKING, Optional

from ..errors import InputError, LifelineError

if TYPE_CHECKING:
    import subprocess


class GitCommandError(LifelineError):
    """The git executable failed: our line, then git's own (git_lines)."""

    @property
    def git_said(self) -> tuple[str, ...]:
        """git's own lines, indented (the message after its first line)."""
        return self.message_lines[1:]


def git_lines(stderr: str, code: int) -> list[str]:
    """git's own words as lines to print under ours, indented: split at line feeds only, so
    a carriage return or a line separator inside them (a remote's) stays escaped."""
    return [f"  {ln.rstrip()}" for ln in stderr.split("\n") if ln.strip()] or [f"  git exited {code}"]


def run_git(
    args: list[str],
    cwd: Optional[str] = None,
    check: bool = True,
    input: Optional[bytes] = None,
    env: Optional[dict[str, str]] = None,
    timeout: Optional[float] = None,
) -> subprocess.CompletedProcess:
    """git with `args`; GitCommandError when it fails (with `check`) or outlives `timeout`
    seconds (it is killed then)."""
    import subprocess  # here: the warm `context` runs git only through _spawned

    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GitCommandError(f"git {' '.join(args[:2])} did not finish within {timeout:g} s") from None
    except FileNotFoundError:
        if cwd is not None and not os.path.isdir(cwd):  # the same error as a missing program
            raise LifelineError(f"git cannot run in {cwd!r}: the directory is gone") from None
        raise LifelineError("the git executable was not found on PATH") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        raise GitCommandError(f"git {' '.join(args[:2])} failed:", *git_lines(err, proc.returncode))
    return proc


# git's config as `git config --list` shows it: lowercased key -> its values, the last holding
GitConfig = dict[str, list[str]]


def git_cwd(git_dir: str, workdir: Optional[str]) -> str:
    """Where git runs for a repository: its work tree, else (bare) its git dir."""
    return workdir if workdir else git_dir


def read_config(git_dir: str, workdir: Optional[str]) -> GitConfig:
    """All of git's config as `git config --list` shows it: {lowercased key: [values]}
    (the last value is the one that holds; what git could list when it fails)."""
    return _listed(git_dir, workdir)[2]


def read_config_strictly(git_dir: str, workdir: Optional[str]) -> Optional[GitConfig]:
    """read_config, or None when git failed or warned while listing it (a repository
    extension it does not know makes it skip the repository's own config with a warning;
    a broken include): a reader that must be sure of every setting takes None as "not sure"."""
    code, err, values = _listed(git_dir, workdir)
    return values if code == 0 and not err else None


def _listed(git_dir: str, workdir: Optional[str]) -> tuple[int, bytes, GitConfig]:
    """(exit code, stderr, values) of `git config -z --list` run for the repository."""
    args = ["--git-dir", git_dir, "config", "-z", "--list"]
    if hasattr(os, "posix_spawnp"):
        code, out, err = _spawned(["git", "-C", git_cwd(git_dir, workdir), *args])
    else:
        proc = run_git(args, cwd=git_cwd(git_dir, workdir), check=False)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    values: GitConfig = {}
    for item in out.decode("utf-8", "replace").split("\0"):
        if not item:
            continue
        key, _, value = item.partition("\n")
        values.setdefault(key.lower(), []).append(value)
    return code, err, values


def _spawned(argv: list[str]) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of a program run to its end. Every command lists git's
    config as it starts (the warm `context` included), so this one call is spawned without
    the subprocess module: ~8 ms less CPU per process here (its imports and its fork)."""
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, w_out, 1), (os.POSIX_SPAWN_DUP2, w_err, 2)],
            setsigdef=(signal.SIGPIPE,),
        )  # as subprocess restores it
    except FileNotFoundError:
        for fd in (r_out, r_err):
            os.close(fd)
        raise LifelineError("the git executable was not found on PATH") from None
    finally:
        os.close(w_out)
        os.close(w_err)
    chunks: dict[int, list[bytes]] = {r_out: [], r_err: []}
    pending = [r_out, r_err]
    while pending:  # both pipes at once: a full one must never stall the other
        ready, _, _ = select.select(pending, [], [])
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if data:
                chunks[fd].append(data)
            else:
                pending.remove(fd)
                os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks[r_out]), b"".join(chunks[r_err])


def config_get(values: GitConfig, key: str, default: Optional[str] = None) -> Optional[str]:
    found = values.get(key.lower())
    return found[-1] if found else default


def config_bool(values: GitConfig, key: str, default: bool) -> bool:
    value = config_get(values, key)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in ("", "true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise InputError(f"git config {key} has a value that is not a boolean: {value!r}")


def config_int(values: GitConfig, key: str, default: int) -> int:
    value = config_get(values, key)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise InputError(f"git config {key} has a value that is not a whole number: {value!r}") from None
