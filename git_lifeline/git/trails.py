"""The review trail of a line, stored: `refs/lifeline-review/<line>` -> records/ fan-out.

The storage engine is fanout.FanoutLog (the trail is its REVIEW namespace): appends
by compare-and-swap under the trail's lock, with stale-lock recovery and read-back,
and union merges. A `ReviewTrail` adds only the review's operations: propose, record a
direct write, decide (once: the check runs inside the compare-and-swap loop, so two
deciders never both succeed), and bring in another clone's trail after verifying it.
Records themselves are records.py; FORMAT §11 is the normative description.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from ..core.entry import Entry, abbrev
from .fanout import FanoutLog
from .libgit2 import pygit2
from .namespaces import REVIEW
from .records import (
    MIN_PID_PREFIX,
    Proposal,
    Record,
    ReviewError,
    already_decided,
    build_proposals,
    check_record_blob,
    entry_content,
    make_decision,
    make_direct,
    make_proposed,
    trailers,
)
from .repo import GitRepo
from .trees import Union

_HEX = re.compile(r"[0-9a-f]+")


class ReviewTrail(FanoutLog):
    """Reads and appends the review trail of one line (`refs/lifeline-review/<line>`)."""

    def __init__(self, gr: GitRepo, line: str):
        super().__init__(gr, REVIEW, line)

    @property
    def line(self) -> str:
        return self.name

    def check_blob(self, path: str, obj: Optional[pygit2.Object]) -> tuple[Optional[Record], Optional[str]]:
        if not isinstance(obj, pygit2.Blob):
            return None, "not a record blob at a record path"
        return check_record_blob(self.line, path, obj.data)

    def append(self, record: Record, message: str, check: Optional[Callable[[Optional[str]], None]] = None) -> str:
        """Append one record in one commit; returns the head that holds it.

        `check(head)` runs against the head each attempt is built on and may raise to
        refuse the write (that is how a second decision on a proposal is refused even
        when two processes decide at once)."""
        result = self.add(
            [record], lambda _new: message, check=check, reflog=lambda _new: f"{REVIEW.label}: {record.type}"
        )
        head = result.commit or self.head()
        assert head is not None
        return head

    # ---- the operations -------------------------------------------------------------
    def proposals(self) -> dict[str, Proposal]:
        return build_proposals(self.load().records)

    def resolve(self, ref: str, proposals: Optional[dict[str, Proposal]] = None) -> Proposal:
        p = ref.strip().lower()
        if len(p) < MIN_PID_PREFIX or not _HEX.fullmatch(p):
            raise ReviewError(
                f"invalid proposal id {ref!r}: give at least {MIN_PID_PREFIX} hex characters (see git lifeline review)"
            )
        proposals = self.proposals() if proposals is None else proposals
        matches = [pid for pid in self.prefix_matches(p) if pid in proposals]
        if not matches:
            raise ReviewError(f"no proposal {ref!r} in the review trail of line {self.line!r}")
        if len(matches) > 1:
            raise ReviewError(f"ambiguous proposal id {ref!r}: matches {', '.join(abbrev(m) for m in matches)}")
        return proposals[matches[0]]

    def propose(self, entry: Entry, by: str, via: str) -> Record:
        rec = make_proposed(self.line, by, entry.ts, entry_content(entry), via)
        self.append(rec, f"proposed {entry.kind}: {entry.summary}\n\n{trailers(rec)}")
        return rec

    def propose_all(self, entries: list[Entry], by: str, via: str, source: str) -> list[Record]:
        """File several proposals in one commit (an import of another tool's review queue);
        each proposal's ts is its entry's, as for `propose`."""
        recs = [make_proposed(self.line, by, e.ts, entry_content(e), via) for e in entries]

        def message(new: list[Record]) -> str:
            return f"proposed {len(new)} entr{'y' if len(new) == 1 else 'ies'} from {source}\n\n" + "".join(
                trailers(r) for r in new[:10]
            )

        self.add(recs, message, reflog=lambda new: f"{REVIEW.label}: {len(new)} proposed")
        return recs

    def record_direct(self, entry: Entry, rule: str, by: str, via: str) -> Record:
        rec = make_direct(self.line, by, entry, rule, via)
        self.append(rec, f"direct {entry.kind}: {entry.summary}\n\n{trailers(rec)}Lifeline-Id: {entry.id}\n")
        return rec

    def decide(self, pid: str, type_: str, by: str, entry: Optional[str] = None, why: str = "") -> Record:
        """Append a decision; refused (ReviewError) when the proposal is already decided."""
        rec = make_decision(type_, self.line, by, pid, entry=entry, why=why)

        def check(head: Optional[str]) -> None:
            current = build_proposals(self.load(head).records).get(pid) if head else None
            if current is None:
                raise ReviewError(f"no proposal {abbrev(pid)} in the review trail of line {self.line!r}")
            if current.decision is not None:
                raise ReviewError(already_decided(current))

        what = f"{type_} {abbrev(pid)}" + (f" as {abbrev(entry)}" if entry else "")
        extra = f"Lifeline-Proposal: {pid}\n" + (f"Lifeline-Id: {entry}\n" if entry else "")
        self.append(rec, f"{what}\n\n{trailers(rec)}{extra}", check)
        return rec

    # ---- another clone's trail ---------------------------------------------------------
    def merge_message(self, source: str, theirs: str, u: Union, parsed: dict) -> str:
        return f"lifeline-review: merge trail of line {self.line}\n"
