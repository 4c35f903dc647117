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
from typing import Callable, Iterable, Mapping, Optional

from .entry import sort_in_order
from .facts import Facts

# correction id -> (the ids it names, whether it is a revert)
_Graph = dict[str, tuple[list[str], bool]]


@dataclass(frozen=True)
class Derived:
    """What the correction graph of a Fold says, computed in one pass (`derive`)."""

    superseded: frozenset[str]  # ids named by an acting correction
    live: tuple[str, ...]  # carriers not superseded, in (ts, id) order (windows not applied)
    subjects: dict  # subject key -> [subject as shown, live carrier ids]; 2+ ids only
    lineages: dict[str, list[str]]  # decision id -> live carrier ids that are or revise it; 2+ ids only

    def to_json(self, ref: Callable[[str], int]) -> dict:
        """As JSON, each id named by `ref` (a fold's index into its table of ids; an
        object's keys as text)."""
        return {
            "superseded": sorted(ref(i) for i in self.superseded),
            "live": [ref(i) for i in self.live],
            "subjects": {k: [shown, [ref(i) for i in ids]] for k, (shown, ids) in self.subjects.items()},
            "lineages": {str(ref(r)): [ref(i) for i in ids] for r, ids in self.lineages.items()},
        }

    @classmethod
    def from_json(cls, doc: dict, deref: Callable[[int], str]) -> "Derived":
        """What `to_json` wrote, `deref` giving back the id `ref` named."""
        try:
            return cls(
                frozenset(deref(i) for i in doc["superseded"]),
                tuple(deref(i) for i in doc["live"]),
                {k: [shown, [deref(i) for i in ids]] for k, (shown, ids) in doc["subjects"].items()},
                {deref(int(r)): [deref(i) for i in ids] for r, ids in doc["lineages"].items()},
            )
        except (KeyError, AttributeError, IndexError, TypeError, ValueError) as exc:
            raise ValueError("malformed derived truth") from exc


def derive(decisions: list[str], corrections: list, facts: Mapping[str, Facts]) -> Derived:
    """The truth of a correction graph, linear in its size.

    `decisions` are decision ids, `corrections` [id, parents, is revert] rows, `facts`
    per carrier (its `ts`, and its declared subject). Parents may name ids never seen."""
    graph: _Graph = {}
    reverts: list[str] = []
    for cid, parents, revert in corrections:
        if cid not in graph:
            graph[cid] = (parents if len(parents) < 2 else sorted(set(parents)), bool(revert))
            if revert:
                reverts.append(cid)
    idle = _not_acting(graph, reverts)
    superseded: set[str] = set()
    for cid, (parents, _) in graph.items():
        if cid not in idle:
            superseded.update(parents)
    decided = set(decisions)
    revisions_of: dict[str, list[str]] = {}
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

    def ts_of(i: str) -> str:
        return facts[i]["ts"] if i in facts else ""

    def in_order(ids: Iterable[str]) -> list[str]:
        out = list(ids)
        sort_in_order(out, ts_of, str)
        return out

    live = tuple(in_order(i for i in carriers if i not in superseded))
    declared = {i: f["subject_key"] for i, f in facts.items() if "subject_key" in f and i in carriers}
    # Two live versions of one decision need a fork: a carrier revised twice, or a
    # revision that does not act (it was reverted). Without one, a decision's revisions
    # form a single path, each superseding the one before, so at most its end is live.
    forked = any(c in idle for c in carriers if c not in decided) or any(
        len(children) > 1 for p, children in revisions_of.items() if p in carriers
    )
    subjects, roots = _lineage(live, decided, graph, carriers, declared, forked)
    by_subject = _shared(live, subjects)
    by_root = _shared(live, roots)
    shown: dict[str, str] = {}
    for i in in_order(i for i, k in declared.items() if k in by_subject):
        shown.setdefault(declared[i], facts[i]["subject"])
    return Derived(
        frozenset(superseded),
        live,
        {k: [shown[k], ids] for k, ids in sorted(by_subject.items())},
        dict(sorted(by_root.items())),
    )


def with_decision(derived: Derived, decision: str, facts: Mapping[str, Facts], corrections: list) -> Optional[Derived]:
    """What `derive` says once one more decision is folded, without walking the graph again,
    when that is certain: the decision sorts after every carrier in force, no correction
    names it (so nothing it carries is superseded, revised or forked), and the subject it
    declares, if any, is one a conflict group already holds (it joins it, last) or one no
    other entry declares (no group). None otherwise: the caller derives again. This is what
    lets an append of a decision cost the entry, not the line (views/cache.py)."""
    mine = facts.get(decision)
    if mine is None or decision in derived.superseded:
        return None
    if derived.live:
        last = derived.live[-1]
        if (facts[last]["ts"] if last in facts else "", last) >= (mine["ts"], decision):
            return None
    if any(decision in parents for _, parents, _ in corrections):
        return None
    subjects = derived.subjects
    key = mine.get("subject_key")
    if key is not None:
        if key in subjects:
            shown, ids = subjects[key]
            subjects = {**subjects, key: [shown, [*ids, decision]]}
        elif any(f.get("subject_key") == key for i, f in facts.items() if i != decision):
            return None
    return Derived(derived.superseded, (*derived.live, decision), subjects, derived.lineages)


def _shared(live: tuple[str, ...], groups: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """group -> the live carriers in it (in live's order), for groups of two or more: counted
    first, so the many groups of one carrier get no list."""
    count: dict[str, int] = {}
    for i in live:
        for g in groups.get(i, ()):
            count[g] = count.get(g, 0) + 1
    out: dict[str, list[str]] = {}
    for i in live:
        for g in groups.get(i, ()):
            if count[g] > 1:
                out.setdefault(g, []).append(i)
    return out


def not_acting(corrections: list) -> set[str]:
    """The corrections (`[id, parents, is revert]` rows) that do not act: each reverted by
    a revert that acts (what `show` says of a correction)."""
    graph: _Graph = {}
    for cid, parents, revert in corrections:
        graph.setdefault(cid, (list(parents), bool(revert)))
    return _not_acting(graph, [cid for cid, (_, revert) in graph.items() if revert])


def _not_acting(graph: _Graph, reverts: list[str]) -> set[str]:
    """The corrections that do not act. A correction is undone when an acting revert
    names it, and acts when every revert naming it is undone (or none does). Decided
    outward from the reverts no revert names, each edge once. A correction still
    undecided then stands on a cycle of reverts — which content addressing rules out,
    so only a forged or damaged entry set holds one — and does not act: the result
    depends only on the graph, never on the order entries came in."""
    reverted_by: dict[str, list[str]] = {}
    for r in reverts:
        for p in graph[r][0]:
            if p in graph:
                reverted_by.setdefault(p, []).append(r)
    pending = {cid: len(rs) for cid, rs in reverted_by.items()}
    acts = {r: True for r in reverts if r not in reverted_by}
    todo = list(acts)
    while todo:
        cid = todo.pop()
        parents, revert = graph[cid]
        if not revert:
            continue
        for p in parents:
            if p not in pending or p in acts:
                continue
            if acts[cid]:
                acts[p] = False
                todo.append(p)
            else:
                pending[p] -= 1
                if pending[p] == 0:
                    acts[p] = True
                    todo.append(p)
    return {cid for cid in reverted_by if not acts.get(cid, False)}


def _lineage(
    live: tuple[str, ...], decided: set[str], graph: _Graph, carriers: set[str], declared: dict[str, str], forked: bool
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Per live carrier, walking up through what it revises: its subject keys (its own
    declaration, else those of what it revises) and, when `forked`, its roots (the
    decisions it is or revises). A carrier on a cycle of revisions, or revising one (a
    forged entry set), keeps only its own subject and is its own root."""
    if not declared and not forked:
        return {}, {}
    subjects: dict[str, tuple[str, ...]] = {}
    roots: dict[str, tuple[str, ...]] = {}
    open_: set[str] = set()  # on the current walk
    tainted: set[str] = set()  # on or below a cycle
    for start in live:
        stack = [start]
        while stack:
            i = stack[-1]
            if i in subjects:
                stack.pop()
                continue
            own = declared.get(i)
            mine = (own,) if own else ()  # tuples: a set each was 9 MB at 100k entries
            if i in decided:
                subjects[i] = mine
                if forked:  # roots only when they are asked for
                    roots[i] = (i,)
                stack.pop()
                continue
            ups = [p for p in graph[i][0] if p in carriers]
            if i not in open_:
                open_.add(i)
                stack.extend(p for p in ups if p not in subjects and p not in open_)
                continue
            stack.pop()
            if any(p in open_ or p in tainted for p in ups):  # open: i revises itself, through p
                tainted.add(i)
                subjects[i] = mine
                if forked:
                    roots[i] = (i,)
            else:
                subjects[i] = mine or _union([subjects[p] for p in ups])
                if forked:
                    roots[i] = _union([roots[p] for p in ups])
            open_.discard(i)
    return subjects, roots


def _union(groups: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The keys of several tuples of keys, once each (sorted: the same whatever the order)."""
    if len(groups) == 1:
        return groups[0]  # shared, so a chain of N revisions holds one tuple, not N
    return tuple(sorted(set().union(*groups)))


def acting(corrections: list) -> frozenset[str]:
    """The corrections (rows [id, parents, is revert]) that act: not undone by an acting revert."""
    graph: _Graph = {}
    reverts: list[str] = []
    for cid, parents, revert in corrections:
        if cid not in graph:
            graph[cid] = (list(parents), bool(revert))
            if revert:
                reverts.append(cid)
    return frozenset(graph) - _not_acting(graph, reverts)


def superseded_by(corrections: list) -> frozenset[str]:
    """The ids named by an acting correction (rows [id, parents, is revert])."""
    live = acting(corrections)
    return frozenset(p for cid, parents, _ in corrections if cid in live for p in parents)
