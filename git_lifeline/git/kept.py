"""What verify's full pass keeps of each entry a line holds: its id, ts and parents, packed.

`git lifeline verify` of a whole line returns no records, so it keeps of each valid entry
only what the cross-entry checks read (`checks.LedgerChecks.changed`, `finish`), in one
bytes object (`Kept`), and the line's entries as one list of them in id order
(`KeptRecords`): a million-entry line is verified in bounded memory (below 500 MB at
1,000,000 entries; docs/PERFORMANCE.md, "Verify, issue 30: fourth pass"). An entry with
an origin block is also kept whole, for the origin check.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import datetime, timedelta, timezone
from typing import Iterator, MutableMapping, Optional, Union

from ..core.entry import Entry
from ..core.plain_blob import PlainEntry

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)  # made once: a timedelta built per call cost ~0.5 µs an entry
_ID = 32  # bytes of an entry id


class Kept(bytes):
    """An entry's id, ts and parents: the id's 32 bytes, the ts as 8 bytes of microseconds
    since 1970 (UTC), then each parent's 32 bytes (ids and parents of a valid entry are 64
    lowercase hex digits, so the hex reads back the same). ~110 bytes an entry, where an
    object of three fields with its strs, datetime and tuple held ~400. Sorting Kept sorts
    by id."""

    __slots__ = ()

    @classmethod
    def of(cls, e: Union[Entry, PlainEntry]) -> Kept:
        return cls(
            bytes.fromhex(e.id) + micros_of(e.ts).to_bytes(8, "big", signed=True) + bytes.fromhex("".join(e.parents))
        )

    @property
    def id(self) -> str:
        return self[:_ID].hex()

    @property
    def ts(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.micros)

    @property
    def micros(self) -> int:
        """The ts in microseconds since 1970 (UTC)."""
        return int.from_bytes(self[_ID : _ID + 8], "big", signed=True)

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(self[i : i + _ID].hex() for i in range(_ID + 8, len(self), _ID))


def micros_of(ts: datetime) -> int:
    """A UTC datetime in whole microseconds since 1970."""
    return (ts - _EPOCH) // _MICROSECOND


LedgerRecord = Union[Entry, Kept]


class KeptRecords(MutableMapping[str, LedgerRecord]):
    """id -> record of the entries a whole line holds, as verify's full pass keeps them:
    a list of Kept in id order (git's diff of a line lists them so), found by bisection,
    ~8 bytes an entry beside the Kept itself, where a dict keyed by id str took ~160. Ids
    that come out of order (a hostile tree) turn it into a dict. An Entry put here (one
    with an origin block) is kept whole as well, and is what a lookup gives."""

    def __init__(self) -> None:
        self._sorted: list[Kept] = []
        self._by_id: Optional[dict[bytes, Kept]] = None  # once ids came out of order
        self._whole: dict[str, Entry] = {}
        self._bounds_for: Optional[tuple[datetime, timedelta]] = None  # in_time's (now, tolerance)
        self._bounds = (0, 0)  # ... in microseconds

    def __setitem__(self, key: str, rec: LedgerRecord) -> None:
        if isinstance(rec, Kept):
            kept = rec
            if self._whole:
                self._whole.pop(key, None)
        else:
            kept = Kept.of(rec)
            self._whole[key] = rec
        if self._by_id is None:
            if not self._sorted or self._sorted[-1][:_ID] < kept[:_ID]:
                self._sorted.append(kept)
                return
            self._by_id = {k[:_ID]: k for k in self._sorted}
            self._sorted = []
        self._by_id[kept[:_ID]] = kept

    def kept(self, key: str) -> Optional[Kept]:
        """The Kept of entry `key` (64 hex), or None."""
        try:
            idb = bytes.fromhex(key)
        except ValueError:
            return None
        return self._find(idb) if len(idb) == _ID else None

    def in_time(self, e: Kept, now: datetime, tolerance: timedelta) -> bool:
        """True when every parent of `e` is here and `e`'s ts breaks no time rule against
        them or `now` (clock.stored_problem, in whole microseconds: the same comparisons);
        False when that takes a closer look (a parent elsewhere, or a rule broken)."""
        if self._bounds_for != (now, tolerance):  # one conversion per finish, not per entry
            self._bounds_for = (now, tolerance)
            self._bounds = (micros_of(now), tolerance // _MICROSECOND)
        latest, slack = self._bounds
        ts = e.micros
        if ts > latest + slack:
            return False
        for at in range(_ID + 8, len(e), _ID):
            parent = self._find(e[at : at + _ID])
            if parent is None or ts < parent.micros - slack:
                return False
        return True

    def _find(self, idb: bytes) -> Optional[Kept]:
        if self._by_id is not None:
            return self._by_id.get(idb)
        at = bisect_left(self._sorted, idb)  # a Kept starting with idb sorts right after it
        found = self._sorted[at] if at < len(self._sorted) else None
        return found if found is not None and found.startswith(idb) else None

    def __getitem__(self, key: str) -> LedgerRecord:
        whole = self._whole.get(key)
        if whole is not None:
            return whole
        kept = self.kept(key)
        if kept is None:
            raise KeyError(key)
        return kept

    def __delitem__(self, key: str) -> None:
        if self.kept(key) is None:
            raise KeyError(key)
        if self._by_id is None:
            self._by_id = {k[:_ID]: k for k in self._sorted}
            self._sorted = []
        del self._by_id[bytes.fromhex(key)]
        self._whole.pop(key, None)

    def __iter__(self) -> Iterator[str]:
        return (k[:_ID].hex() for k in self.all_kept())

    def __len__(self) -> int:
        return len(self._by_id) if self._by_id is not None else len(self._sorted)

    def all_kept(self) -> Iterator[Kept]:
        """Every entry's Kept (an Entry kept whole too), without building its id str."""
        return iter(self._by_id.values()) if self._by_id is not None else iter(self._sorted)

    def whole(self) -> Iterator[Entry]:
        """The entries kept whole (those with an origin block)."""
        return iter(self._whole.values())
