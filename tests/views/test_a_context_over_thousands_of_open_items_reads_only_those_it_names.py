"""Naming a few open items within a budget read the entry (and the thread's latest
checkpoint) of every open item in force: at 100k entries, 6,400 open items meant 3,800 rows
read and parsed from the cache for a context that shows about 20 of them. An open item is
now made when the packer first considers it (context_pack.Item.deferred)."""

from __future__ import annotations

from typing import Optional

from kit.entries import make_entry

from git_lifeline.core import truth
from git_lifeline.core.entry import Entry
from git_lifeline.views import context as ctx


def test_a_context_over_thousands_of_open_items_reads_only_those_it_names():
    opens = [make_entry(i, kind="open", summary=f"Question number {i}", body="Not decided.") for i in range(3000)]
    entries = [make_entry(3000, kind="bootstrap", summary="A project", body="Why it exists."), *opens]
    whole = truth.reduce(entries)
    by_id = {e.id: e for e in entries}
    read: list[str] = []

    def load(entry_id: str) -> Optional[Entry]:
        read.append(entry_id)
        return by_id.get(entry_id)

    st = truth.State(whole.fold, load, lambda: [e.id for e in entries], whole.now)
    text = ctx.assemble(ctx.ContextInput(state=st, line="main", head_commit=None), 4000).text
    named = sum(1 for e in opens if e.short in text)
    assert 0 < named < 200 and "open item(s)" in text
    assert len(set(read)) < 4 * named + 20
    # and what it says is what a state that holds every entry at hand says
    assert text == ctx.assemble(ctx.ContextInput(state=whole, line="main", head_commit=None), 4000).text
