"""The correction graph's truth, derived in one pass (docs/FORMAT.md §9).

A correction is a *revert* when its body header says `action: revert`, else a
*revision*. From the decisions and the corrections alone (ids, parents, the revert
flag, each carrier's ts and declared subject) `derive` computes which ids are
superseded, which carriers are in force, and which of those the ledger says are
about the same thing. Every step visits each node and edge a bounded number of
times, so a chain of N revisions costs O(N), and the result depends only on the
graph: not on the order the entries came in, and defined on any graph, cycles and
ids never seen included.
"""

from __future__ import annotations

from dataclasses import dataclass

_NOTHING: frozenset = frozenset()


@dataclass(frozen=True)
class Derived:
    """What the correction graph of a Fold says, computed in one pass (`derive`)."""

    superseded: frozenset  # ids named by an acting correction
    live: tuple            # carriers not superseded, in (ts, id) order (windows not applied)
    subjects: dict         # subject key -> [subject as shown, live carrier ids]; 2+ ids only
    lineages: dict         # decision id -> live carrier ids that are or revise it; 2+ ids only

    def to_json(self) -> dict:
        return {"superseded": sorted(self.superseded), "live": list(self.live),
                "subjects": self.subjects, "lineages": self.lineages}

    @classmethod
    def from_json(cls, doc: dict) -> "Derived":
        try:
            return cls(frozenset(doc["superseded"]), tuple(doc["live"]), dict(doc["subjects"]),
                       dict(doc["lineages"]))
        except (KeyError, AttributeError) as exc:
            raise ValueError("malformed derived truth") from exc


def derive(decisions: list, corrections: list, facts: dict) -> Derived:
    """The truth of a correction graph, linear in its size.

    `decisions` are decision ids, `corrections` [id, parents, is revert] rows, `facts`
    per carrier (its `ts`, and its declared subject). Parents may name ids never seen."""
    graph: dict = {}
    for cid, parents, revert in corrections:
        if cid not in graph:
            graph[cid] = (sorted(set(parents)), bool(revert))
    superseded: set = set()
    for cid in _acting(graph):
        superseded.update(graph[cid][0])
    decided = set(decisions)
    revisions_of: dict = {}
    for cid, (parents, revert) in graph.items():
        if not revert and cid not in decided:
            for p in parents:
                revisions_of.setdefault(p, []).append(cid)
    carriers = set(decided)
    todo = list(decided)
    while todo:  # a revision of a carrier carries
        for child in revisions_of.get(todo.pop(), ()):
            if child not in carriers:
                carriers.add(child)
                todo.append(child)

    def order(i: str) -> tuple:
        return (facts.get(i, {}).get("ts", ""), i)

    live = tuple(sorted((i for i in carriers if i not in superseded), key=order))
    subjects, roots = _inherit(carriers, decided, graph, revisions_of, facts)
    shown: dict = {}
    for i in sorted((i for i in carriers if facts.get(i, {}).get("subject_key")), key=order):
        shown.setdefault(facts[i]["subject_key"], facts[i]["subject"])
    by_subject: dict = {}
    by_root: dict = {}
    for i in live:
        for k in sorted(subjects[i]):
            by_subject.setdefault(k, []).append(i)
        for r in sorted(roots[i]):
            by_root.setdefault(r, []).append(i)
    return Derived(frozenset(superseded), live,
                   {k: [shown[k], ids] for k, ids in by_subject.items() if len(ids) > 1},
                   {r: ids for r, ids in by_root.items() if len(ids) > 1})


def _acting(graph: dict) -> set:
    """The corrections that act. A correction is undone when an acting revert names it,
    and acts when every revert naming it is undone (or none does). Decided outward from
    the corrections no revert names, each edge once. A correction still undecided then
    stands on a cycle of reverts — which content addressing rules out, so only a forged
    or damaged entry set holds one — and does not act: the result depends only on the
    graph, never on the order entries came in."""
    reverted_by: dict = {}
    for cid, (parents, revert) in graph.items():
        if revert:
            for p in parents:
                if p in graph:
                    reverted_by.setdefault(p, []).append(cid)
    pending = {cid: len(reverted_by.get(cid, ())) for cid in graph}
    acts = {cid: True for cid, n in pending.items() if n == 0}
    todo = list(acts)
    while todo:
        cid = todo.pop()
        parents, revert = graph[cid]
        if not revert:
            continue
        for p in parents:
            if p not in graph or p in acts:
                continue
            if acts[cid]:
                acts[p] = False
                todo.append(p)
            else:
                pending[p] -= 1
                if pending[p] == 0:
                    acts[p] = True
                    todo.append(p)
    return {cid for cid, a in acts.items() if a}


def _inherit(carriers: set, decided: set, graph: dict, revisions_of: dict, facts: dict) -> tuple:
    """Per carrier: its subject keys (its own declaration, else those of what it
    revises) and its roots (the decisions it is or revises, through revisions).
    Parents before children; a carrier on a cycle of revisions (a forged entry set)
    keeps only its own subject and is its own root."""
    up = {i: [] if i in decided else [p for p in graph[i][0] if p in carriers] for i in carriers}
    pending = {i: len(ps) for i, ps in up.items()}
    subjects: dict = {}
    roots: dict = {}
    todo = [i for i, n in pending.items() if n == 0]
    while todo:
        i = todo.pop()
        own = facts.get(i, {}).get("subject_key")
        if i in decided:
            roots[i] = frozenset((i,))
            subjects[i] = frozenset((own,)) if own else _NOTHING
        else:
            roots[i] = _union([roots[p] for p in up[i]])
            subjects[i] = frozenset((own,)) if own else _union([subjects[p] for p in up[i]])
        for child in revisions_of.get(i, ()):
            pending[child] -= 1
            if pending[child] == 0:
                todo.append(child)
    for i in carriers:
        if i not in roots:
            own = facts.get(i, {}).get("subject_key")
            roots[i] = frozenset((i,))
            subjects[i] = frozenset((own,)) if own else _NOTHING
    return subjects, roots


def _union(sets: list) -> frozenset:
    if len(sets) == 1:
        return sets[0]  # shared, so a chain of N revisions holds one set, not N
    return frozenset().union(*sets)
