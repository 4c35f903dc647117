"""Faults staged for real and what must hold after them: a read-only repository (a bind
mount, a mount namespace, or write bits off), a small disk, processes killed with SIGKILL at
random points (the zygote), and the whole-ledger check that follows any of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Optional, TypeVar, Union

import pytest

from git_lifeline.git.verify import verify_log
from git_lifeline.views import projection, recall_answer
from git_lifeline.views.cache import LineCache
from kit.repos import open_ledger
from kit.run import TIMEOUT, git, subprocess_env

T = TypeVar("T")
# what a zygote's workload takes: its line, a count, a tag, a source file or a remote
ZygoteArg = Union[str, int]


def cache_state_key(cache: LineCache, head: Optional[str]) -> tuple[list[str], list[str], str, list[str]]:
    """What a line's cache answers: the entry rows, the broken ones, the fold (as its JSON
    text), a recall."""
    good, broken = cache.entries(head)
    fold = json.dumps(cache.state(head).fold.to_json(), sort_keys=True)
    hits = [h.id for h in recall_answer.answer(cache.ensure(head), "note decision", k=5).hits]
    return [r.id for r in good], sorted(broken), fold, hits


def assert_cache_heals(repo: Path, line: str = "main") -> None:
    """The cache under <git common dir>/lifeline/ (whatever state a fault left it in)
    answers exactly what a cache rebuilt from scratch answers."""
    led = open_ledger(repo, line)
    head = led.head()
    live = LineCache(led.store)
    fresh = LineCache(led.store)
    with tempfile.TemporaryDirectory() as tmp:
        fresh.path = Path(tmp) / "fresh.sqlite3"
        try:
            assert cache_state_key(live, head) == cache_state_key(fresh, head)
        finally:
            live.close()
            fresh.close()


def assert_ledger_whole(repo: Path, line: str = "main") -> Optional[str]:
    """After any fault: the ref names a complete commit (every object of its history
    readable), verify passes, the projection (if any) parses and holds only entries of
    the ref, and the cache heals. Returns the head."""
    led = open_ledger(repo, line)
    head = led.head()
    if head is not None:
        git(repo, "fsck", "--connectivity-only", "--no-dangling", "--no-progress", f"refs/lifeline/{line}")
        report = verify_log(led.store)
        assert report.ok, report.problems
    ids = {e.id for e in led.entries()}
    path = led.projection_path()
    if path is not None and path.exists():
        parsed = projection.parse(path.read_text(encoding="utf-8"), str(path))
        assert {e.id for e in parsed} <= ids, "the projection shows an entry the ref does not hold"
    assert_cache_heals(repo, line)
    return head


# ---- processes killed at random points ----------------------------------------------------
# A zygote imports git-lifeline once and forks a fresh process per trial, so a trial costs a
# fork, not an interpreter start. Each child opens the repository itself, says it is ready,
# runs its workload until it ends or is killed; the zygote reaps it when told.
ZYGOTE = r"""
import json, os, sys, time
from pathlib import Path
import git_lifeline.core.seed, git_lifeline.views.projection, git_lifeline.views.cache  # warm
from git_lifeline.app import exchange, interop
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace

def workload(cmd):
    ws = Workspace.open(cmd["repo"])
    led = ws.ledger(cmd.get("line"))
    kind = cmd["workload"]
    yield
    if kind == "append":
        for i in range(cmd.get("count", 10**6)):
            led.log(Draft(kind="note", summary=f"{cmd['tag']} note {i}", body=f"appended by {cmd['tag']}"))
    elif kind == "import":
        interop.import_from(led, Path(cmd["source"]))
    elif kind == "pull":
        exchange.pull(ws, cmd["remote"])
    else:
        raise SystemExit(f"unknown workload {kind}")

for raw in sys.stdin:
    cmd = json.loads(raw)
    if cmd.get("reap"):
        _, status = os.waitpid(cmd["reap"], 0)
        print(json.dumps({"status": status}), flush=True)
        continue
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        code = 0
        try:
            steps = workload(cmd)
            next(steps)
            os.write(w, b"r")
            for _ in steps:
                pass
        except BaseException:
            code = 1
        os._exit(code)
    os.close(w)
    ready = os.read(r, 1)
    os.close(r)
    print(json.dumps({"pid": pid, "ready": ready == b"r"}), flush=True)
"""


class Zygote:
    """Forks workload processes (append, import, pull) that a test kills with SIGKILL."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=subprocess_env(),
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.commands, self.answers = self.proc.stdin, self.proc.stdout

    def _ask(self, cmd: Mapping[str, ZygoteArg]) -> dict[str, int]:
        self.commands.write(json.dumps(cmd) + "\n")
        self.commands.flush()
        line = self.answers.readline()
        if not line:
            raise AssertionError("the zygote died")
        return json.loads(line)

    def start(self, workload: str, repo: Path, **args: ZygoteArg) -> int:
        answer = self._ask(dict(workload=workload, repo=str(repo), **args))
        assert answer["ready"], "the workload process failed before it started"
        return answer["pid"]

    def kill(self, pid: int) -> str:
        """SIGKILL the workload; 'killed' if it was still running, else how it had ended."""
        os.kill(pid, signal.SIGKILL)
        status = self._ask({"reap": pid})["status"]
        if os.WIFSIGNALED(status):
            return "killed"
        return "completed" if os.WEXITSTATUS(status) == 0 else "failed"

    def wait(self, pid: int) -> str:
        """Let the workload run to its end: 'completed' or 'failed'."""
        status = self._ask({"reap": pid})["status"]
        return "completed" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else "failed"

    def close(self) -> None:
        self.commands.close()
        self.proc.wait(timeout=TIMEOUT)


# ---- disk faults ----------------------------------------------------------------------------
def _run_quiet(*argv: str) -> bool:
    return subprocess.run(list(argv), capture_output=True, timeout=TIMEOUT).returncode == 0


class Unavailable(Exception):
    """The environment cannot stage this fault (the test skips, saying why)."""


def staged(fault: AbstractContextManager[T]) -> tuple[T, AbstractContextManager[T]]:
    """Enter a fault context, skipping (with its reason) where the environment cannot stage
    it; (what it yields, the context: exit it when done)."""
    try:
        return fault.__enter__(), fault
    except Unavailable as exc:
        pytest.skip(str(exc))


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` read-only for this process. As root (whom permission bits do not stop) by a
    read-only bind mount; otherwise by removing write permission everywhere under it."""
    if os.geteuid() == 0:
        if not _run_quiet("mount", "--bind", str(path), str(path)):
            raise Unavailable("mounting is not permitted here (a read-only bind mount needs it as root)")
        if not _run_quiet("mount", "-o", "remount,bind,ro", str(path), str(path)):
            _run_quiet("umount", str(path))
            raise Unavailable("remounting read-only is not permitted here")
        try:
            yield
        finally:
            _run_quiet("umount", str(path))
        return
    modes: dict[Path, int] = {}
    for p in [path, *path.rglob("*")]:
        modes[p] = p.stat().st_mode
        p.chmod(modes[p] & ~0o222)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


@contextmanager
def small_disk(path: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (needs root and permission to mount)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        raise Unavailable("mounting a small tmpfs needs root")
    if not _run_quiet("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)):
        raise Unavailable("mounting a tmpfs is not permitted here")
    try:
        yield path
    finally:
        _run_quiet("umount", "-l", str(path))


def fill_disk(mount: Path, leave_bytes: int) -> Path:
    """Fill the file system of `mount` until `leave_bytes` remain free; returns the filler."""
    st = os.statvfs(str(mount))
    free = st.f_bavail * st.f_frsize
    filler = mount / "filler"
    todo = max(0, free - leave_bytes)
    with open(filler, "wb", buffering=0) as f:
        try:
            while todo > 0:
                n = min(todo, 1 << 20)
                f.write(b"\0" * n)
                todo -= n
        except OSError:  # the file system rounds to blocks: it may be full a little earlier
            pass
    return filler


# ---- a read-only repository for one process ------------------------------------------------
_MOUNT_READ_ONLY = 'mount --bind -o ro "$0" "$0" && exec "$@"'
_CHMOD_READ_ONLY = 'chmod -R a-w "$0" && "$@"; code=$?; chmod -R u+w "$0"; exit $code'


def read_only_argv(path: Path) -> tuple[str, ...]:
    """The argv prefix that runs a program with `path` read-only: on a read-only mount in its own
    mount namespace (for `cli(..., under=...)`; the test's view stays writable; chmod does not stop root, a read-only mount
    does), else, for a user other than root, with its write bits off for the run. Skips only as
    root where no mount namespace may be made."""
    attempts = [("unshare", "-m"), ("unshare", "-r", "-m")] if os.geteuid() == 0 else [("unshare", "-r", "-m")]
    probe = path / ".read-only-probe"
    for unshare in attempts:
        prefix = (*unshare, "sh", "-c", _MOUNT_READ_ONLY, str(path))
        try:
            r = subprocess.run(
                [*prefix, "sh", "-c", f"! touch '{probe}' 2>/dev/null"], capture_output=True, timeout=TIMEOUT
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and not probe.exists():
            return prefix
    if os.geteuid() != 0:
        return ("sh", "-c", _CHMOD_READ_ONLY, str(path))
    pytest.skip("running as root, where chmod does not stop writes, and no mount namespace may be made here")
