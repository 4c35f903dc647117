"""Dates as people type them: ISO dates and times, and git's approximate forms.

One parser for every option that takes a date (`--since`/`--until` of `list`, `audit`
and `stale`, `--valid-from`/`--valid-until` of the writing commands), so a date means
the same thing everywhere. It reads the forms git users type — `2 weeks ago`,
`yesterday`, `last friday`, `3.days.ago`, `@1700000000` — plus the future forms a
validity window needs (`tomorrow`, `next friday`, `in 3 days`), and refuses the rest
by name instead of guessing (git's own approxidate reads `next year` or `garbage` as
"now", and `in 3 days` as three days ago).

Everything is UTC: a bare date is the whole UTC day, as in a `valid-until:` header
(docs/FORMAT.md §9). A time without an offset is read as UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Optional

from ..errors import InputError
from .facts import Facts

FORMS_HELP = (
    "YYYY-MM-DD, an ISO time (YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM]), @EPOCH, now, today, yesterday, "
    "tomorrow, '2 weeks ago', '3.days.ago', 'in 3 days', 'last friday', 'next friday', "
    "'last week', or 30m/24h/7d/2w"
)

_UNITS = {
    "s": "seconds",
    "sec": "seconds",
    "secs": "seconds",
    "second": "seconds",
    "seconds": "seconds",
    "m": "minutes",
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hr": "hours",
    "hrs": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
    "w": "weeks",
    "week": "weeks",
    "weeks": "weeks",
    "month": "months",
    "months": "months",
    "y": "years",
    "year": "years",
    "years": "years",
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_OF = {**{d: i for i, d in enumerate(_WEEKDAYS)}, **{d[:3]: i for i, d in enumerate(_WEEKDAYS)}}

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?")
_AMOUNT = r"(?P<n>\d+|" + "|".join(_NUMBERS) + r")"
_UNIT = r"(?P<unit>" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")"
_AGO = re.compile(_AMOUNT + r"\s*" + _UNIT + r"(\s+ago)?")
_IN = re.compile(r"in\s+" + _AMOUNT + r"\s*" + _UNIT)
_FROM_NOW = re.compile(_AMOUNT + r"\s*" + _UNIT + r"\s+from\s+now")
_RELATIVE_DAY = re.compile(r"(?P<dir>last|next)\s+(?P<what>[a-z]+)")

# What a stored `valid-from`/`valid-until` value may be: what the truth compares as a
# UTC day or a UTC time (`window_bound`).
_HEADER_VALUE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?Z?)?")


class DateError(InputError):
    """A date that none of the forms reads; the message lists the forms."""


@dataclass(frozen=True)
class When:
    """A point or a whole day, in UTC."""

    at: datetime  # the instant, or the day's first microsecond
    day: bool = False  # a whole UTC day

    @property
    def start(self) -> datetime:
        return self.at

    @property
    def end(self) -> datetime:
        """The last microsecond it covers (a day's last, or the instant itself)."""
        return self.at + timedelta(days=1, microseconds=-1) if self.day else self.at

    def header(self) -> str:
        """The normalised form stored in a body header: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`."""
        return f"{self.at:%Y-%m-%d}" if self.day else f"{self.at:%Y-%m-%dT%H:%M:%S}Z"


def _day(d: date) -> When:
    return When(datetime.combine(d, time(0), tzinfo=timezone.utc), day=True)


def _shift(now: datetime, n: int, unit: str) -> datetime:
    if unit == "months":
        months = now.month - 1 + n
        year, month = now.year + months // 12, months % 12 + 1
        return now.replace(year=year, month=month, day=min(now.day, _days_in(year, month)))
    if unit == "years":
        return now.replace(year=now.year + n, day=min(now.day, _days_in(now.year + n, now.month)))
    return now + timedelta(**{unit: n})


def _days_in(year: int, month: int) -> int:
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _amount(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text]


def _iso_time(raw: str) -> datetime:
    text = raw.replace(" ", "T", 1)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    m = re.search(r"([+-])(\d{2})(\d{2})$", text)
    if m and ":" not in text[-5:]:
        text = text[: m.start()] + f"{m.group(1)}{m.group(2)}:{m.group(3)}"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def parse_when(text: str, now: Optional[datetime] = None, what: str = "date") -> When:
    """`text` as a When, relative to `now` (default: the current UTC time). Raises
    DateError naming `what` (e.g. `--since`) and the accepted forms."""
    if not isinstance(text, str):
        raise DateError(f"{what}: expected a date as text")
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    raw = " ".join(text.strip().lower().replace(".", " ").split()) if not _looks_iso(text) else text.strip()
    try:
        when = _parse(raw, now)
    except (ValueError, OverflowError):
        when = None
    if when is None:
        raise DateError(f"{what} {text!r}: not a date; use {FORMS_HELP}")
    if not (1970 <= when.at.year <= 9999) or (
        not when.day and when.at.year == 9999 and when.at.month == 12 and when.at.day == 31
    ):
        raise DateError(f"{what} {text!r}: out of range (1970 to 9998)")
    return when


def _looks_iso(text: str) -> bool:
    return bool(re.match(r"\s*(\d{4}-\d{2}-\d{2}|@\d)", text))


def _parse(raw: str, now: datetime) -> Optional[When]:
    if _ISO_DATE.fullmatch(raw):
        return _day(date.fromisoformat(raw))
    if _ISO_TIME.fullmatch(raw):
        return When(_iso_time(raw))
    if re.fullmatch(r"@\d{1,12}", raw):
        return When(datetime.fromtimestamp(int(raw[1:]), timezone.utc))
    today = now.date()
    named = {
        "now": When(now),
        "today": _day(today),
        "yesterday": _day(today - timedelta(days=1)),
        "tomorrow": _day(today + timedelta(days=1)),
    }
    if raw in named:
        return named[raw]
    m = _AGO.fullmatch(raw)
    if m:  # `2 weeks ago`, `2.weeks.ago`, `7d`, and git's `2 weeks` (which means ago too)
        return When(_shift(now, -_amount(m.group("n")), _UNITS[m.group("unit")]))
    m = _IN.fullmatch(raw) or _FROM_NOW.fullmatch(raw)
    if m:
        return When(_shift(now, _amount(m.group("n")), _UNITS[m.group("unit")]))
    if raw in _WEEKDAY_OF:  # git reads a bare weekday as the last one
        raw = "last " + raw
    m = _RELATIVE_DAY.fullmatch(raw)
    if m:
        sign = -1 if m.group("dir") == "last" else 1
        what = m.group("what")
        if what in _WEEKDAY_OF:
            target = _WEEKDAY_OF[what]
            step = ((today.weekday() - target) % 7 or 7) if sign < 0 else ((target - today.weekday()) % 7 or 7)
            return _day(today + timedelta(days=sign * step))
        if what in ("week", "month", "year"):
            return When(_shift(now, sign, what + "s"))
    return None


def header_date_problem(value: str) -> Optional[str]:
    """Why a stored `valid-from`/`valid-until` value cannot be read, or None. A body header
    holds a UTC day or a UTC time (what `--valid-until` writes); anything else would be
    compared as text and retire the decision on the wrong day."""
    text = value.strip()
    if not _HEADER_VALUE.fullmatch(text):
        return (
            f"{value!r} is not a UTC date or time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ); "
            "--valid-from/--valid-until take any date form and store it so"
        )
    try:
        _ = date.fromisoformat(text) if _ISO_DATE.fullmatch(text) else _iso_time(text)
    except ValueError:
        return f"{value!r} is not a real date"
    return None


# ---- validity windows: when a decision with valid-from/valid-until is in force ----
def as_of_date(when: str) -> Optional[datetime]:
    """The moment an `--as-of` date names (a bare day: its end), None for what is no date
    (a commit, which the caller resolves)."""
    try:
        return parse_when(when.strip(), what="--as-of").end
    except DateError:
        return None


def utc_now_key() -> str:
    """Now, as the key validity windows are compared with (UTC, microseconds)."""
    return f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%S.%f}"


def window_bound(text: str, end: bool) -> str:
    """A `valid-from`/`valid-until` value as a comparable key; a bare date covers the whole day."""
    t = text.strip().replace(" ", "T")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
        return t + ("T23:59:59.999999" if end else "T00:00:00.000000")
    return t.rstrip("Z")


def window_state(facts: Facts, now: str) -> str:
    """'valid', 'expired' (past valid-until) or 'pending' (before valid-from)."""
    until = facts.get("valid-until")
    if until and now > window_bound(until, end=True):
        return "expired"
    start = facts.get("valid-from")
    if start and now < window_bound(start, end=False):
        return "pending"
    return "valid"
