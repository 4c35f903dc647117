"""Code and ledger linked: the entries a commit's `Lifeline:` trailer names (git/links.py
reads the trailers), as the questions about a path or commit ask them."""

from __future__ import annotations

from typing import Optional

from ..core.entry import Entry
from ..git.links import Link, links_for
from ..git.store import LineStore
from .ledger import Ledger


def linked_entries(led: Ledger, target: str) -> list[tuple[Optional[Entry], Link]]:
    """Entries linked (by `Lifeline:` trailers) to the commits that touched `target`,
    newest commit first, each entry once: [(Entry or None, Link)]."""
    out, seen = [], set()
    for link in links_for(led.gr, target, led.line):
        key = link.entry_id or link.value
        if key in seen:
            continue
        seen.add(key)
        entry = None
        if link.entry_id and link.line is not None:  # resolved together
            store = led.store if link.line == led.line else LineStore(led.gr, link.line)
            entry = store.read(link.entry_id)
        out.append((entry, link))
    return out
