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
bytes, or the sha256 of id and dedup_key when the entry has one), written whole to a
temporary file and renamed, so a reader sees the old file or the new one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Optional

from ..core import blocks, headers, secrets
from ..core.entry import Entry
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


def verdict_key(e: Entry) -> bytes:
    """What a clean verdict is kept under: the id, which commits to every scanned field
    but `dedup_key`, and that field when the entry has one."""
    if e.dedup_key is None:
        return bytes.fromhex(e.id)
    return hashlib.sha256(f"{e.id}\0{e.dedup_key}".encode("utf-8", "surrogatepass")).digest()


class VerdictMemo:
    """The clean verdicts of one repository, for one version of the rules."""

    def __init__(self, path: Optional[Path], known: set[bytes]):
        self.path = path
        self.known = known
        self.added = 0  # verdicts this run added (the keys themselves are in `known` only)

    @classmethod
    def open(cls, gr: GitRepo) -> VerdictMemo:
        fingerprint = rules_fingerprint()
        if fingerprint is None:
            return cls(None, set())
        path = gr.lifeline_dir() / f"verdicts-{fingerprint}.bin"
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        whole = len(data) - len(data) % _KEY  # a torn tail (a crash mid-write of an old format) is dropped
        return cls(path, {data[i : i + _KEY] for i in range(0, whole, _KEY)})

    def known_clean(self, e: Entry) -> bool:
        return verdict_key(e) in self.known

    def add(self, e: Entry) -> None:
        key = verdict_key(e)
        if key not in self.known:
            self.known.add(key)
            self.added += 1

    def save(self) -> None:
        """Write the verdicts when this run added any, and drop files of other versions of
        the rules; a directory that cannot be written to keeps nothing, silently (verify
        then judges everything next time, as it did before)."""
        if not self.added or self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".verdicts-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(b"".join(self.known))
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
            for old in self.path.parent.glob("verdicts-*.bin"):
                if old != self.path:
                    old.unlink(missing_ok=True)
        except OSError:
            return
        self.added = 0
