"""Reading a line's entries like `git log` reads commits (list's filters), and the id
prefixes a shell completes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from ..errors import InputError
from .ledger import Ledger

if TYPE_CHECKING:  # annotations only
    from ..core.entry import Entry


def select(
    led: Ledger,
    kind: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
    author: Optional[str] = None,
    limit: Optional[int] = None,
) -> list[Entry]:
    """Entries, oldest first, like `git log`'s limits: of `kind`, recorded in [since, until]
    (any date form of core/dates.py; a bare date is the whole UTC day), whose author,
    agent or model matches the regular expression `author` (case-insensitive), the
    newest `limit` of them."""
    from ..core.dates import parse_when

    low = parse_when(since, what="--since").start if since else None
    high = parse_when(until, what="--until").end if until else None
    if limit is not None and limit < 0:
        raise InputError("-n must be zero or more")
    who = None
    if author is not None:
        try:
            who = re.compile(author, re.IGNORECASE)
        except re.error as exc:
            raise InputError(f"--author {author!r}: not a regular expression ({exc})") from None
    out = [
        e
        for e in led.entries(kind=kind)
        if (low is None or e.ts >= low)
        and (high is None or e.ts <= high)
        and (who is None or who.search(e.author) or who.search(e.agent) or who.search(e.model))
    ]
    if limit is None:
        return out
    return out[-limit:] if limit else []


def id_candidates(led: Ledger, prefix: str, only: Optional[str] = None, limit: int = 200) -> list[tuple[str, str]]:
    """(id, "kind: summary") of entries whose id starts with `prefix` (shell completion):
    every entry, or `only` "open" (open items), "in-force" (decisions in force),
    "conflicts" (decisions in a conflict). Summaries are read only for a short list."""
    prefix = prefix.lower()
    if only is not None:
        st = led.state()
        pool = {
            "open": st.open_ids,
            "in-force": st.decision_ids,
            "conflicts": [i for _, ids in st.conflicts for i in ids],
        }[only]
        ids = sorted({i for i in pool if i.startswith(prefix)})
    elif len(prefix) >= 4:
        ids = sorted(led.store.prefix_matches(prefix))
    else:
        ids = sorted(i for i, _ in led.store.iter_oids() if i.startswith(prefix))
    ids = ids[:limit]
    if len(ids) > 40:
        return [(i, "") for i in ids]
    out = []
    for i in ids:
        e = led.store.read(i)
        out.append((i, f"{e.kind}: {e.summary}" if e is not None else ""))
    return out
