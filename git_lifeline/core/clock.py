"""Time rules: what an entry's `ts` may say (docs/FORMAT.md §5).

`ts` is not hashed: it is whatever clock the writer had, and anyone with push access
can write any value. Two bounds keep it honest enough to order by:

* not before a parent's `ts` (a child is written after what it names), and
* not after the reader's own clock by more than a tolerance (clocks skew, but a clone
  a year ahead must not own "the latest" for a year).

A write is held to both strictly for the parent and to the tolerance for the future
(`write_problem`); a history arriving by pull, at the server and in `verify` is held to
both within the tolerance (`stored_problem`, reported as `bad-time`), so an entry from
a clone whose clock was a little off still comes in. `lifeline.maxClockSkew` sets the
tolerance (default one day). Pure: the caller passes the clock and the parents' ts.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Iterable, Optional

from ..errors import InputError
from .entry import abbrev

SKEW_KEY = "lifeline.maxClockSkew"
DEFAULT_MAX_SKEW = timedelta(days=1)
_SKEW = re.compile(r"(?P<n>\d{1,9})\s*(?P<unit>s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)?")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_skew(text: Optional[str]) -> timedelta:
    """A tolerance as configured: seconds, or a number with a unit (90s, 30m, 12h, 1d, 2w)."""
    if text is None or not text.strip():
        return DEFAULT_MAX_SKEW
    m = _SKEW.fullmatch(text.strip().lower())
    if m is None:
        raise InputError(f"git config {SKEW_KEY} {text!r}: give a duration such as 86400, 12h or 1d")
    unit = (m.group("unit") or "s")[0]
    return timedelta(seconds=int(m.group("n")) * _UNITS[unit])


def _shown(ts: datetime) -> str:
    return f"{ts:%Y-%m-%dT%H:%M:%SZ}"


def future_problem(ts: datetime, now: datetime, skew: timedelta) -> Optional[str]:
    if ts > now + skew:
        return (
            f"its ts {_shown(ts)} is in the future (this clock says {_shown(now)}; {SKEW_KEY} allows {_duration(skew)})"
        )
    return None


def parent_problem(
    ts: datetime, parents: Iterable[tuple[str, Optional[datetime]]], tolerance: timedelta
) -> Optional[str]:
    """`parents` are (id, ts) pairs; a parent whose ts is unknown is left out."""
    for pid, pts in parents:
        if pts is not None and ts < pts - tolerance:
            return f"its ts {_shown(ts)} is before the ts of its parent {abbrev(pid)} ({_shown(pts)})"
    return None


def write_problem(
    ts: datetime, parents: Iterable[tuple[str, Optional[datetime]]], now: datetime, skew: timedelta
) -> Optional[str]:
    """Why a new entry's ts is refused: before a parent's (strictly), or in the future."""
    return parent_problem(ts, parents, timedelta(0)) or future_problem(ts, now, skew)


def stored_problem(
    ts: datetime, parents: Iterable[tuple[str, Optional[datetime]]], now: datetime, skew: timedelta
) -> Optional[str]:
    """Why a stored entry's ts is flagged (`bad-time`): before a parent's or in the
    future, each by more than the tolerance."""
    return parent_problem(ts, parents, skew) or future_problem(ts, now, skew)


def _duration(d: timedelta) -> str:
    seconds = int(d.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
