"""Every blob under a tree, read in one pass: `git ls-tree -r` piped into `git cat-file --batch`.

A cold cache build reads every entry of a line. Through libgit2 that is one lookup per
blob and per fan-out subtree, ~36 µs each in a packed repository whose blobs are
deltified against each other (5.3 s for 100k blobs here); `git cat-file --batch` walks
the same pack in 1.3 s, in its own process, so the caller parses one blob while git
inflates the next (two cores do the work of one). The stream is bounded: git blocks
when the caller has not read what it wrote, so memory does not grow with the tree.
"""

from __future__ import annotations

import collections
import contextlib
import subprocess
import threading
from typing import IO, Iterable, Iterator, Optional, cast

from .command import GitCommandError
from .repo import GitRepo


def tree_blobs(gr: GitRepo, tree: str) -> Iterator[tuple[str, str, bytes]]:
    """(path, blob oid, bytes) of every blob under `tree` (paths relative to it), in path
    order. Anything that is not a blob (a subtree where a blob belongs, a gitlink) is
    skipped: the caller that walked the tree by diff reports those."""
    cwd = str(gr.workdir) if gr.workdir else str(gr.git_dir)
    # the objects themselves, as libgit2 reads them (never what refs/replace/* puts in their
    # place), with git's memory bounded (PACK_WINDOWS): a whole million-entry line is read so
    base = ["git", *PACK_WINDOWS, "--no-replace-objects", "--git-dir", str(gr.git_dir)]
    lister = subprocess.Popen(
        [*base, "ls-tree", "-r", "-z", tree], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    reader = subprocess.Popen(
        [*base, "cat-file", "--batch", "--buffer"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    pending: collections.deque[tuple[str, str]] = collections.deque()
    failed: list[str] = []
    feeder = threading.Thread(target=_feed, args=(lister, reader, pending, failed), daemon=True)
    feeder.start()
    out = _BatchOutput(cast(IO[bytes], reader.stdout))
    try:
        while True:
            header = out.header()
            if header is None:
                break
            fields = header.split()
            if len(fields) == 2 and fields[1] == b"missing":
                raise KeyError(fields[0].decode("ascii", "replace"))  # what a pygit2 lookup raises
            if len(fields) != 3 or fields[1] != b"blob":
                raise GitCommandError(f"git cat-file --batch: unexpected {header[:80]!r}")
            size = int(fields[2])
            data = out.body(size)
            path, oid = pending.popleft()
            if oid != fields[0].decode("ascii") or data is None:
                raise GitCommandError(f"git cat-file --batch: {oid} came back out of order or short")
            yield path, oid, data
        feeder.join()
        if failed:
            raise GitCommandError(f"git ls-tree {tree} failed: {failed[0]}")
        if pending:
            raise GitCommandError(f"git cat-file --batch stopped before {pending[0][1]}")
    finally:
        _close((lister, reader), feeder)


def read_blobs(gr: GitRepo, oids: Iterable[str], kind: bytes = b"blob") -> Iterator[tuple[str, Optional[bytes]]]:
    """(oid, bytes) of each of `oids` (full hex ids), in the order given; bytes is None
    for an id git does not hold as a `kind` (a blob, or a tree: verify reads a line's
    fan-out trees so too) (missing, or another type): the caller reads
    those through libgit2 (`trees.blob_data`), which says what is wrong.

    One `git cat-file --batch` reads them all: at 100k blobs of a gc'd line, libgit2's
    small delta-base cache misses on almost every read in id order (54 µs a blob, 12 µs
    at 10k), git's larger one does not (13 µs), and git inflates the next blob on the
    other core while the caller judges this one. The objects are the ids' own, never
    what refs/replace/* puts in their place (verify reads them: a pusher can create
    replace refs on a server)."""
    ids = list(oids)
    if not ids:
        return
    cwd = str(gr.workdir) if gr.workdir else str(gr.git_dir)
    reader = subprocess.Popen(
        ["git", *PACK_WINDOWS, "--no-replace-objects", "--git-dir", str(gr.git_dir), "cat-file", "--batch", "--buffer"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    feeder = threading.Thread(target=_feed_ids, args=(reader, ids), daemon=True)
    feeder.start()
    out = _BatchOutput(cast(IO[bytes], reader.stdout))
    try:
        for oid in ids:
            header = out.header() or b""
            fields = header.split()
            if len(fields) == 2 and fields[1] in (b"missing", b"ambiguous") and fields[0] == oid.encode("ascii"):
                yield oid, None
                continue
            if len(fields) != 3 or fields[0] != oid.encode("ascii"):
                raise GitCommandError(f"git cat-file --batch: unexpected {header[:80]!r} for {oid}")
            data = out.body(int(fields[2]))
            if data is None:
                raise GitCommandError(f"git cat-file --batch stopped inside {oid}")
            yield oid, (data if fields[1] == kind else None)
    finally:
        _close((reader,), feeder)


# git maps a pack whole by default (1 GiB windows), and every page it reads stays in its
# resident set: reading a million-entry line (a 629 MB pack set) git's own peak was 716 MB.
# Windows of 32 MB, at most 256 MB mapped, bound it for ~5% more of git's CPU. verify's git
# processes (read_blobs, verify_diff) run so.
PACK_WINDOWS = ("-c", "core.packedGitWindowSize=32m", "-c", "core.packedGitLimit=256m")


class _BatchOutput:
    """`git cat-file --batch`'s output, taken from the pipe in large reads: a header line,
    then that many bytes and a newline, per object. Two buffered reads and a readline per
    blob cost ~4 µs of this process's time, more than splitting a 256 KB chunk does."""

    _CHUNK = 1 << 18

    def __init__(self, out: IO[bytes]):
        self._out = out
        self._buf = b""
        self._pos = 0

    def _more(self) -> bool:
        """Read the next chunk after what is left unread; False at the end of the output."""
        chunk = self._out.read1(self._CHUNK) if hasattr(self._out, "read1") else self._out.read(self._CHUNK)
        if not chunk:
            return False
        self._buf = self._buf[self._pos :] + chunk
        self._pos = 0
        return True

    def header(self) -> Optional[bytes]:
        """The next header line without its newline; None at the end of the output (a
        header cut short by the end is returned as it is, for the caller to refuse)."""
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end >= 0:
                line = self._buf[self._pos : end]
                self._pos = end + 1
                return line
            if not self._more():
                rest = self._buf[self._pos :]
                self._pos = len(self._buf)
                return rest or None

    def body(self, size: int) -> Optional[bytes]:
        """The next `size` bytes and the newline after them; None when the output ends
        first or the newline is not there."""
        while len(self._buf) - self._pos < size + 1:
            if not self._more():
                return None
        start = self._pos
        if self._buf[start + size : start + size + 1] != b"\n":
            return None
        self._pos = start + size + 1
        return self._buf[start : start + size]


@contextlib.contextmanager
def _feeding(dst: IO[bytes]) -> Iterator[IO[bytes]]:
    """Writing cat-file's input: a reader that stopped early (it was closed) ends the writes
    quietly, and the pipe is closed after them so that cat-file sees its input end."""
    try:
        yield dst
    except (BrokenPipeError, ValueError, OSError):
        pass
    finally:
        try:
            dst.close()
        except OSError:
            pass


def _feed_ids(reader: subprocess.Popen, ids: list[str]) -> None:
    with _feeding(cast(IO[bytes], reader.stdin)) as dst:
        for start in range(0, len(ids), 4096):
            dst.write("".join(f"{oid}\n" for oid in ids[start : start + 4096]).encode("ascii"))
        dst.flush()


def _close(procs: tuple[subprocess.Popen, ...], feeder: threading.Thread) -> None:
    """End the git processes (killed when the caller stopped early), their pipes, and the
    thread feeding them."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    for proc in procs:
        for stream in (proc.stdout, proc.stdin, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    feeder.join(timeout=5)


def _feed(
    lister: subprocess.Popen, reader: subprocess.Popen, pending: collections.deque[tuple[str, str]], failed: list[str]
) -> None:
    """Hand each blob the lister names to cat-file, remembering its path (in order)."""
    src = cast(IO[bytes], lister.stdout)
    rest = b""
    with _feeding(cast(IO[bytes], reader.stdin)) as dst:
        while True:
            chunk = src.read(1 << 16)
            if not chunk:
                break
            records = (rest + chunk).split(b"\0")
            rest = records.pop()
            batch = []
            for rec in records:
                meta, _, path = rec.partition(b"\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == b"blob":
                    pending.append((path.decode("utf-8", "surrogateescape"), parts[2].decode("ascii")))
                    batch.append(parts[2] + b"\n")
            if batch:
                dst.write(b"".join(batch))
                dst.flush()
        code = lister.wait()
        if code != 0:
            failed.append(_stderr(lister) or f"exit {code}")


def _stderr(proc: subprocess.Popen) -> Optional[str]:
    try:
        return cast(IO[bytes], proc.stderr).read().decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return None
