"""Causal order: parents before children, then (ts, id).

`ts` is a clock reading (not hashed, and clocks skew); the parents an entry names are
part of its id. So wherever the ledger decides which entry is "the latest" (a thread's
head, its live checkpoint, what happened recently) the graph decides first and the
clock only among entries the graph does not order. Pure.
"""

from __future__ import annotations

import heapq
from typing import Callable, Iterable


def causal_order(ids: list[str], key_of: Callable[[str], str], parents_of: Callable[[str], Iterable[str]]) -> list[str]:
    """`ids` with every parent before its children (parents outside `ids` name nothing
    here), then by (ts, id): the smallest available first. A function of the set alone.
    A child dated before its parent (clocks skew) still comes after it, so "the latest"
    of a thread is the one that continues it, not the one with the largest clock."""
    members = set(ids)
    by_key = sorted(members, key=lambda i: (key_of(i), i))
    pos = {i: n for n, i in enumerate(by_key)}
    if all(pos[p] < pos[i] for i in by_key for p in parents_of(i) if p in members):
        return by_key  # the usual case: the clocks already agree with the graph
    children: dict[str, list[str]] = {}
    waiting = dict.fromkeys(by_key, 0)
    for i in by_key:
        for p in set(parents_of(i)):
            if p in members and p != i:
                waiting[i] += 1
                children.setdefault(p, []).append(i)
    ready = [((key_of(i), i), i) for i in by_key if waiting[i] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(i)
        for c in children.get(i, ()):
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(ready, ((key_of(c), c), c))
    if len(out) < len(by_key):  # a cycle of parents: only a forged entry set holds one
        done = set(out)
        out += [i for i in by_key if i not in done]
    return out
