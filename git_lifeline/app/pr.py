"""`git lifeline pr`: what a range of code commits means for the ledger, for a reviewer.

For `base...head`: the decisions in force whose code (`paths:`) the range's commits touch,
each graded as staleness grades (git/history.py) with the files and lines, and whether the
range links it (a commit's `Lifeline:` trailer names it, or an entry that names it as a
parent), or it was re-affirmed against the range's code, or neither; the entries the
range's commits link; proposals waiting for review; conflicts among the decisions the
range links; stale decisions the range re-affirms. `failures(fail_on)` says which of the
checks `--fail-on` names the range fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..core import truth
from ..core.json_input import JSONObject
from ..errors import InputError
from ..git.code_range import CodeRange, RangeCommit, range_commits, resolve_range
from ..git.codelog import CodeLog
from ..git.history import GRADES, governed_code, grade_of, split_pathspecs
from ..git.links import resolve
from ..git.store import LineStore
from .ledger import Ledger

JSON_VERSION = 1


@dataclass(frozen=True)
class TouchedDecision:
    id: str
    summary: str
    paths: tuple[str, ...]
    files: tuple[str, ...]  # files of the range's diff under its paths, sorted
    commits: tuple[str, ...]  # the range's commits that touched them, newest first
    lines: int  # lines added and deleted by those commits
    grade: str  # one of GRADES, of what the range did to its code
    files_now: int  # files its paths match at the range's head
    lines_now: int
    state: str  # "linked", "reaffirmed" or "unlinked"
    stale: Optional[str]  # its staleness mark at the head, None when it is not stale


@dataclass(frozen=True)
class LinkedEntry:
    commit: str
    subject: str
    trailer: str  # the value as written
    id: Optional[str]  # None: no entry of this clone's ledger
    line: Optional[str]
    kind: Optional[str]
    summary: Optional[str]


@dataclass(frozen=True)
class WaitingProposal:
    id: str
    kind: str
    summary: str


@dataclass(frozen=True)
class BroughtConflict:
    subject: str
    ids: tuple[str, ...]


@dataclass
class PrReport:
    range: CodeRange
    line: str
    commits: int  # commits the range adds
    touched: list[TouchedDecision] = field(default_factory=list)  # strongest grade first
    linked: list[LinkedEntry] = field(default_factory=list)
    proposals: list[WaitingProposal] = field(default_factory=list)
    conflicts: list[BroughtConflict] = field(default_factory=list)
    reaffirmed: list[str] = field(default_factory=list)  # decisions stale at the base, cleared by the range

    @property
    def stale(self) -> list[TouchedDecision]:
        return [t for t in self.touched if t.stale]

    @property
    def unlinked(self) -> list[TouchedDecision]:
        return [t for t in self.touched if t.state == "unlinked"]

    def failures(self, fail_on: tuple[str, ...]) -> list[str]:
        """One line per check of `fail_on` the range fails."""
        out = []
        if "unlinked" in fail_on and self.unlinked:
            out.append(
                f"{len(self.unlinked)} decision(s) govern code this range changes, neither linked nor re-affirmed"
            )
        if "stale" in fail_on and self.stale:
            out.append(f"{len(self.stale)} decision(s) this range touches are left stale")
        if "conflict" in fail_on and self.conflicts:
            out.append(f"{len(self.conflicts)} conflict(s) among the decisions this range links")
        return out

    def to_json(self) -> JSONObject:
        """The complete report (docs/CI.md, "git lifeline pr --format json")."""
        return {
            "version": JSON_VERSION,
            "line": self.line,
            "range": {
                "base": self.range.base_name,
                "head": self.range.head_name,
                "base_commit": self.range.base,
                "head_commit": self.range.head,
                "merge_base": self.range.merge_base,
                "commits": self.commits,
            },
            "touched": [
                {
                    "id": t.id,
                    "summary": t.summary,
                    "paths": list(t.paths),
                    "files": list(t.files),
                    "commits": list(t.commits),
                    "lines": t.lines,
                    "grade": t.grade,
                    "files_now": t.files_now,
                    "lines_now": t.lines_now,
                    "state": t.state,
                    "stale": t.stale,
                }
                for t in self.touched
            ],
            "linked": [
                {
                    "commit": e.commit,
                    "subject": e.subject,
                    "trailer": e.trailer,
                    "id": e.id,
                    "line": e.line,
                    "kind": e.kind,
                    "summary": e.summary,
                }
                for e in self.linked
            ],
            "proposals": [{"id": p.id, "kind": p.kind, "summary": p.summary} for p in self.proposals],
            "conflicts": [{"subject": c.subject, "ids": list(c.ids)} for c in self.conflicts],
            "reaffirmed": list(self.reaffirmed),
        }


def _linked_entries(led: Ledger, commits: list[RangeCommit]) -> list[LinkedEntry]:
    out = []
    for c in commits:
        for value in c.trailers:
            try:
                eid, line = resolve(led.gr, value, led.line)
            except InputError:
                out.append(LinkedEntry(c.commit, c.subject, value, None, None, None, None))
                continue
            e = (led.store if line == led.line else LineStore(led.gr, line)).read(eid)
            assert e is not None  # resolve found it there
            out.append(LinkedEntry(c.commit, c.subject, value, eid, line, e.kind, e.summary))
    return out


def _named_decisions(st: truth.State, linked: list[LinkedEntry]) -> set[str]:
    """The decisions the range's links name: the entries themselves, and their parents."""
    out = set()
    for e in linked:
        if e.id is None:
            continue
        out.add(e.id)
        if e.id in st.by_id:
            out.update(st.by_id[e.id].parents)
    return out


def pr_report(led: Ledger, spec: Optional[str]) -> PrReport:
    """The ledger's view of the range `spec` (git/code_range.py; None: the default)."""
    from .agents import Agents

    rng = resolve_range(led.gr, spec)
    st = led.state()
    facts = st.fold.facts
    code = CodeLog(led.gr, rng.head)
    specs = governed_code(led.gr, code, facts, led.checks.rechecked(st), st.decision_ids, led.store)
    governed = list(specs)
    answers = code.changes([(s, (rng.merge_base,), None) for s in dict.fromkeys(specs.values()) if s])
    commits = range_commits(led.gr, rng)
    linked = _linked_entries(led, commits)
    named = _named_decisions(st, linked)
    stale_now = {s.decision: s for s in led.stale(st=st, rev=rng.head)} if governed else {}
    touched = []
    for i in governed:
        log = [row for row in answers.get((specs[i], (rng.merge_base,), None), []) if row.changes]
        if not log:
            continue
        files = sorted({ch.old if ch.status == "D" else ch.new for row in log for ch in row.changes})
        lines = sum(ch.lines for row in log for ch in row.changes)
        size = code.sizes_of([specs[i]])[specs[i]]
        stale = stale_now.get(i)
        state = "linked" if i in named else "unlinked" if stale is not None else "reaffirmed"
        touched.append(
            TouchedDecision(
                i,
                st.by_id[i].summary,
                tuple(split_pathspecs(facts[i]["paths"])),
                tuple(files),
                tuple(row.commit for row in log),
                lines,
                grade_of(size, lines),
                size.files,
                size.lines,
                state,
                stale.mark() if stale is not None else None,
            )
        )
    touched.sort(key=lambda t: (GRADES.index(t.grade), -t.lines / max(t.lines_now, 1), -len(t.commits), t.id))
    stale_before = {s.decision for s in led.stale(st=st, rev=rng.merge_base)} if named & set(governed) else set()
    reaffirmed = sorted(i for i in stale_before & named if i not in stale_now)
    conflicts = [BroughtConflict(subj, tuple(ids)) for subj, ids in st.conflicts if named & set(ids)]
    proposals = [WaitingProposal(p.id, p.content.kind, p.content.summary) for p in Agents(led).proposals()]
    return PrReport(rng, led.line, len(commits), touched, linked, proposals, conflicts, reaffirmed)
