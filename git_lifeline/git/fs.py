"""Files beside the repository: atomic writes a reader never sees half of, the advisory
locks that queue this machine's writers, and bounded reads of files a clone may have
planted (a work tree is as hostile as the remote it came from)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

if TYPE_CHECKING:  # annotations only: repo.py imports this module
    from .repo import GitRepo

_HELD_LOCKS: dict[str, int] = {}  # lock path -> depth, for the locks this process holds
_CHUNK = 1 << 16


class UnsafeFile(OSError):
    """A file the tool will not read or write: a link out of the work tree, something
    other than a regular file (a device, a FIFO, a directory), or larger than allowed.
    An OSError, so a caller that already treats an unreadable file as absent (or a
    failed write as a warning) stays correct; `strerror` says which."""

    def __init__(self, path: Path, why: str):
        super().__init__(errno.EPERM, why, str(path))


class LockHeld(OSError):
    """Another process holds a lock that was asked for without waiting (a read bringing
    fetched entries in must not queue behind a long import)."""

    def __init__(self, path: Path):
        super().__init__(errno.EAGAIN, "another git-lifeline process is writing", str(path))


@contextmanager
def file_lock(lock_path: Path, wait: bool = True) -> Iterator[None]:
    """An exclusive advisory lock (flock) on `lock_path`, released by the OS if the holder
    dies; re-entrant within a process (flock would make a nested taker wait for itself).
    A no-op where it cannot be taken (no fcntl, a read-only git dir): compare-and-swap
    on the ref stays the guarantee, the lock only spares writers lost races. With
    `wait=False`, LockHeld when another process holds it."""
    key = str(lock_path)
    if _HELD_LOCKS.get(key):
        _HELD_LOCKS[key] += 1
        try:
            yield
        finally:
            _HELD_LOCKS[key] -= 1
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        f = open(lock_path, "a")
    except OSError:
        yield
        return
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(lock_path) from None
        _HELD_LOCKS[key] = 1
        try:
            yield
        finally:
            _HELD_LOCKS.pop(key, None)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


# ---- bounded reads -------------------------------------------------------------------
def read_bounded(path: Path, limit: int, follow: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them.

    UnsafeFile for anything else: a device such as /dev/zero (endless), a FIFO (opening
    it would wait for a writer: it is opened non-blocking), a directory, a file larger
    than `limit` (told by fstat before a byte is read, and checked again while reading,
    since a file can grow), or with follow=False a symbolic link."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise UnsafeFile(path, f"{path} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(path, f"{path} is not a regular file")
        if st.st_size > limit:
            raise UnsafeFile(path, f"{path} is larger than {limit} bytes ({st.st_size})")
        parts = []
        total = 0
        while True:
            chunk = f.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsafeFile(path, f"{path} grew past {limit} bytes while it was read")
    return b"".join(parts)


def read_input_text(path: Path, limit: int, refusal: str, label: str, follow: bool = True) -> str:
    """The UTF-8 text of a file a user handed in (an ADR, a projection to migrate), read
    by read_bounded. InputError for an unsafe file ("<why>; <refusal>", the refusal saying
    what such a file must be) and for bytes that are no UTF-8 ("<label>: not valid UTF-8");
    any other OSError is the caller's to word (a missing file, a denied one)."""
    from ..errors import InputError

    try:
        return read_bounded(path, limit, follow=follow).decode("utf-8")
    except UnsafeFile as exc:
        raise InputError(f"{exc.strerror}; {refusal}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def within(root: Path, path: Path) -> Path:
    """`path` with every link resolved, when it stays inside `root` (itself resolved);
    UnsafeFile when a link (of the file or of a directory above it) leads out."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and os.path.commonpath([real_root, real]) != real_root:
        raise UnsafeFile(path, f"{path} leads out of the work tree (to {real})")
    return Path(real)


# ---- writes --------------------------------------------------------------------------
def current_umask() -> int:
    """The process's umask, read without changing it where the system says (Linux);
    elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """What a rewritten file's permission bits should be: those of the file it replaces,
    else what the umask gives a new file (as git gives the files it checks out)."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    return 0o666 & ~current_umask()


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename: a crash leaves the old file or the new one.
    The file gets the mode of the one it replaces, else the umask's (the temporary file
    behind the rename is created private to its owner)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def worktree_target(root: Path, path: Path) -> Path:
    """Where a file the tool keeps in the work tree may be written: `path` itself, or
    the file a link inside the work tree points at. UnsafeFile when the file or a
    directory above it leads out of the work tree, or when what is there is not a
    regular file (a device, a FIFO, a directory are never replaced), or when it leads into
    a `.git` directory (no work-tree file lives there: a link to .git/config or a hook)."""
    target = within(root, path)
    if any(part.lower() == ".git" for part in Path(os.path.relpath(target, os.path.realpath(root))).parts):
        raise UnsafeFile(path, f"{path} leads into a git directory (to {target})")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(path, f"{path} is not a regular file")
    return target


def write_in_worktree(root: Path, path: Path, text: str) -> Path:
    """THE writer of every file the tool keeps in a work tree (LIFELINE.md, the agents'
    rules files, .mcp.json, .claude/settings.json, .lifeline/policy.json): held to
    `worktree_target`, so never through a link of the file or of any directory above it
    out of the work tree (a committed `.claude -> ~/.claude`) nor into a `.git` directory.
    Checked again once the directories above exist, so one made or swapped meanwhile
    cannot carry the write out. Returns the file written (UnsafeFile when refused)."""
    worktree_target(root, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = worktree_target(root, path)
    write_atomic(target, text)
    return target


# ---- generated files in a work tree ----------------------------------------------------
def relative_to_worktree(root: Path, path: Path) -> Optional[str]:
    """`path` as git names it (relative to the top of the work tree, with /), or None
    when it is not under `root`."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return None


def is_tracked(gr: GitRepo, path: Path) -> bool:
    """Whether git tracks `path` in this work tree's index (a file the user shares: the
    tool never rewrites one behind their back). An index that cannot be read counts as
    tracking it."""
    if gr.workdir is None:
        return False
    rel = relative_to_worktree(gr.workdir, path)
    if rel is None:
        return False
    try:
        index = gr.repo.index
        index.read(False)
        return rel in index
    except Exception:  # a damaged index: do not write what we cannot tell is ours
        return True


_GLOB_SPECIAL = set("*?[]\\!# ")


def exclude_pattern(rel: str) -> str:
    """An info/exclude line that matches exactly the file `rel` (anchored, escaped)."""
    return "/" + "".join("\\" + ch if ch in _GLOB_SPECIAL else ch for ch in rel)


PROJECTION_NOTE = "generated projection, rebuilt by `git lifeline render`"


def ensure_excluded(gr: GitRepo, path: Path, why: str = PROJECTION_NOTE) -> bool:
    """Make git ignore the file `path` (generated, or this machine's own) through the
    common git dir's info/exclude (never a tracked .gitignore), with a comment saying
    `why`; True when a line was added. Nothing is added when git already ignores it."""
    if gr.workdir is None:
        return False
    rel = relative_to_worktree(gr.workdir, path)
    if rel is None:
        return False
    if gr.git(["check-ignore", "-q", "--", rel], check=False).returncode == 0:
        return False
    exclude = gr.common_dir / "info" / "exclude"
    try:
        current = read_bounded(exclude, 1 << 20).decode("utf-8", "replace")
    except FileNotFoundError:
        current = ""
    line = exclude_pattern(rel)
    if line in current.splitlines():
        return False
    note = f"# git-lifeline: {why}\n"
    sep = "" if not current or current.endswith("\n") else "\n"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as f:
        f.write(f"{sep}{note}{line}\n")
    return True
