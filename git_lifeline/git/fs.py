"""Files next to the repository: the advisory locks that queue this machine's writers.

(`write_atomic` and `read_text_exact` belong here too; they move out of app/service.py
with the split of the faces, which is not part of the storage engine's change.)
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_HELD_LOCKS: dict[str, int] = {}  # lock path -> depth, for the locks this process holds


@contextmanager
def file_lock(lock_path: Path) -> Iterator[None]:
    """An exclusive advisory lock (flock) on `lock_path`, released by the OS if the holder
    dies; re-entrant within a process (flock would make a nested taker wait for itself).
    A no-op where it cannot be taken (no fcntl, a read-only git dir): compare-and-swap
    on the ref stays the guarantee, the lock only spares writers lost races."""
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
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        _HELD_LOCKS[key] = 1
        try:
            yield
        finally:
            _HELD_LOCKS.pop(key, None)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
