"""What the fold (core/truth.py) remembers of each decision and revision: its ts key and the
header values the truth and staleness read, only those valid for their type (core/headers.py).
Stored as is in the fold's text (core/fold_text.py); read by supersession, conflicts, the
validity windows (core/dates.py) and staleness (git/history.py)."""

from __future__ import annotations

from typing import Literal, TypedDict

Facts = TypedDict(
    "Facts",
    {
        "ts": str,
        "subject": str,
        "subject_key": str,
        "paths": str,
        "valid-from": str,
        "valid-until": str,
        "commit": str,
    },
    total=False,
)

# The header values remembered beside the ts and the subject.
REMEMBERED: tuple[Literal["paths", "valid-from", "valid-until", "commit"], ...] = (
    "paths",
    "valid-from",
    "valid-until",
    "commit",
)
