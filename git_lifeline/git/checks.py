"""What verification checks, per namespace, on top of the shared walk of verify.py.

The walk (verify.verify_range) applies the rules every namespace shares: tree shape,
append-only history, the merge pick rule. A namespace's `Checks` add the rest:

* how one blob is judged (`blob`: parses, recomputes to its id, is stored at its id;
  for the ledger, its typed header values are of their type: core/headers.py);
* what a record may add to the history it joins (`added`: a decision names a proposal
  the commit holds, and a proposal is decided once);
* what a merge may change (`changed`: the ledger's pick of two blobs of one id never
  dates the entry before its parents beyond the tolerance);
* what the records a range adds must satisfy together (`finish`: the ledger's parents
  and origins, against the repository's real lines only, and the time rules of
  core/clock.py: no entry before its parents or in the future, beyond the tolerance).

`CHECKS` maps every namespace of namespaces.NAMESPACES to its checks; a namespace
without checks is refused at import, so none can go unverified.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import (
    TYPE_CHECKING,
    Generic,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Optional,
    Protocol,
    TypeVar,
    Union,
)

from ..core import clock
from ..core.entry import Entry, abbrev, compute_id, parse_entry, utcnow
from ..core.headers import header_problems
from ..core.plain_blob import PlainEntry, plain_fields
from ..core.policy import OVERRIDE_KEY
from ..errors import InputError, LifelineError
from .blobs import read_blobs
from .command import GitCommandError
from .fanout import FanoutLog, StoredRecord
from .kept import Kept, KeptRecords, LedgerRecord
from .libgit2 import pygit2
from .lines import ORIGIN_HEAD
from .namespaces import LEDGER, NAMESPACES, REVIEW
from .policy_ref import ALLOW_OVERRIDE_KEY, overrides_allowed
from .trees import blob_data, diff_entry_trees, is_entry_path, lookup
from .verdicts import VerdictMemo
from .verify_diff import TreeChange

if TYPE_CHECKING:
    from .records import Record


@dataclass
class Problem:
    code: str
    message: str
    commit: Optional[str] = None

    def describe(self) -> str:
        """`code: message (commit abc)`: how verify, the gates and the errors name it."""
        return f"{self.code}: {self.message}" + (f" (commit {abbrev(self.commit)})" if self.commit else "")


# A ledger blob as judge_entry_blob read it: its fields (core/plain_blob.py) or, parsed in
# full, its Entry; either holds every field an Entry does.
JudgedEntry = Union[Entry, PlainEntry]

# The record type of one namespace's checks: a ledger's Entry (or Kept), a trail's Record.
RecordT = TypeVar("RecordT", bound=StoredRecord)


@dataclass
class Report:
    """The verdict on one log (a line or a review trail), whole or a range of it."""

    line: str  # the log's name
    head: Optional[str]
    entries: int = 0  # valid records at the head (full) or added (range)
    commits: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # never fail (a trail naming an entry not pulled yet)
    external: list[tuple[str, str, str]] = field(default_factory=list)  # (entry id, parent id, line)
    # (copy id, source id, line): promoted copies, anchored
    origins: list[tuple[str, str, str]] = field(default_factory=list)
    added: Mapping[str, StoredRecord] = field(default_factory=dict)  # id -> record the range adds (Checks.record)
    namespace: str = LEDGER.name

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def records(self) -> int:
        return self.entries

    @property
    def label(self) -> str:
        """`line main`, `review trail main`: how messages name the log."""
        noun = next((ns.noun for ns in NAMESPACES if ns.name == self.namespace), self.namespace)
        return f"{noun} {self.line}"


class BlobProblem(str):
    """Why a blob is not a valid record (problem code: the namespace's `bad_code`)."""


class SecretProblem(BlobProblem):
    """A blob problem that is a credential found in the entry (problem code `secret`)."""


class Verifier(Protocol):
    """What the walk (verify.py) asks of a namespace's checks, whatever its records."""

    def blob(self, rel: str, oid: str) -> Optional[tuple[str, str]]: ...

    def preload(self, groups: Iterable[list[TreeChange]]) -> None: ...

    def added_at(self, commit: pygit2.Commit, rel: str, oid: str, report: Report) -> None: ...

    def changed_at(self, commit: pygit2.Commit, rel: str, oid: str, report: Report) -> None: ...

    def collect(self, rel: str, oid: str) -> None: ...  # the record at `rel`, when valid there

    def collect_trees(self, base: Optional[pygit2.Tree], tip: Optional[pygit2.Tree]) -> None: ...

    def finish_range(self, report: Report, tip_tree: Optional[pygit2.Tree]) -> None: ...


class Checks(Generic[RecordT]):
    """The rules of one namespace (see the module's docstring), over its records `RecordT`;
    a Verifier."""

    bad_code = "bad-record"

    def __init__(
        self,
        log: FanoutLog,
        hide: list[str],
        pending: Optional[dict[str, str]] = None,
        memo: Optional[VerdictMemo] = None,
        keep_records: bool = True,
    ):
        self.log = log
        self.repo = log.repo
        self.hide = hide  # commits already trusted: the walk starts after them
        self.pending = pending or {}
        self.memo = memo  # verify's own verdicts of earlier runs (verdicts.py); never a gate's
        self.keep_records = keep_records  # False: only what the cross-entry checks read (Kept)
        # blob id (raw) -> its record when it is valid, else why not: one verdict per blob
        self._judged: dict[bytes, Union[RecordT, BlobProblem]] = {}
        self._start()
        self._records: MutableMapping[str, RecordT] = self._record_store()  # id -> record the range adds (collect)

    def _record_store(self) -> MutableMapping[str, RecordT]:
        return {}

    def _start(self) -> None:
        """The namespace's own state, set up once the common one is (a hook, so that one
        constructor takes the arguments)."""

    def blob(self, rel: str, oid: str) -> Optional[tuple[str, str]]:
        """(code, why) when the blob stored at `rel` (below the tree dir) is not a valid record."""
        raise NotImplementedError

    def preload(self, groups: Iterable[list[TreeChange]]) -> None:
        """Judge the blobs the walk will meet next (`groups` of [(status, new mode, new oid,
        path)], as verify reads them from git) ahead of it, which then finds each verdict
        made; only a speed-up: `blob` judges any blob not preloaded itself."""

    def record(self, oid: str) -> RecordT:
        """The record of a blob `blob` found valid."""
        rec = self._judged[bytes.fromhex(oid)]
        if isinstance(rec, BlobProblem):
            raise KeyError(str(oid))  # pragma: no cover - `blob` said it was valid
        return rec

    def take(self, oid: str) -> RecordT:
        """`record`, letting go of the verdict: the walk is past every place that blob is
        stored but this one (a blob met again is judged again)."""
        rec = self._judged.pop(bytes.fromhex(oid))
        if isinstance(rec, BlobProblem):
            raise KeyError(oid)  # pragma: no cover - `blob` said it was valid
        return rec

    def added_at(self, commit: pygit2.Commit, rel: str, oid: str, report: Report) -> None:
        self.added(commit, rel, self.record(oid), report)

    def changed_at(self, commit: pygit2.Commit, rel: str, oid: str, report: Report) -> None:
        self.changed(commit, rel, self.record(oid), report)

    def collect(self, rel: str, oid: str) -> None:
        """The record stored at `rel`, when it is valid there, is one the range adds."""
        if self.blob(rel, oid) is None:
            self._records[rel.replace("/", "")] = self.take(oid)

    def collect_trees(self, base: Optional[pygit2.Tree], tip: Optional[pygit2.Tree]) -> None:
        """Every valid record `tip` holds that `base` does not is one the range adds."""
        for path, _old, new, kind in diff_entry_trees(self.repo, base, tip):
            if new is None or kind != "blob" or not is_entry_path(path) or self.blob(path, str(new)):
                continue
            self._records[path.replace("/", "")] = self.record(str(new))

    def finish_range(self, report: Report, tip_tree: Optional[pygit2.Tree]) -> None:
        """The records collected are what the range adds: counted, returned, judged together."""
        report.entries = len(self._records)
        report.added = self._records
        self.finish(report, self._records, tip_tree)

    def added(self, commit: pygit2.Commit, rel: str, rec: RecordT, report: Report) -> None:
        """A valid record `commit` adds (called in history order)."""

    def changed(self, commit: pygit2.Commit, rel: str, rec: RecordT, report: Report) -> None:
        """A valid record a merge `commit` keeps in place of a parent's blob of the same
        id (the namespace's pick, already checked)."""

    def finish(self, report: Report, added: Mapping[str, RecordT], tip_tree: Optional[pygit2.Tree]) -> None:
        """The records the range adds, together."""


class LedgerChecks(Checks[LedgerRecord]):
    bad_code = "bad-entry"

    def added_at(self, commit: pygit2.Commit, rel: str, oid: str, report: Report) -> None:
        """Nothing: what an entry adds is judged with the others (`finish`)."""

    def collect(self, rel: str, oid: str) -> None:
        # `blob` then `take` in one look at a verdict already made (once per entry of a line)
        key, entry_id = bytes.fromhex(oid), rel.replace("/", "")
        verdict = self._judged.get(key)
        if verdict is None or isinstance(verdict, BlobProblem) or verdict.id != entry_id:
            super().collect(rel, oid)
            return
        del self._judged[key]
        self._records[entry_id] = verdict

    def _record_store(self) -> MutableMapping[str, LedgerRecord]:
        return {} if self.keep_records else KeptRecords()

    def _start(self) -> None:
        self._mistimed: set[str] = set()  # ids already reported bad-time (at the merge that re-dated them)
        self._skew_value: Optional[timedelta] = None
        self._at: dict[str, Optional[Entry]] = {}  # blob oid -> the entry it holds (_entry_at)
        # a server (pre-receive) or a team (pull, verify) may refuse every override of the
        # secret scan: the repository's own config, or the policy on the trusted ref
        self._honour_override = overrides_allowed(self.log.gr)

    def blob(self, rel: str, oid: str) -> Optional[tuple[str, str]]:
        # What the blob holds is checked once per blob; where it is stored, at every path
        # (the same blob copied or moved under another id's path is a renamed entry).
        key = bytes.fromhex(oid)
        verdict = self._judged.get(key)
        if verdict is None:
            data = blob_data(self.repo, pygit2.Oid(raw=key))
            verdict = self._keep(key, *judge_entry_blob(data, self.memo, self._honour_override))
        if isinstance(verdict, BlobProblem):
            return ("secret" if isinstance(verdict, SecretProblem) else self.bad_code), verdict
        if verdict.id != rel.replace("/", ""):
            return self.bad_code, f"entry {abbrev(verdict.id)} is stored under another id's path (renamed)"
        return None

    def preload(self, groups: Iterable[list[TreeChange]]) -> None:
        # Many blobs: one `git cat-file --batch` reads them (blobs.read_blobs says why);
        # what it cannot read as a blob is left to `blob`, whose libgit2 read names the fault.
        oids = _entry_blobs(self.log, groups)
        if len(oids) < batch_read_min():
            return
        try:
            wanted = {k: raw for k in oids if (raw := bytes.fromhex(k)) not in self._judged}
            for key, data in read_blobs(self.log.gr, wanted):
                if data is not None:
                    self._keep(wanted[key], *judge_entry_blob(data, self.memo, self._honour_override))
        except GitCommandError:
            pass  # git stopped (a corrupt object, say): the walk reads what is left, and names the fault

    def _keep(
        self, key: bytes, problem: Optional[BlobProblem], entry: Optional[JudgedEntry]
    ) -> Union[LedgerRecord, BlobProblem]:
        verdict: Union[LedgerRecord, BlobProblem]
        if problem is not None or entry is None:
            verdict = problem if problem is not None else BlobProblem("unreadable entry")
        elif not self.keep_records and ORIGIN_HEAD not in entry.body:
            verdict = Kept.of(entry)  # read again only for its id, ts and parents
        else:
            verdict = entry if isinstance(entry, Entry) else entry.entry()
        self._judged[key] = verdict
        return verdict

    def changed(self, commit: pygit2.Commit, rel: str, rec: LedgerRecord, report: Report) -> None:
        # The pick keeps the earliest ts, and ts is not hashed: a history made up to carry
        # an earlier copy of an entry re-dates it. Never before what it names (beyond the
        # tolerance the copy's own side was held to: a merge this tool makes of two real
        # copies must pass every gate), and reported at the merge that did it.
        tree = self.log.tree(str(commit.id))
        times: list[tuple[str, Optional[datetime]]] = []
        for p in rec.parents:
            parent = self._entry_at(tree, p)
            times.append((p, parent.ts if parent is not None else None))
        rec_id = rec.id
        why = clock.parent_problem(rec.ts, times, self._skew(report))
        if why and rec_id not in self._mistimed:
            self._mistimed.add(rec_id)
            report.problems.append(
                Problem(
                    "bad-time",
                    f"entry {abbrev(rec_id)}: a merge keeps a copy whose {why[4:]} (re-dated)",
                    str(commit.id),
                )
            )

    def _entry_at(self, tree: Optional[pygit2.Tree], entry_id: str) -> Optional[Entry]:
        """The entry `tree` stores under `entry_id` (parsed, not judged), or None."""
        oid = lookup(tree, entry_id)
        if oid is None:
            return None
        key = str(oid)
        if key not in self._at:
            try:
                self._at[key] = parse_entry(blob_data(self.repo, oid))
            except (LifelineError, KeyError):
                self._at[key] = None
        e = self._at[key]
        return e if e is not None and e.id == entry_id else None

    def finish(self, report: Report, added: Mapping[str, LedgerRecord], tip_tree: Optional[pygit2.Tree]) -> None:
        # Only the repository's real lines count (lines.LineIndex: refs/lifeline/<name> whose
        # head has the ledger's shape, plus the heads this same verification lets in), and
        # only a blob that recomputes to the parent's id: no stray file, branch, foreign ref
        # or renamed blob can excuse a missing parent or vouch for an origin.
        from .lines import LineIndex, check_origins

        index = LineIndex.scan(self.log.gr, self.pending)
        now, skew = utcnow(), self._skew(report)
        kept = added if isinstance(added, KeptRecords) else None
        for e in _each(added):
            if kept is not None and isinstance(e, Kept) and kept.in_time(e, now, skew):
                continue  # every parent here, every time rule kept: nothing to report
            times: list[tuple[str, Optional[datetime]]] = []
            e_id = e.id
            for p in e.parents:
                there_here = kept.kept(p) if kept is not None else added.get(p)
                if there_here is not None:
                    times.append((p, there_here.ts))
                    continue
                if self.hide and lookup(tip_tree, p) is not None:
                    here = self._entry_at(tip_tree, p)
                    times.append((p, here.ts if here is not None else None))
                    continue  # in this line (what `hide` holds was verified before)
                home = index.locate(p, exclude=self.log.name)
                if home:
                    report.external.append((e_id, p, home))
                    there = index.get(home, p)
                    times.append((p, there.ts if there is not None else None))
                else:
                    report.problems.append(
                        Problem("missing-parent", f"entry {abbrev(e_id)} names parent {abbrev(p)}, which no line holds")
                    )
            why = clock.stored_problem(e.ts, times, now, skew)
            if why and e_id not in self._mistimed:
                report.problems.append(Problem("bad-time", f"entry {abbrev(e_id)}: {why}"))
        # a Kept entry holds no origin block (LedgerChecks._keep): only the others can name one
        whole = kept.whole() if kept is not None else (e for e in added.values() if isinstance(e, Entry))
        anchored, forged = check_origins(index, whole)
        report.origins = anchored
        for copy, source, line in forged:
            report.problems.append(
                Problem(
                    "bad-origin",
                    f"entry {abbrev(copy)} names origin {line}:{abbrev(source)} but does not match that entry",
                )
            )

    def _skew(self, report: Report) -> timedelta:
        if self._skew_value is None:
            try:
                self._skew_value = clock.parse_skew(self.log.gr.config_get(clock.SKEW_KEY))
            except InputError as exc:
                report.warnings.append(f"{exc}; used the default")
                self._skew_value = clock.DEFAULT_MAX_SKEW
        return self._skew_value


def _each(added: Mapping[str, LedgerRecord]) -> Iterator[LedgerRecord]:
    """The records of `added` (a whole line's Kept without building an id str each)."""
    return added.all_kept() if isinstance(added, KeptRecords) else iter(added.values())


class TrailChecks(Checks["Record"]):
    def _start(self) -> None:  # a trail's records are few: all kept
        self._checked: dict[tuple[str, str], Optional[str]] = {}  # (blob oid, path) -> problem or None
        self._decisions: Optional[dict[str, list[str]]] = None  # pid -> decision ids of the hidden and walked history

    def blob(self, rel: str, oid: str) -> Optional[tuple[str, str]]:
        from .records import check_record_blob  # only once a trail is read

        key = (oid, rel)
        if key not in self._checked:
            rec, problem = check_record_blob(self.log.name, rel, blob_data(self.repo, pygit2.Oid(hex=oid)))
            if rec is not None:
                self._judged[bytes.fromhex(oid)] = rec
            self._checked[key] = problem
        problem = self._checked[key]
        return (self.bad_code, problem) if problem is not None else None

    def take(self, oid: str) -> Record:
        return self.record(oid)  # a trail's verdicts are by path too: all kept

    def decisions(self) -> dict[str, list[str]]:
        """pid -> ids of the decisions the trusted (hidden) history holds; grown by the walk."""
        if self._decisions is None:
            from .records import DECISIONS

            self._decisions = {}
            for h in self.hide:
                for rec in self.log.load(h).records.values():
                    if rec.type in DECISIONS:
                        self._decisions.setdefault(rec.doc["proposal"], []).append(rec.id)
        return self._decisions

    def added(self, commit: pygit2.Commit, rel: str, rec: Record, report: Report) -> None:
        from .records import DECISIONS

        if rec.type not in DECISIONS or len(commit.parents) > 1:
            return  # a merge only unites what each side added, and each side was checked
        cid = str(commit.id)
        pid = rec.doc["proposal"]
        if lookup(self.log.tree(cid), pid) is None:
            report.problems.append(
                Problem(
                    "orphan-decision",
                    f"{rec.type} record {rec.short} names proposal {abbrev(pid)}, which the trail does not hold",
                    cid,
                )
            )
        base = self.log.tree(str(commit.parents[0].id)) if commit.parents else None
        known = self.decisions().setdefault(pid, [])
        earlier = [d for d in known if d != rec.id and lookup(base, d) is not None]
        if earlier:
            report.problems.append(
                Problem(
                    "decided-twice",
                    f"proposal {abbrev(pid)} was already decided ({abbrev(earlier[0])}) when "
                    f"{rec.type} record {rec.short} was added",
                    cid,
                )
            )
        known.append(rec.id)

    def finish(self, report: Report, added: Mapping[str, Record], tip_tree: Optional[pygit2.Tree]) -> None:
        line = FanoutLog(self.log.gr, LEDGER, self.log.name)
        entries = line.tree(line.head())
        for rec in added.values():
            entry_id = rec.doc.get("entry")
            if entry_id and rec.type in ("approved", "duplicate", "direct") and lookup(entries, entry_id) is None:
                report.warnings.append(
                    f"{rec.type} record {rec.short} names entry {abbrev(entry_id)}, which line "
                    f"{self.log.name!r} does not hold here (pull the ledger?)"
                )


CHECKS: dict[str, Union[type[LedgerChecks], type[TrailChecks]]] = {LEDGER.name: LedgerChecks, REVIEW.name: TrailChecks}
if set(CHECKS) != {ns.name for ns in NAMESPACES}:  # pragma: no cover - caught by any import
    raise ImportError(f"namespaces without verification: {sorted({ns.name for ns in NAMESPACES} - set(CHECKS))}")


def checks_for(
    log: FanoutLog,
    hide: list[str],
    pending: Optional[dict[str, str]] = None,
    memo: Optional[VerdictMemo] = None,
    keep_records: bool = True,
) -> Verifier:
    return CHECKS[log.ns.name](log, hide, pending, memo, keep_records)


# From this many blobs on, a range's blobs are read by one `git cat-file --batch`, in a
# process beside this one: git inflates the next blob on the other core while this one
# judges. Per blob this process then spends ~8k instructions taking it from the pipe
# instead of ~77k reading it through libgit2 (callgrind, a gc'd realistic 2k line); git's
# own CPU is about what libgit2's was (whole verify at 10k: +0-5% CPU in all, less wall on
# two cores). Past libgit2's 16 MB delta-base cache its reads in id order also miss
# (54 µs a blob at 100k). Below ~1,000 blobs starting git costs more than it saves.
# docs/PERFORMANCE.md, "Verify at 100k" and "Verify, issue 30", has the measurements.
BATCH_READ_MIN = 1_000


def batch_read_min() -> int:
    """BATCH_READ_MIN, or the whole number in GIT_LIFELINE_VERIFY_BATCH_FROM: a knob for
    measuring the crossover on other machines, and for tests that take the batch path
    through git's hooks without a line of 1,000 entries."""
    value = os.environ.get("GIT_LIFELINE_VERIFY_BATCH_FROM", "")
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else BATCH_READ_MIN


def _entry_blobs(log: FanoutLog, groups: Iterable[list[TreeChange]]) -> list[str]:
    """Every blob the walk will judge (a plain blob at an entry path below the tree dir),
    once, in the order git listed them."""
    prefix = log.ns.tree_dir + "/"
    seen: dict[str, None] = {}
    for changes in groups:
        for status, mode, new, path in changes:
            if status != "D" and mode == "100644" and path.startswith(prefix) and is_entry_path(path[len(prefix) :]):
                seen[new] = None
    return list(seen)


def judge_entry_blob(
    data: bytes, memo: Optional[VerdictMemo] = None, honour_override: bool = True
) -> tuple[Optional[BlobProblem], Optional[JudgedEntry]]:
    """(problem or None, the parsed entry or None) for one ledger blob's bytes: it parses
    under every rule, recomputes to its id, holds no credential (unless its body records
    a human's override, unless `honour_override` is False) and its typed header values are of their type. Where it is stored is
    the caller's check (`LedgerChecks.blob`). With `memo` (verify's full pass only), the
    last two are skipped for content an earlier verify found clean under the same rules:
    the id, just recomputed from these bytes, proves it is that content.

    A blob laid out as this tool writes it is read by core/plain_blob.py (the same rules,
    a third of the time); any other, or one whose id does not match, by the full parse,
    which names what is wrong."""
    e: JudgedEntry
    plain = plain_fields(data)
    if plain is not None and plain.id == compute_id(
        plain.kind, plain.author, plain.agent, plain.provider, plain.model, plain.summary, plain.body, plain.parents
    ):
        e = plain
    else:
        try:
            e = parse_entry(data)
        except LifelineError as exc:
            return BlobProblem(f"unreadable entry: {exc}"), None
        if not e.verify():
            return BlobProblem(f"content does not match its id {abbrev(e.id)} (tampered)"), e
    if memo is not None and honour_override and memo.known_clean(e):
        return None, e
    problem = _secret_problem(e, honour_override) or _header_problem(e)
    if problem is None and memo is not None and honour_override:
        memo.add(e)
    return problem, e


def _header_problem(e: JudgedEntry) -> Optional[BlobProblem]:
    problems = header_problems(e.kind, e.body)
    return BlobProblem(f"entry {abbrev(e.id)}: " + "; ".join(problems)) if problems else None


def _secret_problem(e: JudgedEntry, honour_override: bool = True) -> Optional[SecretProblem]:
    from ..core.secrets import entry_findings, honoured_override

    findings = entry_findings(e, honour_override)
    if not findings:
        return None
    if not honour_override and honoured_override(e) is not None:
        shown = "; ".join(f.describe() for f in findings[:3]) + (" ..." if len(findings) > 3 else "")
        return SecretProblem(
            f"entry {e.id[:12]} overrides the secret scan ({shown}), which git config "
            f"{ALLOW_OVERRIDE_KEY} false or the policy's {OVERRIDE_KEY} false refuses here; "
            "rotate it if it is real"
        )
    shown = "; ".join(f.describe() for f in findings[:3]) + (" ..." if len(findings) > 3 else "")
    return SecretProblem(
        f"entry {abbrev(e.id)} holds what looks like a credential ({shown}); rotate it, it is in the line's history"
    )


__all__ = [
    "CHECKS",
    "Checks",
    "LedgerChecks",
    "Problem",
    "Report",
    "SecretProblem",
    "TrailChecks",
    "Verifier",
    "checks_for",
]
