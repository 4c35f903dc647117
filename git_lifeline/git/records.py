"""Review trail records, the pure half: what a record is, how it is written and read,
and what proposals and their decisions are (no git here; trails.py stores them).

docs/FORMAT.md, "Review trail", is the normative description. Each record is one blob
of canonical JSON whose id is the sha256 of its bytes, so a record cannot change
without changing its name.

Records: ``proposed`` (an entry waiting for a human), ``approved`` (naming the entry it
became), ``duplicate`` (the entry was already in the line), ``rejected`` (with a why),
and ``direct`` (an audit record of an agent's policy-direct write). A decision is
final: once a proposal is decided, the writer refuses a second decision under the
same compare-and-swap that appends it, so a reject can never overwrite an approval.
Concurrent decisions made on two machines meet only at a merge; then an approval
wins (its entry is in the ledger), and the other decision is shown as a conflict.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Optional

from ..core.content_rules import HEX64, MAX_FIELD_CHARS
from ..core.entry import (
    MAX_BLOB_BYTES,
    Entry,
    abbrev,
    entry_order_key,
    format_ts,
    parse_ts,
    stored_entry,
    utcnow,
)
from ..core.json_input import JSON, JSONInputError, JSONObject, read_json_object
from ..errors import InputError

FORMAT_VERSION = 1
MIN_PID_PREFIX = 4
TYPES = ("proposed", "approved", "duplicate", "rejected", "direct")
DECISIONS = ("approved", "duplicate", "rejected")
VIAS = ("mcp", "cli", "http")  # http: `git lifeline mcp --http`, the hosted agents' door
MAX_WHY_CHARS = 2000
# No valid record is larger: a proposal carries one entry's content (at most a blob's
# size), and every other record field together stays far under 16 KiB.
MAX_RECORD_BYTES = MAX_BLOB_BYTES + 16 * 1024
CONTENT_KEYS = ("agent", "author", "body", "kind", "model", "parents", "provider", "summary")
_COMMON = ("by", "line", "ts", "type", "v")
KEYS = {
    "proposed": _COMMON + ("content", "via"),
    "approved": _COMMON + ("entry", "proposal"),
    "duplicate": _COMMON + ("entry", "proposal"),
    "rejected": _COMMON + ("proposal", "why"),
    "direct": _COMMON + ("agent", "entry", "kind", "model", "provider", "rule", "summary", "via"),
}


class ReviewError(InputError):
    """A review action that cannot be done (unknown proposal, already decided...)."""


# ---- records ----------------------------------------------------------------
def canonical_bytes(doc: Mapping[str, JSON]) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def _single_line(value: object, name: str, limit: int = MAX_FIELD_CHARS) -> Optional[str]:
    if not isinstance(value, str) or not value.strip():
        return f"{name} must be a non-empty string"
    if value != value.strip() or any(ch in value for ch in "\r\n") or len(value) > limit:
        return f"{name} must be one line of at most {limit} characters without surrounding spaces"
    return None


def doc_problems(doc: object) -> list[str]:
    """Every rule a record document must satisfy (empty when valid)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    try:
        canonical_bytes(doc)
    except UnicodeEncodeError:  # JSON can spell a lone surrogate (\ud800); UTF-8 cannot hold it
        return ["holds text that is not valid Unicode (an unpaired surrogate)"]
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
            why = _content_problem(content)
            if why is not None:
                problems.append(f"content: {why}")
    return problems


def _content_problem(content: dict[str, Any]) -> Optional[str]:
    """Why a proposal's content (untrusted JSON) is no valid entry, or None."""
    try:
        stored_entry(content, content["body"], content["parents"])  # a proposal is an agent's
    except InputError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Content:
    """A proposal's entry as filed: what it becomes once approved (its ts is the approval's)."""

    agent: str
    author: str
    body: str
    kind: str
    model: str
    parents: tuple[str, ...]
    provider: str
    summary: str

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Content:
        """From a record's `content` object, already validated (doc_problems)."""
        return cls(
            agent=doc["agent"],
            author=doc["author"],
            body=doc["body"],
            kind=doc["kind"],
            model=doc["model"],
            parents=tuple(doc["parents"]),
            provider=doc["provider"],
            summary=doc["summary"],
        )

    def to_doc(self) -> JSONObject:
        """The `content` object as stored (FORMAT §11; keys in canonical order)."""
        return {
            "agent": self.agent,
            "author": self.author,
            "body": self.body,
            "kind": self.kind,
            "model": self.model,
            "parents": list(self.parents),
            "provider": self.provider,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class Record:
    """One immutable review record; `id` is the sha256 of its canonical JSON bytes (`doc`).
    Its fields are read from `doc` once it is valid (from_bytes, make_*): `via` and `content`
    belong to a proposal, `proposal` to a decision, `entry` to an approval, a duplicate or a
    direct write, `why` to a rejection, `rule`..`model` to a direct write."""

    id: str
    doc: dict[str, Any]
    type: str
    line: str
    by: str
    ts: datetime
    via: Optional[str] = None
    content: Optional[Content] = None
    proposal: Optional[str] = None
    entry: Optional[str] = None
    why: Optional[str] = None
    rule: Optional[str] = None
    kind: Optional[str] = None
    summary: Optional[str] = None
    agent: Optional[str] = None
    provider: Optional[str] = None
    model: Optional[str] = None

    @classmethod
    def from_doc(cls, record_id: str, doc: dict[str, Any]) -> Record:
        """The record of a document doc_problems found valid."""
        raw = doc.get("content")
        return cls(
            id=record_id,
            doc=doc,
            type=doc["type"],
            line=doc["line"],
            by=doc["by"],
            ts=parse_ts(doc["ts"]),
            via=doc.get("via"),
            content=Content.from_doc(raw) if raw is not None else None,
            proposal=doc.get("proposal"),
            entry=doc.get("entry"),
            why=doc.get("why"),
            rule=doc.get("rule"),
            kind=doc.get("kind"),
            summary=doc.get("summary"),
            agent=doc.get("agent"),
            provider=doc.get("provider"),
            model=doc.get("model"),
        )

    @property
    def short(self) -> str:
        return abbrev(self.id)

    def to_json(self) -> bytes:
        return canonical_bytes(self.doc)

    @classmethod
    def from_bytes(cls, data: bytes) -> Record:
        """A record read from a blob: the one parse, every rule checked (a remote's
        records are untrusted)."""
        if len(data) > MAX_RECORD_BYTES:  # before the JSON parser sees it
            raise InputError(f"larger than any record can be ({len(data)} bytes; at most {MAX_RECORD_BYTES})")
        try:
            doc = read_json_object(data, MAX_RECORD_BYTES)
        except JSONInputError as exc:
            raise InputError(str(exc)) from None
        problems = doc_problems(doc)
        if problems:
            raise InputError("; ".join(problems))
        if canonical_bytes(doc) != data:
            raise InputError("not in canonical form (sorted keys, compact, one trailing newline)")
        return cls.from_doc(hashlib.sha256(data).hexdigest(), doc)


def _sealed(type_: str, line: str, by: str, ts: Optional[datetime], fields: JSONObject) -> Record:
    """A new record of `type_` with its own `fields`, checked like one read back."""
    doc = {"v": FORMAT_VERSION, "type": type_, "line": line, "by": by, "ts": format_ts(ts or utcnow()), **fields}
    problems = doc_problems(doc)
    if problems:
        raise InputError("; ".join(problems))
    why = doc.get("why")
    if isinstance(why, str):  # free text a human types into the trail (a proposal's
        from ..core.secrets import refusal, scan  # content is an entry: the model's gate already ran)

        findings = scan(why, "why")
        if findings:
            raise refusal(findings, "the rejection's why")
    data = canonical_bytes(doc)
    return Record.from_doc(hashlib.sha256(data).hexdigest(), doc)


def make_proposed(line: str, by: str, ts: datetime, content: Content, via: str) -> Record:
    return _sealed("proposed", line, by, ts, {"content": content.to_doc(), "via": via})


def make_direct(line: str, by: str, e: Entry, rule: str, via: str) -> Record:
    """The audit record of an agent's policy-direct write of `e`."""
    return _sealed(
        "direct",
        line,
        by,
        None,
        {
            "entry": e.id,
            "kind": e.kind,
            "summary": e.summary,
            "agent": e.agent,
            "provider": e.provider,
            "model": e.model,
            "rule": rule,
            "via": via,
        },
    )


def make_decision(
    type_: str, line: str, by: str, proposal: str, entry: Optional[str] = None, why: Optional[str] = None
) -> Record:
    """An approval or a duplicate (naming `entry`), or a rejection (with `why`)."""
    fields: JSONObject = {"proposal": proposal}
    if type_ == "rejected":
        fields["why"] = why
    else:
        fields["entry"] = entry
    return _sealed(type_, line, by, None, fields)


def check_record_blob(line: str, path: str, data: bytes) -> tuple[Optional[Record], Optional[str]]:
    """(record, None) when `data` is a valid record of `line` stored at its own path
    (`ab/cd/<rest>`, relative to records/), else (None, why)."""
    try:
        rec = Record.from_bytes(data)
    except InputError as exc:
        return None, f"unreadable record: {exc}"
    if rec.id != path.replace("/", ""):
        return None, f"content hashes to {abbrev(rec.id)}, not to its path (tampered)"
    if rec.line != line:
        return None, f"record of line {rec.line!r} in the trail of line {line!r}"
    return rec, None


def entry_content(e: Entry) -> Content:
    """What a proposal of `e` files."""
    return Content(e.agent, e.author, e.body, e.kind, e.model, tuple(e.parents), e.provider, e.summary)


# ---- proposals and their status -------------------------------------------------
@dataclass
class Proposal:
    record: Record
    decisions: list[Record] = field(default_factory=list)  # decision records, (ts, id) order

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def short(self) -> str:
        return self.record.short

    @property
    def content(self) -> Content:
        assert self.record.content is not None, "a proposal is a proposed record"
        return self.record.content

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
    def conflicts(self) -> list[Record]:
        d = self.decision
        return [x for x in self.decisions if x is not d]


def build_proposals(records: dict[str, Record]) -> dict[str, Proposal]:
    """pid -> Proposal, with the decisions that name it attached."""
    proposals = {rid: Proposal(r) for rid, r in records.items() if r.type == "proposed"}
    for r in sorted(records.values(), key=entry_order_key):
        if r.type in DECISIONS and r.proposal in proposals:
            proposals[r.proposal].decisions.append(r)
    return proposals


def trailers(rec: Record) -> str:
    return f"Lifeline-Review: {rec.id}\nLifeline-Review-Type: {rec.type}\n"


def already_decided(p: Proposal) -> str:
    d = p.decision
    assert d is not None, "only a decided proposal was already decided"
    when = f"{d.ts:%Y-%m-%d %H:%M:%S}"
    entry = d.entry or ""
    if d.type == "approved":
        return (
            f"proposal {p.short} was already approved as entry {abbrev(entry)} by {d.by} on {when}; "
            "an approval is final (record a correction to change the ledger)"
        )
    if d.type == "duplicate":
        return f"proposal {p.short} was already closed as a duplicate of entry {abbrev(entry)} by {d.by} on {when}"
    return (
        f"proposal {p.short} was already rejected by {d.by} on {when}; file it again with "
        "git lifeline propose to reconsider it"
    )


def parse_since(text: str, now: Optional[datetime] = None) -> datetime:
    """Any date form of core/dates.py (`7d`, `2 weeks ago`, `yesterday`, a date, an ISO time):
    `--since` means the same in audit as in list and stale."""
    from ..core.dates import parse_when

    return parse_when(text, now, what="--since").start
