"""The secret scan's and header check's verdicts that `git lifeline verify` already gave.

The full verify reads, parses and hashes every blob of a line on every run; the two
content rules that are not part of the parse (core/secrets.py's scan, core/headers.py's
typed values) are ~40% of its per-entry cost, and their verdict is a pure function of
fields the entry's id commits to (summary, body, author, agent, provider, model, kind)
plus `dedup_key`, which the id does not cover. So the verdict "clean" is kept per
(id, dedup_key), under a fingerprint of the rules' own source: the next verify, having
recomputed the id from the blob it just read, knows the content is the same one judged,
and skips those two rules for it. A change of any rule (another version of these
modules) changes the fingerprint, and every entry is judged again.

Only verify's full pass uses it (`verify_log`); the gates (pull, `git lifeline push`,
pre-push, pre-receive) never do: they judge every incoming entry. docs/SECURITY.md,
"What verify remembers", says what this trusts and why.

The file is `.git/lifeline/verdicts-<fingerprint>.bin`: 32 bytes per clean verdict (the id's
bytes, or the sha256 of id and dedup_key when the entry has one). A new file is written
whole to a temporary file and renamed, so a reader sees no file or all of it; a later
run appends its verdicts, and a reader drops a torn last key (a crash mid-append).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Optional, Union

from ..core import blocks, headers, secrets
from ..core.entry import Entry
from ..core.plain_blob import PlainEntry
from .repo import GitRepo

_KEY = 32  # bytes per verdict
_FORMAT = b"lifeline verdicts 1\n"  # a change of what a key means changes every fingerprint


def rules_fingerprint() -> Optional[str]:
    """The sha256 of the rules' source (the scan, the header types, the header parser),
    or None when it cannot be read (then nothing is remembered)."""
    h = hashlib.sha256(_FORMAT)
    for module in (secrets, headers, blocks):
        try:
            h.update(Path(module.__file__ or "").read_bytes())
        except OSError:
            return None
    return h.hexdigest()[:24]


def verdict_key(e: Union[Entry, PlainEntry]) -> bytes:
    """What a clean verdict is kept under: the id, which commits to every scanned field
    but `dedup_key`, and that field when the entry has one."""
    if e.dedup_key is None:
        return bytes.fromhex(e.id)
    return hashlib.sha256(f"{e.id}\0{e.dedup_key}".encode("utf-8", "surrogatepass")).digest()


class _Keys:
    """A set of 32-byte keys without an object per key: 65,536 buckets by the first two
    bytes, each the other 30 bytes of its keys end to end. A million verdicts take ~35 MB
    here, where a set of bytes took ~100 MB (verify's whole pass at 1M is held below
    500 MB)."""

    _TAIL = _KEY - 2

    def __init__(self, data: bytes = b""):
        parts: dict[bytes, bytearray] = {}
        for i in range(0, len(data) - len(data) % _KEY, _KEY):  # a torn tail (a crash mid-write) is dropped
            bucket = parts.get(data[i : i + 2])
            if bucket is None:
                bucket = parts[data[i : i + 2]] = bytearray()
            bucket += data[i + 2 : i + _KEY]
        self._buckets: dict[bytes, bytes] = {k: bytes(v) for k, v in parts.items()}

    def __contains__(self, key: bytes) -> bool:
        bucket = self._buckets.get(key[:2])
        if bucket is None:
            return False
        tail = key[2:]
        at = bucket.find(tail)
        while at >= 0:
            if at % self._TAIL == 0:
                return True
            at = bucket.find(tail, at + 1)
        return False


class VerdictMemo:
    """The clean verdicts of one repository, for one version of the rules."""

    def __init__(self, path: Optional[Path], known: bytes = b""):
        self.path = path
        self._known = _Keys(known)
        self._new = bytearray()  # the keys this run added, end to end
        self._kept = len(known) - len(known) % _KEY  # bytes of the file read (kept whole)

    @property
    def added(self) -> int:
        """Verdicts this run added."""
        return len(self._new) // _KEY

    @classmethod
    def open(cls, gr: GitRepo) -> VerdictMemo:
        fingerprint = rules_fingerprint()
        if fingerprint is None:
            return cls(None)
        path = gr.lifeline_dir() / f"verdicts-{fingerprint}.bin"
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        return cls(path, data)

    def known_clean(self, e: Union[Entry, PlainEntry]) -> bool:
        return verdict_key(e) in self._known

    def add(self, e: Union[Entry, PlainEntry]) -> None:
        key = verdict_key(e)
        if key not in self._known:  # one content judged twice in a run is kept twice: harmless
            self._new += key

    def save(self) -> None:
        """Add this run's verdicts to the file (appended after what was read, or a new file
        written whole to a temporary file and renamed, so a reader sees the old file or the
        new one; a torn append is dropped by the next reader), and drop files of other
        versions of the rules; a directory that cannot be written to keeps nothing,
        silently (verify then judges everything next time, as it did before)."""
        if not self._new or self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not (self._kept and self._append()):
                self._write_new()
            for old in self.path.parent.glob("verdicts-*.bin"):
                if old != self.path:
                    old.unlink(missing_ok=True)
        except OSError:
            return
        self._new = bytearray()

    def _write_new(self) -> None:
        assert self.path is not None
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".verdicts-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self._new)
            os.replace(tmp, self.path)
        except BaseException:
            os.unlink(tmp)
            raise

    def _append(self) -> bool:
        """Append to the file read (a torn last key cut off first); False when it is gone."""
        assert self.path is not None
        try:
            f = open(self.path, "r+b")
        except FileNotFoundError:
            return False
        with f:
            whole = f.seek(0, os.SEEK_END) // _KEY * _KEY
            f.truncate(whole)
            f.seek(whole)
            f.write(self._new)
        return True
