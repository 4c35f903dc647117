"""Bulk writes (import): many entries of one line as one pack and one commit.

The pack is written by `git fast-import` into a private git dir that borrows the
repository's objects; nothing is visible until `publish` moves the finished pack in
and swaps the ref by compare-and-swap, and `abort` (or any failure) removes every
byte it wrote.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Optional

from ..errors import LifelineError
from .fanout import CAS_ATTEMPTS, CAS_SECONDS, AppendResult, FanoutLog
from .libgit2 import pygit2
from .trees import TreeLookup, entry_path

if TYPE_CHECKING:  # annotations only
    import subprocess
    from types import ModuleType

    from ..core.entry import Entry

# progress(done, total), called while the commit is written
Counting = Callable[[int, int], None]


class BulkWriter:
    """Writes many entries of one line as a pack, then one commit, then moves the ref by CAS.

    Blobs are streamed to `git fast-import` while the caller is still reading and
    validating, so git compresses on one core while Python validates on the other.
    fast-import runs against a private git dir under the cache directory whose
    object store borrows the repository's as an alternate: until `publish` moves
    the finished pack into the repository and swaps the ref, nothing is visible,
    and `abort` (or any failure) removes every byte it wrote.
    """

    def __init__(self, store: FanoutLog):
        import hashlib
        import subprocess
        import tempfile

        self._sha1 = hashlib.sha1
        self.store = store
        self.blobs: dict[str, str] = {}  # entry id -> blob oid (hex), as git will name it
        self._buf: list[bytes] = []
        self._buffered = 0
        base = store.gr.lifeline_dir()
        base.mkdir(parents=True, exist_ok=True)
        _remove_stale_imports(base)
        self.tmp = Path(tempfile.mkdtemp(prefix="import-", dir=str(base)))
        self._layout()
        # A dead fast-import must surface as an error, not kill us silently: the CLI
        # restores SIGPIPE's default (for `| head`), so ignore it while we write the pipe.
        self._sigpipe = None
        try:
            import signal

            self._sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        except (ValueError, AttributeError, OSError):
            pass
        self._proc = self._start(subprocess)

    def _layout(self) -> None:
        """A minimal private git dir whose object store borrows the repository's."""
        objects = self.tmp / "objects"
        (objects / "pack").mkdir(parents=True, exist_ok=True)
        (objects / "info").mkdir(exist_ok=True)
        (self.tmp / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (self.tmp / "HEAD").write_text("ref: refs/heads/import\n")
        real_objects = (self.store.gr.common_dir / "objects").resolve()
        (objects / "info" / "alternates").write_text(f"{real_objects}\n")

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in (
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_INDEX_FILE",
            "GIT_COMMON_DIR",
            "GIT_NAMESPACE",
        ):
            env.pop(key, None)
        # zlib's per-object state (~270 KB) is above glibc's mmap threshold, so every
        # object costs an mmap/munmap and its page faults: measured at 100k entries,
        # 4.2 s of 10 s CPU in the kernel. Keeping such blocks on the heap removes it.
        # (Other C libraries ignore the variable.)
        tunables = "glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=134217728"
        env["GLIBC_TUNABLES"] = f"{env['GLIBC_TUNABLES']}:{tunables}" if env.get("GLIBC_TUNABLES") else tunables
        return env

    def _start(self, subprocess: ModuleType) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                # --depth=0: no delta chains. fast-import deltas each blob against the one
                # streamed before it, 50 deep; every later read of the line (verify, a cold
                # cache, recall) then undoes those chains in id order: `git cat-file` of
                # 100,000 entries took 1.75 s of git's CPU, 0.75 s without them, for a pack
                # 9% larger (46 -> 50 MB). A later `git gc` deltas them as it sees fit.
                [
                    "git",
                    "--git-dir",
                    str(self.tmp),
                    "fast-import",
                    "--depth=0",
                    "--quiet",
                    "--done",
                    "--date-format=raw",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=self._env(),
                bufsize=0,
            )
        except FileNotFoundError:
            self._cleanup()
            raise LifelineError("the git executable was not found on PATH") from None

    def _write(self, data: bytes) -> None:
        self._buf.append(data)
        self._buffered += len(data)
        if self._buffered >= 1 << 20:
            self._flush()

    def _stdin(self) -> IO[bytes]:
        stdin = self._proc.stdin
        assert stdin is not None  # started with stdin=PIPE
        return stdin

    def _flush(self) -> None:
        data = b"".join(self._buf)
        self._buf, self._buffered = [], 0
        try:
            self._stdin().write(data)
        except OSError:
            err = self._finish_process()
            self.abort()
            raise LifelineError(f"git fast-import stopped: {err or 'broken pipe'}") from None

    def add(self, entry: Entry) -> None:
        """Stream one entry's blob (idempotent per id)."""
        if entry.id in self.blobs:
            return
        data = entry.to_json()
        self.blobs[entry.id] = self._sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self._write(b"blob\ndata %d\n%s\n" % (len(data), data))

    def _finish_process(self) -> str:
        try:
            if self._buf and self._proc.poll() is None:
                data = b"".join(self._buf)
                self._buf, self._buffered = [], 0
                self._stdin().write(data)
        except OSError:
            pass
        try:
            if self._proc.stdin and not self._proc.stdin.closed:
                self._proc.stdin.close()
        except OSError:
            pass
        err = self._proc.stderr.read().decode("utf-8", "replace").strip() if self._proc.stderr else ""
        self._proc.wait()
        return err

    def abort(self) -> None:
        """Stop fast-import and delete everything it wrote; the repository is untouched."""
        self._buf, self._buffered = [], 0
        if self._sigpipe is not None:
            import signal

            try:
                signal.signal(signal.SIGPIPE, self._sigpipe)
            except (ValueError, OSError):
                pass
            self._sigpipe = None
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self._cleanup()

    def _cleanup(self) -> None:
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)

    def publish(
        self, entries: list[Entry], message_for: Callable[[list[Entry]], str], progress: Optional[Counting] = None
    ) -> AppendResult:
        """One commit on the line's head holding `entries` (those not yet in the line),
        made by fast-import; its pack is moved into the repository, then the ref is
        swapped (CAS). On a lost swap the commit is rebuilt on the new head (the blobs
        are in the repository by then) and the swap retried.
        """
        try:
            self.store.refuse_clash()  # before fast-import is fed anything
            for e in entries:
                self.add(e)
            with self.store.write_lock():
                return self._publish_locked(entries, message_for, progress)
        finally:
            self.abort()

    def _publish_locked(
        self, entries: list[Entry], message_for: Callable[[list[Entry]], str], progress: Optional[Counting]
    ) -> AppendResult:
        deadline = time.monotonic() + CAS_SECONDS
        pause: Optional[float] = 0.0
        for attempt in range(CAS_ATTEMPTS):
            if attempt:
                time.sleep(pause or 0.0)
                self._restart()
            head = self.store.head()
            base = TreeLookup(self.store.tree(head))
            new: list[Entry] = []
            existing: list[Entry] = []
            seen: set[str] = set()
            for e in entries:
                if e.id not in seen:
                    seen.add(e.id)
                    (existing if base.find(e.id) is not None else new).append(e)
            if not new:
                return AppendResult([], existing, None)
            commit = self._commit(head, new, message_for, progress)
            self._move_pack()
            commit = self.store.resign(commit)  # fast-import cannot sign
            self.store.check_written(pygit2.Oid(hex=commit), [e.id for e in new])
            if self.store.move_ref(head, commit, f"lifeline: import {len(new)}"):
                self.store.maybe_gc()
                return AppendResult(new, existing, commit, head)
            pause = self.store.retry_pause(attempt + 1, deadline)
            if pause is None:
                break
        raise self.store.cas_failure()

    def _restart(self) -> None:
        import signal
        import subprocess

        self.abort()
        self._layout()
        try:
            self._sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        except (ValueError, AttributeError, OSError):
            pass
        self._proc = self._start(subprocess)

    def _commit(
        self,
        head: Optional[str],
        new: list[Entry],
        message_for: Callable[[list[Entry]], str],
        progress: Optional[Counting],
    ) -> str:
        name, email = self.store.gr.identity()
        when = max(int(e.ts.timestamp()) for e in new)
        msg = message_for(new).encode("utf-8")
        ident = f"{name} <{email}> {when} +0000".encode("utf-8")
        parts = [
            b"commit refs/heads/import\n",
            b"author " + ident + b"\n",
            b"committer " + ident + b"\n",
            b"data %d\n" % len(msg),
            msg,
            b"\n",
        ]
        if head:
            parts.append(f"from {head}\n".encode())
        self._write(b"".join(parts))
        total = len(new)
        for i, e in enumerate(new, 1):
            a, b, rest = entry_path(e.id)
            self._write(f"M 100644 {self.blobs[e.id]} {self.store.ns.tree_dir}/{a}/{b}/{rest}\n".encode())
            if progress is not None and (i % 2000 == 0 or i == total):
                progress(i, total)
        self._write(b"\ndone\n")
        err = self._finish_process()
        if self._proc.returncode != 0:
            raise LifelineError(f"git fast-import failed: {err or 'exit code ' + str(self._proc.returncode)}")
        ref = self.tmp / "refs" / "heads" / "import"
        if ref.exists():
            return ref.read_text().strip()
        for line in (self.tmp / "packed-refs").read_text().splitlines():
            if line.endswith(" refs/heads/import"):
                return line.split()[0]
        raise LifelineError("git fast-import wrote no commit")

    def _move_pack(self) -> None:
        """Move the finished pack(s) into the repository: the pack first, its index last,
        so no reader ever sees an index without its pack."""
        dest = self.store.gr.common_dir / "objects" / "pack"
        dest.mkdir(parents=True, exist_ok=True)
        for pack in sorted((self.tmp / "objects" / "pack").glob("pack-*.pack")):
            stem = pack.with_suffix("")
            for suffix in (".pack", ".rev", ".idx"):
                src = stem.with_suffix(suffix)
                if src.exists():
                    os.replace(src, dest / src.name)
        # fast-import may also have left loose objects (it does not for blobs/trees/commits
        # it packs, but be safe): copy them across.
        loose = self.tmp / "objects"
        for sub in loose.iterdir():
            if len(sub.name) == 2 and sub.is_dir():
                for obj in sub.iterdir():
                    target = self.store.gr.common_dir / "objects" / sub.name / obj.name
                    if not target.exists():
                        target.parent.mkdir(exist_ok=True)
                        os.replace(obj, target)


def _remove_stale_imports(base: Path, max_age: float = 24 * 3600) -> None:
    """Private import dirs left by a process that was killed mid-import (never in use:
    an import lasts seconds, not a day)."""
    import shutil

    now = time.time()
    for d in base.glob("import-*"):
        try:
            if now - d.stat().st_mtime > max_age:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass
