"""What a write must satisfy against the line as it stands: parents' times and the clock's
tolerance (core/clock.py), a batch's headers and times, and who re-checked a stale decision.
A ledger holds one `WriteChecks` for its line (app/ledger.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterable, Optional

from ..core.entry import abbrev
from ..errors import InputError, LifelineError
from ..git.repo import GitRepo
from ..git.store import LineStore

if TYPE_CHECKING:  # annotations only: a plain `log` imports neither (app/ledger.py)
    from ..core import truth
    from ..core.entry import Entry
    from ..git.lines import LineIndex

ParentTimes = list[tuple[str, Optional[datetime]]]


class WriteChecks:
    """The checks a write to one line runs against the repository: `store` is the line's."""

    def __init__(self, gr: GitRepo, store: LineStore):
        self.gr = gr
        self.store = store

    def refuse_a_second_history(self, kind: str) -> None:
        """A bootstrap while the remote's ledger is not in yet would start a second history
        of the project (empty_ledger.py): refused, with the command that brings it in."""
        if kind == "bootstrap":
            from . import empty_ledger

            empty_ledger.refuse_second_history(self.gr, self.store.line, self.store.head())

    def max_clock_skew(self) -> timedelta:
        from ..core import clock

        return clock.parse_skew(self.gr.config_get(clock.SKEW_KEY))

    def parent_times(self, parents: Iterable[str], batch: Optional[dict[str, Entry]] = None) -> ParentTimes:
        """(id, ts or None) of each parent: in `batch`, in this line, or in another line."""
        out: ParentTimes = []
        index: Optional[LineIndex] = None
        for p in parents:
            e = (batch or {}).get(p)
            if e is None:
                try:
                    e = self.store.read(p)
                except LifelineError:
                    e = None  # a malformed parent has no ts to compare with (verify reports it)
            if e is None:
                # only a parent in another line needs the index of the lines (git/lines.py)
                from ..git.lines import LineIndex

                index = index or LineIndex.scan(self.gr)
                home = index.locate(p, exclude=self.store.name)
                e = index.get(home, p) if home else None
            out.append((p, e.ts if e is not None else None))
        return out

    def refuse_bad_time(self, entry: Entry, times: ParentTimes, now: datetime) -> None:
        """A new entry's ts before a parent's, or in the future beyond the tolerance, is refused."""
        from ..core import clock

        why = clock.write_problem(entry.ts, times, now, self.max_clock_skew())
        if why:
            raise InputError(f"ts refused: {why}; nothing was written")

    def check_batch(self, entries: list[Entry]) -> None:
        """What `verify` would refuse in entries about to be written in bulk (import,
        migrate): a typed header value not of its type, a ts before a parent's or in the
        future beyond the tolerance. Raises InputError; nothing is written then."""
        from ..core import clock
        from ..core.entry import utcnow
        from ..core.headers import header_problems

        batch = {e.id: e for e in entries}
        now, skew = utcnow(), self.max_clock_skew()
        for e in entries:
            why = "; ".join(header_problems(e.kind, e.body)) or clock.stored_problem(
                e.ts, self.parent_times(e.parents, batch), now, skew
            )
            if why:
                raise InputError(f"entry {abbrev(e.id)} ('{e.summary[:40]}'): {why}; nothing was written")

    def rechecked(self, st: truth.State) -> dict[str, str]:
        """decision id -> ts of its latest re-check: a human's entry naming it, or an agent's
        that a human approved through review (the trail is read only when that matters)."""
        facts = st.fold.facts
        if not any(facts.get(i, {}).get("paths") for i in st.fold.agent_touched):
            return st.fold.touched  # no agent's entry names a decision staleness is asked of
        from ..git.trails import ReviewTrail

        try:
            records = list(ReviewTrail(self.gr, self.store.name).load().records.values())
        except LifelineError:
            records = []
        approved = {r.entry for r in records if r.type in ("approved", "duplicate")}
        return st.fold.rechecked(a for a in approved if a)
