"""What `context` says of the staleness of a line's decisions, kept in `<line>.stale` beside
the line's cache (FORMAT §10) for exactly one (ledger head, trail head, code view) triple,
so that the warm context (app/warm_context.py) answers a ledger whose decisions name code
paths without pygit2 or a `git log`, and the normal path reads one small file instead of
walking the ledger's history for what each decision was made against.

The code view is the code commit this worktree's HEAD is at and the bytes of the shallow
file (a deepened clone answers differently at the same HEAD), both read from git's files
(git/reffiles.py) the same way by both paths. The file is rebuildable: anything missing,
malformed or kept for another triple reads as None and is found again from git.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..core.json_input import JSONInputError, read_json
from .fs import UnsafeFile, read_bounded, write_atomic
from .reffiles import head_view

VERSION = 1
_MAX_FILE = 64 << 20  # one mark (~150 bytes) per stale decision: far more than a ledger holds


@dataclass(frozen=True)
class KeptStaleness:
    """What `context` shows: {decision id: its mark} and the shallow clone's note."""

    marks: dict[str, str]
    unknown_note: Optional[str]


def stale_file(lifeline_dir: str, line: str) -> Path:
    return Path(lifeline_dir) / f"{line}.stale"


def code_view(git_dir: str, common_dir: str) -> Optional[str]:
    """`<HEAD's commit, or unborn> <sha256 of the shallow file, or ->`; None when HEAD is not
    read for sure. (A repository with no code commit yet is a view of its own: a ledger kept
    before the first commit answers warm too.)"""
    head = head_view(git_dir, common_dir)
    if head is None:
        return None
    try:
        shallow = read_bounded(Path(common_dir) / "shallow", _MAX_FILE, follow=False)
    except FileNotFoundError:
        return f"{head} -"
    except (OSError, UnsafeFile):
        return None
    return f"{head} {hashlib.sha256(shallow).hexdigest()}"


def kept_staleness(path: Path, ledger_head: str, trail_head: Optional[str], view: str) -> Optional[KeptStaleness]:
    """What the file keeps for exactly this triple, or None."""
    try:
        doc = read_json(read_bounded(path, _MAX_FILE, follow=False), _MAX_FILE)
    except (OSError, UnsafeFile, JSONInputError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        return None
    if [doc.get("ledger"), doc.get("trail"), doc.get("code")] != [ledger_head, trail_head, view]:
        return None
    marks, note = doc.get("marks"), doc.get("unknown")
    if not isinstance(marks, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in marks.items()):
        return None
    if note is not None and not isinstance(note, str):
        return None
    return KeptStaleness(dict(marks), note)


def keep_staleness(path: Path, ledger_head: str, trail_head: Optional[str], view: str, kept: KeptStaleness) -> None:
    doc = {
        "version": VERSION,
        "ledger": ledger_head,
        "trail": trail_head,
        "code": view,
        "marks": kept.marks,
        "unknown": kept.unknown_note,
    }
    try:
        os.makedirs(path.parent, exist_ok=True)
        write_atomic(path, json.dumps(doc))  # in the order context shows them; ASCII: a path may hold a surrogate
    except OSError:
        pass  # a read-only repository: found again next time, nothing lost
