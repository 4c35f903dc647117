"""Files in the work tree and the git dir, written so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def read_text_exact(path: Path) -> str:
    """Read UTF-8 text byte-for-byte (no newline translation: CRLF in a body survives)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename: a crash leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
