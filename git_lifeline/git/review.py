"""The review trail: what agents proposed or wrote, and every human decision, kept in git.

Layout (docs/FORMAT.md, "Review trail", is the normative description):

    refs/lifeline-review/<line> -> commit -> tree { records/<id[0:2]>/<id[2:4]>/<id[4:]> : blob }

Each blob is one record as canonical JSON and its id is the sha256 of the blob's
bytes, so a record cannot change without changing its name. Every commit's tree is
the full snapshot of the trail (a superset of its parents'), the ref moves by
compare-and-swap, and a merge is a union, exactly like a line of the ledger.

Records: ``proposed`` (an entry waiting for a human), ``approved`` (naming the entry it
became), ``duplicate`` (the entry was already in the line), ``rejected`` (with a why),
and ``direct`` (an audit record of an agent's policy-direct write). A decision is
final: once a proposal is decided, the writer refuses a second decision under the
same compare-and-swap that appends it, so a reject can never overwrite an approval.
Concurrent decisions made on two machines meet only at a merge; then an approval
wins (its entry is in the ledger), and the other decision is shown as a conflict.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator, Optional

import pygit2

from ..core.model import HEX64, MAX_FIELD_CHARS, Entry, build_entry, format_ts, parse_ts, utcnow
from ..errors import ConflictError, InputError, IntegrityError, LifelineError
from .repo import GitRepo
from .store import (
    LINE_RE,
    LineStore,
    cas_ref,
    diff_entry_trees,
    entry_path,
    insert_fanout,
    is_entry_path,
    make_commit,
    rewound_value,
    validate_line,
)

REF_PREFIX = "refs/lifeline-review/"
RECORDS_DIR = "records"
FORMAT_VERSION = 1
MIN_PID_PREFIX = 4
TYPES = ("proposed", "approved", "duplicate", "rejected", "direct")
DECISIONS = ("approved", "duplicate", "rejected")
VIAS = ("mcp", "cli")
MAX_WHY_CHARS = 2000
CONTENT_KEYS = ("agent", "author", "body", "kind", "model", "parents", "provider", "summary")
_COMMON = ("by", "line", "ts", "type", "v")
KEYS = {
    "proposed": _COMMON + ("content", "via"),
    "approved": _COMMON + ("entry", "proposal"),
    "duplicate": _COMMON + ("entry", "proposal"),
    "rejected": _COMMON + ("proposal", "why"),
    "direct": _COMMON + ("agent", "entry", "kind", "model", "provider", "rule", "summary", "via"),
}
_HEX = re.compile(r"[0-9a-f]+")
_CAS_ATTEMPTS = 64


class ReviewError(InputError):
    """A review action that cannot be done (unknown proposal, already decided...)."""


# ---- records ----------------------------------------------------------------
def canonical_bytes(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def _single_line(value, name: str, limit: int = MAX_FIELD_CHARS) -> Optional[str]:
    if not isinstance(value, str) or not value.strip():
        return f"{name} must be a non-empty string"
    if value != value.strip() or any(ch in value for ch in "\r\n") or len(value) > limit:
        return f"{name} must be one line of at most {limit} characters without surrounding spaces"
    return None


def doc_problems(doc) -> list:
    """Every rule a record document must satisfy (empty when valid)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    kind = doc.get("type")
    if kind not in TYPES:
        return [f"unknown record type {kind!r}"]
    expected = set(KEYS[kind])
    problems = []
    if set(doc) != expected:
        missing, extra = sorted(expected - set(doc)), sorted(set(doc) - expected)
        problems.append(f"{kind} record keys: missing {missing or '-'}, unexpected {extra or '-'}")
        return problems
    if doc["v"] != FORMAT_VERSION or isinstance(doc["v"], bool):
        problems.append(f"unsupported record version {doc['v']!r}")
    for name in ("by", "line"):
        why = _single_line(doc[name], name)
        if why:
            problems.append(why)
    try:
        if not isinstance(doc["ts"], str) or format_ts(parse_ts(doc["ts"])) != doc["ts"]:
            problems.append("ts must be written as YYYY-MM-DDTHH:MM:SS.ffffffZ")
    except InputError:
        problems.append("ts is not a timestamp")
    for name in ("entry", "proposal"):
        if name in expected and (not isinstance(doc[name], str) or not HEX64.fullmatch(doc[name])):
            problems.append(f"{name} must be a full 64-hex id")
    if "via" in expected and doc["via"] not in VIAS:
        problems.append(f"via must be one of {', '.join(VIAS)}")
    if kind == "rejected" and (not isinstance(doc["why"], str) or len(doc["why"]) > MAX_WHY_CHARS):
        problems.append(f"why must be a string of at most {MAX_WHY_CHARS} characters")
    if kind == "direct":
        for name in ("agent", "kind", "model", "provider", "rule"):
            why = _single_line(doc[name], name)
            if why:
                problems.append(why)
        if not isinstance(doc["summary"], str):
            problems.append("summary must be a string")
    if kind == "proposed":
        content = doc["content"]
        if not isinstance(content, dict) or set(content) != set(CONTENT_KEYS):
            problems.append(f"content must be an object with exactly: {', '.join(CONTENT_KEYS)}")
        else:
            try:
                content_entry(content)
            except InputError as exc:
                problems.append(f"content: {exc}")
    return problems


def content_entry(content: dict, ts: Optional[datetime] = None) -> Entry:
    """The entry a proposal's content becomes (validated like every write)."""
    fields = {k: content[k] for k in CONTENT_KEYS}
    if ts is not None:
        fields["ts"] = ts
    return build_entry(**fields)


@dataclass(frozen=True)
class Record:
    """One immutable review record; `id` is the sha256 of its canonical JSON bytes."""

    id: str
    doc: dict

    @property
    def type(self) -> str:
        return self.doc["type"]

    @property
    def ts(self) -> datetime:
        return parse_ts(self.doc["ts"])

    @property
    def by(self) -> str:
        return self.doc["by"]

    @property
    def short(self) -> str:
        return self.id[:8]

    def get(self, key: str, default=None):
        return self.doc.get(key, default)

    def to_json(self) -> bytes:
        return canonical_bytes(self.doc)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Record":
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"not valid JSON: {exc}") from None
        problems = doc_problems(doc)
        if problems:
            raise InputError("; ".join(problems))
        if canonical_bytes(doc) != data:
            raise InputError("not in canonical form (sorted keys, compact, one trailing newline)")
        return cls(hashlib.sha256(data).hexdigest(), doc)


def make_record(type_: str, line: str, by: str, ts: Optional[datetime] = None, **fields) -> Record:
    doc = {"v": FORMAT_VERSION, "type": type_, "line": line, "by": by,
           "ts": format_ts(ts or utcnow()), **fields}
    problems = doc_problems(doc)
    if problems:
        raise InputError("; ".join(problems))
    if isinstance(doc.get("why"), str):  # free text a human types into the trail (a proposal's
        from ..core.secrets import refusal, scan  # content is an entry: the model's gate already ran)
        findings = scan(doc["why"], "why")
        if findings:
            from ..errors import SecretError
            raise SecretError(refusal(findings, "the rejection's why"))
    data = canonical_bytes(doc)
    return Record(hashlib.sha256(data).hexdigest(), doc)


def entry_content(e: Entry) -> dict:
    return {"agent": e.agent, "author": e.author, "body": e.body, "kind": e.kind, "model": e.model,
            "parents": list(e.parents), "provider": e.provider, "summary": e.summary}


# ---- proposals and their status -------------------------------------------------
@dataclass
class Proposal:
    record: Record
    decisions: list = field(default_factory=list)   # decision records, (ts, id) order

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def short(self) -> str:
        return self.record.short

    @property
    def content(self) -> dict:
        return self.record.doc["content"]

    @property
    def decision(self) -> Optional[Record]:
        """The decision that counts: an approval wins, then a duplicate, then a rejection
        (several exist only where concurrent decisions from two clones were merged)."""
        for wanted in ("approved", "duplicate", "rejected"):
            for d in self.decisions:
                if d.type == wanted:
                    return d
        return None

    @property
    def status(self) -> str:
        d = self.decision
        return d.type if d is not None else "pending"

    @property
    def conflicts(self) -> list:
        d = self.decision
        return [x for x in self.decisions if x is not d]


def order_key(r: Record) -> tuple:
    return (r.doc["ts"], r.id)


def build_proposals(records: dict) -> dict:
    """pid -> Proposal, with the decisions that name it attached."""
    proposals = {rid: Proposal(r) for rid, r in records.items() if r.type == "proposed"}
    for r in sorted(records.values(), key=order_key):
        if r.type in DECISIONS and r.doc["proposal"] in proposals:
            proposals[r.doc["proposal"]].decisions.append(r)
    return proposals


@dataclass
class TrailLoad:
    records: dict = field(default_factory=dict)    # id -> Record
    problems: list = field(default_factory=list)   # (path, message)


# ---- the ref ---------------------------------------------------------------------
def _tree_has(tree: Optional[pygit2.Tree], rid: str) -> bool:
    """Is there a leaf for this 64-hex id in a two-level fan-out tree?"""
    if tree is None:
        return False
    a, b, rest = entry_path(rid)
    try:
        tree[f"{a}/{b}/{rest}"]
    except KeyError:
        return False
    return True


class ReviewTrail:
    """Reads and appends the review trail of one line (`refs/lifeline-review/<line>`)."""

    def __init__(self, gr: GitRepo, line: str):
        self.gr = gr
        self.repo: pygit2.Repository = gr.repo
        self.line = validate_line(line)
        self.ref_name = REF_PREFIX + line

    def head(self) -> Optional[str]:
        try:
            ref = self.repo.lookup_reference(self.ref_name)
        except (KeyError, pygit2.InvalidSpecError):
            return None
        if not isinstance(ref.target, pygit2.Oid):
            raise LifelineError(f"{self.ref_name} is a symbolic ref; a review ref must point at a commit")
        return str(ref.target)

    def records_tree(self, commit_id: Optional[str]) -> Optional[pygit2.Tree]:
        if commit_id is None:
            return None
        obj = self.repo[commit_id]
        if not isinstance(obj, pygit2.Commit):
            raise IntegrityError(f"{self.ref_name} points at a {obj.type_str}, not a commit")
        if RECORDS_DIR not in obj.tree:
            return None
        sub = self.repo[obj.tree[RECORDS_DIR].id]
        return sub if isinstance(sub, pygit2.Tree) else None

    def _blobs(self, tree: Optional[pygit2.Tree]) -> Iterator[tuple[str, pygit2.Object]]:
        if tree is None:
            return
        for a in tree:
            sub_a = self.repo[a.id]
            if not isinstance(sub_a, pygit2.Tree):
                yield a.name, sub_a
                continue
            for b in sub_a:
                sub_b = self.repo[b.id]
                if not isinstance(sub_b, pygit2.Tree):
                    yield f"{a.name}/{b.name}", sub_b
                    continue
                for c in sub_b:
                    yield f"{a.name}/{b.name}/{c.name}", self.repo[c.id]

    def check_blob(self, path: str, obj) -> tuple[Optional[Record], Optional[str]]:
        if not isinstance(obj, pygit2.Blob) or not is_entry_path(path):
            return None, "not a record blob at a record path"
        try:
            rec = Record.from_bytes(obj.data)
        except InputError as exc:
            return None, f"unreadable record: {exc}"
        if rec.id != path.replace("/", ""):
            return None, f"content hashes to {rec.id[:12]}, not to its path (tampered)"
        if rec.doc["line"] != self.line:
            return None, f"record of line {rec.doc['line']!r} in the trail of line {self.line!r}"
        return rec, None

    def load(self, commit_id: Optional[str] = None) -> TrailLoad:
        """Every valid record of a commit (default: head); bad blobs become problems."""
        out = TrailLoad()
        head = commit_id if commit_id is not None else self.head()
        for path, obj in self._blobs(self.records_tree(head)):
            rec, problem = self.check_blob(path, obj)
            if problem:
                out.problems.append((f"{RECORDS_DIR}/{path}", problem))
            else:
                out.records[rec.id] = rec
        return out

    def has(self, rid: str, tree: Optional[pygit2.Tree]) -> bool:
        return _tree_has(tree, rid)

    # ---- writing --------------------------------------------------------------
    def _insert(self, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
        return insert_fanout(self.repo, base, blobs)

    def _root(self, records_tree: pygit2.Oid) -> pygit2.Oid:
        tb = self.repo.TreeBuilder()
        tb.insert(RECORDS_DIR, records_tree, pygit2.GIT_FILEMODE_TREE)
        return tb.write()

    def _move_ref(self, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
        """Compare-and-swap the ref from `old` to `new`; False when another writer won."""
        return cas_ref(self.gr, self.ref_name, old, new, message)

    def _signature(self, when: datetime) -> pygit2.Signature:
        name, email = self.gr.identity()
        return pygit2.Signature(name, email, int(when.timestamp()), 0)

    def append(self, record: Record, message: str, check: Optional[Callable[[Optional[str]], None]] = None) -> str:
        """Append one record in one commit (compare-and-swap, retried).

        `check(head)` runs against the head each attempt is built on and may raise to
        refuse the write (that is how a second decision on a proposal is refused even
        when two processes decide at once). Returns the new head.
        """
        blob = self.repo.create_blob(record.to_json())
        sig = self._signature(record.ts)
        for attempt in range(_CAS_ATTEMPTS):
            head = self.head()
            if check is not None:
                check(head)
            base = self.records_tree(head)
            if self.has(record.id, base):
                return head
            tree = self._root(self._insert(base, {record.id: blob}))
            parents = [pygit2.Oid(hex=head)] if head else []
            commit = make_commit(self.gr, message, tree, parents, sig)
            if self._move_ref(head, commit, f"lifeline-review: {record.type}"):
                return str(commit)
            time.sleep(random.uniform(0.001, 0.004) * min(attempt + 1, 10))
        raise ConflictError(f"{self.ref_name} kept moving under concurrent writers; nothing was written, try again")

    @contextlib.contextmanager
    def lock(self):
        """Serialise deciders on this machine (an approval writes the ledger, then the trail)."""
        path = self.gr.lifeline_dir() / f"review-{self.line}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+") as fh:
            try:
                import fcntl
            except ImportError:  # not POSIX: the trail's compare-and-swap still refuses double decisions
                yield
                return
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    # ---- the operations -------------------------------------------------------------
    def proposals(self) -> dict:
        return build_proposals(self.load().records)

    def resolve(self, ref: str, proposals: Optional[dict] = None) -> Proposal:
        p = ref.strip().lower()
        if len(p) < MIN_PID_PREFIX or not _HEX.fullmatch(p):
            raise ReviewError(f"invalid proposal id {ref!r}: give at least {MIN_PID_PREFIX} hex characters "
                              "(see git lifeline review)")
        proposals = self.proposals() if proposals is None else proposals
        matches = [pid for pid in proposals if pid.startswith(p)]
        if not matches:
            raise ReviewError(f"no proposal {ref!r} in the review trail of line {self.line!r}")
        if len(matches) > 1:
            raise ReviewError(f"ambiguous proposal id {ref!r}: matches {', '.join(m[:12] for m in sorted(matches))}")
        return proposals[matches[0]]

    def propose(self, entry: Entry, by: str, via: str) -> Record:
        rec = make_record("proposed", self.line, by, ts=entry.ts, content=entry_content(entry), via=via)
        self.append(rec, f"proposed {entry.kind}: {entry.summary}\n\n{_trailers(rec)}")
        return rec

    def record_direct(self, entry: Entry, rule: str, by: str, via: str) -> Record:
        rec = make_record("direct", self.line, by, entry=entry.id, kind=entry.kind, summary=entry.summary,
                          agent=entry.agent, provider=entry.provider, model=entry.model, rule=rule, via=via)
        self.append(rec, f"direct {entry.kind}: {entry.summary}\n\n{_trailers(rec)}Lifeline-Id: {entry.id}\n")
        return rec

    def decide(self, pid: str, type_: str, by: str, entry: Optional[str] = None, why: str = "") -> Record:
        """Append a decision; refused (ReviewError) when the proposal is already decided."""
        fields = {"proposal": pid}
        if type_ == "rejected":
            fields["why"] = why
        else:
            fields["entry"] = entry
        rec = make_record(type_, self.line, by, **fields)

        def check(head: Optional[str]) -> None:
            current = build_proposals(self.load(head).records).get(pid)
            if current is None:
                raise ReviewError(f"no proposal {pid[:12]} in the review trail of line {self.line!r}")
            if current.decision is not None:
                raise ReviewError(already_decided(current))

        what = f"{type_} {pid[:8]}" + (f" as {entry[:12]}" if entry else "")
        extra = f"Lifeline-Proposal: {pid}\n" + (f"Lifeline-Id: {entry}\n" if entry else "")
        self.append(rec, f"{what}\n\n{_trailers(rec)}{extra}", check)
        return rec

    def integrate(self, other: str) -> str:
        """Bring another clone's trail commit in: created, up-to-date, fast-forward or merged.

        The incoming history is verified first (a tampered record is refused). A merge
        commit carries the union of both record sets; records are content-addressed,
        so the union never conflicts.
        """
        report = verify_trail(self.gr, self.line, commit=other)
        if not report.ok:
            first = report.problems[0]
            raise IntegrityError(f"refusing the incoming review trail of line {self.line!r}: {first.message}")
        for attempt in range(_CAS_ATTEMPTS):
            head = self.head()
            other_oid = pygit2.Oid(hex=other)
            if head == other or (head is not None and self.repo.descendant_of(pygit2.Oid(hex=head), other_oid)):
                return "up-to-date"
            if head is None or self.repo.descendant_of(other_oid, pygit2.Oid(hex=head)):
                if self._move_ref(head, other_oid, "lifeline-review: fast-forward"):
                    return "created" if head is None else "fast-forward"
                continue
            mine, theirs = self.records_tree(head), self.records_tree(other)
            added = {}
            for path, old, new, _kind in diff_entry_trees(self.repo, mine, theirs):
                if new is not None and old is None and is_entry_path(path):
                    added[path.replace("/", "")] = new
            tree = self._root(self._insert(mine, added))
            sig = self._signature(utcnow())
            commit = make_commit(self.gr, f"lifeline-review: merge trail of line {self.line}\n", tree,
                                 [pygit2.Oid(hex=head), other_oid], sig)
            if self._move_ref(head, commit, "lifeline-review: merge"):
                return "merged"
            time.sleep(random.uniform(0.001, 0.004) * min(attempt + 1, 10))
        raise ConflictError(f"{self.ref_name} kept moving under concurrent writers; try again")


def _trailers(rec: Record) -> str:
    return f"Lifeline-Review: {rec.id}\nLifeline-Review-Type: {rec.type}\n"


def already_decided(p: Proposal) -> str:
    d = p.decision
    when = d.doc["ts"][:19].replace("T", " ")
    if d.type == "approved":
        return (f"proposal {p.short} was already approved as entry {d.doc['entry'][:12]} by {d.by} on {when}; "
                "an approval is final (record a correction to change the ledger)")
    if d.type == "duplicate":
        return (f"proposal {p.short} was already closed as a duplicate of entry {d.doc['entry'][:12]} by {d.by} "
                f"on {when}")
    return (f"proposal {p.short} was already rejected by {d.by} on {when}; file it again with "
            "git lifeline propose to reconsider it")


# ---- integrity ---------------------------------------------------------------------
@dataclass
class TrailProblem:
    code: str
    message: str
    commit: Optional[str] = None


@dataclass
class TrailReport:
    line: str
    head: Optional[str]
    records: int = 0
    commits: int = 0
    problems: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_trail(gr: GitRepo, line: str, commit: Optional[str] = None) -> TrailReport:
    """Check a trail's whole history: shape, content-addressed ids, append-only growth,
    decisions that name an existing proposal, no proposal decided twice on one history,
    and a reflog that was never rewound. Approvals whose entry is not (yet) in the line
    are warnings: the ledger may simply not have been pulled."""
    trail = ReviewTrail(gr, line)
    repo = trail.repo
    head = commit if commit is not None else trail.head()
    report = TrailReport(line, head)
    if head is None:
        return report
    if repo.is_shallow:
        report.problems.append(TrailProblem("shallow", "shallow clone: the review trail cannot be vouched for"))
        return report
    obj = repo[head]
    if not isinstance(obj, pygit2.Commit):
        report.problems.append(TrailProblem("bad-ref", f"{trail.ref_name} points at a {obj.type_str}"))
        return report
    seen_blobs: dict = {}
    decisions_of: dict = {}  # pid -> [decision record ids] seen anywhere in the history
    for c in repo.walk(obj.id, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE):
        report.commits += 1
        cid = str(c.id)
        for item in c.tree:
            if item.name != RECORDS_DIR or item.type_str != "tree":
                report.problems.append(TrailProblem("foreign-file", f"unexpected '{item.name}' at the root", cid))
        new_tree = trail.records_tree(cid)
        bases = [trail.records_tree(str(p.id)) for p in c.parents] or [None]
        for base in bases:
            for path, old, new, _kind in diff_entry_trees(repo, base, new_tree):
                if new is None:
                    report.problems.append(TrailProblem("removed", f"record {path.replace('/', '')[:12]} was removed "
                                                        "(the trail must only grow)", cid))
                    continue
                if old is not None:
                    report.problems.append(TrailProblem("rewritten", f"record at {path} was rewritten", cid))
                    continue
                key = str(new)
                if key not in seen_blobs:
                    seen_blobs[key] = trail.check_blob(path, repo[new])
                rec, problem = seen_blobs[key]
                if problem:
                    report.problems.append(TrailProblem("bad-record", f"{RECORDS_DIR}/{path}: {problem}", cid))
                    continue
                if rec.type not in DECISIONS or len(bases) > 1:
                    continue
                pid = rec.doc["proposal"]
                if not trail.has(pid, new_tree):
                    report.problems.append(TrailProblem(
                        "orphan-decision", f"{rec.type} record {rec.short} names proposal {pid[:12]}, "
                                           "which the trail does not hold", cid))
                earlier = [d for d in decisions_of.get(pid, []) if d != rec.id and trail.has(d, base)]
                if earlier:
                    report.problems.append(TrailProblem(
                        "decided-twice", f"proposal {pid[:12]} was already decided ({earlier[0][:12]}) when "
                                         f"{rec.type} record {rec.short} was added", cid))
                decisions_of.setdefault(pid, []).append(rec.id)
    loaded = trail.load(head)
    report.records = len(loaded.records)
    _check_entries(gr, line, loaded.records, report)
    if commit is None:
        _check_reflog(trail, obj, report)
    return report


def _check_entries(gr: GitRepo, line: str, records: dict, report: TrailReport) -> None:
    store = LineStore(gr, line)
    tree = store.entries_tree(store.head())
    for rec in records.values():
        entry_id = rec.doc.get("entry")
        if entry_id and rec.type in ("approved", "duplicate", "direct"):
            if not _tree_has(tree, entry_id):
                report.warnings.append(f"{rec.type} record {rec.short} names entry {entry_id[:12]}, which line "
                                       f"{line!r} does not hold here (pull the ledger?)")


def _check_reflog(trail: ReviewTrail, head: pygit2.Commit, report: TrailReport) -> None:
    value = rewound_value(trail.repo, trail.ref_name, head.id)
    if value is not None:
        report.problems.append(TrailProblem(
            "rewound", f"{trail.ref_name} once pointed at {str(value)[:12]}, which the current head does not "
                       "contain: the review trail was rewound or rewritten"))


def list_trails(gr: GitRepo) -> list:
    """Names of the lines that have a review trail (valid line names only), sorted."""
    names = []
    for ref in gr.repo.references.iterator():
        if ref.name.startswith(REF_PREFIX) and LINE_RE.fullmatch(ref.name[len(REF_PREFIX):]):
            names.append(ref.name[len(REF_PREFIX):])
    return sorted(names)


def parse_since(text: str, now: Optional[datetime] = None) -> datetime:
    """`7d`, `24h`, `30m`, `2w`, a date (YYYY-MM-DD) or an ISO timestamp with offset."""
    from datetime import timedelta
    raw = text.strip()
    m = re.fullmatch(r"(\d+)\s*([mhdw])", raw)
    now = now or datetime.now(timezone.utc)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        return now - {"m": timedelta(minutes=n), "h": timedelta(hours=n), "d": timedelta(days=n),
                      "w": timedelta(weeks=n)}[unit]
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        return parse_ts(raw + "T00:00:00+00:00")
    try:
        return parse_ts(raw)
    except InputError:
        raise InputError(f"--since {text!r}: use 30m, 24h, 7d, 2w, a date (YYYY-MM-DD) or an ISO timestamp") \
            from None

