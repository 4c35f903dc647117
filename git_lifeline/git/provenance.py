"""Where a line's entries came from beyond their own fields, as git records it: the entries an
import brought in (the ledger commits whose message carries a `Lifeline-Import:` trailer,
FORMAT §4) and the entries a human approved through review (the line's trail: `approved` and
`duplicate` records, FORMAT §11). core/trust.py turns that into each entry's tier.

What was found is kept in `<line>.trust` beside the line's cache (FORMAT §10) for exactly one
(ledger head, trail head) pair, so a context call reads one small file, and the warm context
(app/warm_context.py) reads it without pygit2 (this module imports it only to walk history).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core.trust import Provenance
from .fs import UnsafeFile, read_bounded, write_atomic

if TYPE_CHECKING:
    from .store import LineStore
    from .trails import ReviewTrail

IMPORT_TRAILER = "Lifeline-Import"
_MAX_TRUST_FILE = 64 << 20  # 2 x 66 bytes per id: about 500,000 approved or imported entries


def trust_file(lifeline_dir: str, line: str) -> Path:
    return Path(lifeline_dir) / f"{line}.trust"


def read_trust_file(path: Path) -> Optional[tuple[str, Optional[str], Provenance]]:
    """(ledger head, trail head or None, what was found for them) as the file keeps them, or
    None for a missing or malformed file."""
    try:  # never through a link, never a FIFO or a device (read_bounded opens it non-blocking)
        text = read_bounded(path, _MAX_TRUST_FILE, follow=False).decode("ascii")
    except (OSError, UnsafeFile, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    heads = lines[0].split(" ")
    if len(heads) != 2 or len(heads[0]) != 40 or lines[-1] != "":
        return None
    approved: set[str] = set()
    imported: set[str] = set()
    for row in lines[1:-1]:
        tag, _, entry_id = row.partition(" ")
        if len(entry_id) != 64 or tag not in ("a", "i"):
            return None  # not a file this module wrote: found again from git
        (approved if tag == "a" else imported).add(entry_id)
    trail_head = None if heads[1] == "-" else heads[1]
    return heads[0], trail_head, Provenance(frozenset(approved), frozenset(imported))


def kept_for(path: Path, ledger_head: str, trail_head: Optional[str]) -> Optional[Provenance]:
    """What the file keeps for exactly this (ledger head, trail head), or None."""
    kept = read_trust_file(path)
    return kept[2] if kept is not None and kept[:2] == (ledger_head, trail_head) else None


def write_trust_file(path: Path, ledger_head: str, trail_head: Optional[str], found: Provenance) -> None:
    rows = [f"{ledger_head} {trail_head or '-'}"]
    rows += [f"a {i}" for i in sorted(found.approved)] + [f"i {i}" for i in sorted(found.imported)]
    try:
        write_atomic(path, "\n".join(rows) + "\n")
    except OSError:
        pass  # a read-only repository: found again next time, nothing lost


def imported_ids(store: "LineStore", head: str, known: Optional[tuple[str, frozenset[str]]] = None) -> frozenset[str]:
    """Ids the import commits reachable from `head` added. `known` (an older head, what it
    held) limits the walk to the commits since, when that head is still in the history."""
    from .libgit2 import pygit2

    if known is not None and known[0] == head:
        return known[1]
    repo = store.repo
    walker = repo.walk(head, pygit2.enums.SortMode.NONE)
    found: set[str] = set()
    if known is not None and known[0] in repo and repo.descendant_of(head, known[0]):
        walker.hide(known[0])
        found |= known[1]
    marker = f"\n{IMPORT_TRAILER}: "
    for commit in walker:
        if marker not in commit.message:
            continue
        before = store.tree(str(commit.parents[0].id)) if commit.parents else None
        after = store.tree(str(commit.id))
        gain = store.gain(str(before.id) if before is not None else None, str(after.id) if after is not None else None)
        found.update(g.entry_id for g in gain.entries)
    return frozenset(found)


def approved_ids(
    trail: "ReviewTrail",
    head: str,
    known: Optional[tuple[str, frozenset[str]]] = None,
    until: Optional[datetime] = None,
) -> frozenset[str]:
    """Ids an `approved` or `duplicate` record of the trail at `head` names. `known` (an older
    head, what it named) limits the read to the records added since, when that head is still
    in the history: a direct record is written for every agent's direct write, so the trail
    grows with every checkpoint and is not read whole each time. A record that cannot be read
    approves nothing. `until`: only the records dated by then (the whole trail is read)."""
    from .records import check_record_blob

    repo = trail.repo
    found: set[str] = set()
    base: Optional[str] = None
    if known is not None and known[0] in repo and (known[0] == head or repo.descendant_of(head, known[0])):
        if known[0] == head:
            return known[1]
        base = known[0]
        found |= known[1]
    before = trail.tree(base) if base is not None else None
    after = trail.tree(head)
    if after is None:
        return frozenset(found)
    gain = trail.gain(str(before.id) if before is not None else None, str(after.id))
    for g in gain.entries:
        if g.kind != "blob":
            continue
        rid = g.entry_id
        rec, _problem = check_record_blob(trail.line, f"{rid[:2]}/{rid[2:4]}/{rid[4:]}", repo[g.oid].read_raw())
        if rec is not None and rec.type in ("approved", "duplicate") and rec.entry:
            if until is None or rec.ts <= until:
                found.add(rec.entry)
    return frozenset(found)
