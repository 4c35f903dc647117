"""The entry: the ledger's atomic, immutable, content-addressed unit, and every rule it obeys.

One type, one parse, one builder, standard library only:

* `Entry`, a frozen dataclass whose constructor checks every content rule and the
  canonical form (body stripped, parents sorted, ts in UTC): an Entry that exists in
  memory is valid;
* `Entry.from_json` (`parse_entry`), the only way a stored blob becomes an Entry:
  its size before anything else, then UTF-8, JSON, the exact key set, the ts format,
  and the constructor's rules. verify, the cache, sync and the store all read blobs
  through it, so they cannot disagree about what is malformed;
* `Entry.new` (`new_entry`), the only way new content becomes an Entry: it
  normalises, computes the id, runs every rule, then refuses credentials before any
  object can be written.

The id is the sha256 of the canonical form (`canonical_form`), identical to
lifeline-context 0.6.x, so a ledger moves between the two tools with every id intact.
pydantic is not imported here: the CLI's paths stay close to a bare interpreter. Fields
from outside (an imported record, a tool's arguments) go through `Entry.new` like any
other: it checks every field's type and names the first bad one before anything is built.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol, TypeVar, Union

from ..errors import InputError
from .content_rules import (
    HEX64,
    MAX_BODY_BYTES,
    Attributed,
    content_problems,
    missing_why,
)
from .json_input import JSONInputError, JSONValue, read_json

KINDS: tuple[str, ...] = (
    "bootstrap",
    "decision",
    "feature",
    "fix",
    "incident",
    "milestone",
    "release",
    "note",
    "open",
    "correction",
    "service",
    "api",
    "test",
    "requirement",
    "debt",
    "relation",
    "checkpoint",
)
_KIND_SET = frozenset(KINDS)
MIN_PREFIX = 6  # the shortest id prefix a command accepts

# No valid blob is larger: JSON at most doubles the body (an escaped quote, backslash
# or line break), and every other field together stays far under 16 KiB. A larger
# blob is refused before the JSON parser sees it.
MAX_BLOB_BYTES = 2 * MAX_BODY_BYTES + 16 * 1024

# A commit's time is unsigned epoch seconds and the commit carries the entry's ts,
# so nothing earlier can be stored (and a year < 1000 would not even render as ISO-8601).
MIN_TS = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ZERO = timedelta(0)


def _clip(value: object) -> str:
    """repr() of a value for a message, cut short: a malformed blob may hold anything."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class EntryError(InputError, ValueError):
    """The fields or the blob are not a valid entry; the message says what is wrong.

    A ValueError too: readers that treat any malformed value alike (the cache) catch it
    without knowing this module."""


class NaiveTimestamp(InputError):
    """A timestamp without a UTC offset: refused, not guessed (import's --assume-utc
    says the source wrote UTC)."""


# ---- time ---------------------------------------------------------------------------
def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def parse_ts(text: str, assume_utc: bool = False) -> datetime:
    """An ISO-8601 timestamp as an aware UTC datetime. One without a UTC offset is
    refused (NaiveTimestamp) unless `assume_utc` says the source wrote UTC."""
    if not isinstance(text, str):
        raise InputError(f"invalid timestamp {text!r}: expected ISO-8601 text with a UTC offset")
    raw = text.strip()
    if raw.endswith("Z"):
        raw = raw[:-1] + "+00:00"
    try:
        ts = datetime.fromisoformat(raw)
    except ValueError:
        raise InputError(f"invalid timestamp {text!r}: expected ISO-8601 with a UTC offset") from None
    if ts.tzinfo is None:
        if not assume_utc:
            raise NaiveTimestamp(f"invalid timestamp {text!r}: it has no UTC offset")
        ts = ts.replace(tzinfo=timezone.utc)
    try:
        return ts.astimezone(timezone.utc)
    except OverflowError:
        raise InputError(f"invalid timestamp {text!r}: out of range in UTC") from None


def format_ts(ts: datetime) -> str:
    """A blob's ts, %Y-%m-%dT%H:%M:%S.%fZ in UTC, via isoformat: ~15x faster than strftime
    on every blob, and always four year digits."""
    text = ts.astimezone(timezone.utc).isoformat(timespec="microseconds")
    return text[:-6] + "Z"


# ---- the canonical form and the id ---------------------------------------------------
class Ordered(Protocol):
    """Anything with a timestamp and an id: an entry, a review record, a cache row."""

    @property
    def ts(self) -> datetime: ...

    @property
    def id(self) -> str: ...


class Folded(Attributed, Protocol):
    """What `Fold.add` reads of an entry given its key and header: an Entry, or a cache's
    slim record (views/cache_rows.Slim, which keeps no body): core/truth.py."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...


def entry_order_key(e: Ordered) -> tuple[datetime, str]:
    """The ledger's order: by `ts`, ties broken by id. Every list of entries or records
    kept "in (ts, id) order" is sorted by this key."""
    return (e.ts, e.id)


T = TypeVar("T")


def sort_in_order(items: list[T], ts: Callable[[T], str], ident: Callable[[T], str]) -> None:
    """Sort `items` in place in entry_order_key's order where the ts is its stored text (a
    blob's fixed-width UTC form sorts as the time does): by id, then stably by ts. Two
    sorts on text keys take a third of the time of one sort on (ts, id) tuples."""
    items.sort(key=ident)
    items.sort(key=ts)


def canonical_form(
    kind: str, author: str, agent: str, provider: str, model: str, summary: str, body: str, parents: Iterable[str]
) -> bytes:
    """The bytes that are hashed: `v2\\n` then `<utf8 length>:<value>\\n` per field.

    The explicit length makes every field boundary unambiguous (a newline inside
    a value cannot shift content into the next field); parents are sorted so the
    id does not depend on the order they were listed in.
    """
    body = body.strip()
    tail = "".join([f"{len(p.encode('utf-8'))}:{p}\n" for p in sorted(parents)])
    if f"{kind}{author}{agent}{provider}{model}{summary}{body}".isascii():
        # one character is one UTF-8 byte: verify hashes every entry, and one string built
        # in one step costs ~40% less than a length encoded and a string joined per field
        return (
            f"v2\n{len(kind)}:{kind}\n{len(author)}:{author}\n{len(agent)}:{agent}\n{len(provider)}:{provider}\n"
            f"{len(model)}:{model}\n{len(summary)}:{summary}\n{len(body)}:{body}\n{tail}"
        ).encode("utf-8")
    out = ["v2\n"]
    for value in (kind, author, agent, provider, model, summary, body):
        out.append(f"{len(value.encode('utf-8'))}:{value}\n")
    out.append(tail)
    return "".join(out).encode("utf-8")


# How many hex digits of an entry, proposal or commit id a human is shown, everywhere (the
# context, list, status, messages, MCP text); JSON and the ledger keep the full id.
ABBREV_HEX = 8


def abbrev(full_id: str) -> str:
    """The one abbreviation of an id shown to a human."""
    return full_id[:ABBREV_HEX]


def compute_id(
    kind: str, author: str, agent: str, provider: str, model: str, summary: str, body: str, parents: Iterable[str]
) -> str:
    return hashlib.sha256(canonical_form(kind, author, agent, provider, model, summary, body, parents)).hexdigest()


# ---- the entry ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Entry:
    """One immutable record of the project's reasoning. Constructing one checks every
    rule but the secret scan (new content: `Entry.new`; a stored blob: `from_json`)."""

    id: str
    ts: datetime
    kind: str
    author: str
    agent: str
    provider: str
    model: str
    summary: str
    body: str
    parents: list[str]
    dedup_key: Optional[str] = None

    def __post_init__(self) -> None:
        why = _shape_problem(self)
        if why is None:
            why = "; ".join(content_problems(self)) or None
        if why is not None:
            raise EntryError(why)

    def __hash__(self) -> int:
        # equal entries share their id; `parents` (a list) cannot be hashed
        return hash(self.id)

    def compute_id(self) -> str:
        return compute_id(
            self.kind, self.author, self.agent, self.provider, self.model, self.summary, self.body, self.parents
        )

    def verify(self) -> bool:
        """True when the stored id still matches the content."""
        return self.id == self.compute_id()

    @property
    def short(self) -> str:
        return abbrev(self.id)

    def to_json(self) -> bytes:
        """Canonical JSON blob: sorted keys, UTF-8, compact, newline-terminated."""
        return encode_blob(self)

    @classmethod
    def from_json(cls, data: Union[bytes, str]) -> Entry:
        """A stored blob as an Entry, held to every rule; raises EntryError.

        The secret scan is not applied (verify reports credentials in stored entries) and
        the id is not compared with the content (`verify()` does: verify calls a
        mismatch tampering, not a malformed blob)."""
        return _parse(data)

    @classmethod
    def new(
        cls,
        *,
        kind: str,
        summary: str,
        author: str,
        body: str = "",
        agent: str = "human",
        provider: str = "none",
        model: str = "human",
        parents: Iterable[str] = (),
        dedup_key: Optional[str] = None,
        ts: Optional[datetime] = None,
        id: Optional[str] = None,
        require_why: bool = True,
        honour_override: bool = True,
    ) -> Entry:
        """New content as an Entry under every write rule, the secret scan included;
        raises EntryError (or SecretError) before anything can be written.

        The body is stripped and the parents sorted (the id hashes them so: one
        representation per id); `ts` defaults to now and is stored in UTC. `id` is the
        id a source recorded (a projection's): kept as given, so `verify()` can tell a
        record that does not match it; None computes it. `require_why` False takes an
        empty body of any kind: content another tool stored (an import), not a new write.
        `honour_override` False scans whatever the body's header says (an import, a
        proposal): an `allow-secret:` override counts only where a human's flag wrote it."""
        return _build(
            kind=kind,
            summary=summary,
            author=author,
            body=body,
            agent=agent,
            provider=provider,
            model=model,
            parents=parents,
            dedup_key=dedup_key,
            ts=ts,
            id=id,
            require_why=require_why,
            honour_override=honour_override,
        )


_STAND_IN_ID = "0" * 64
_TEXT_FIELDS = ("id", "kind", "author", "agent", "provider", "model", "summary", "body")


def _shape_problem(e: Entry) -> Optional[str]:
    """Types, kind, id, ts and canonical form: what must hold before the content rules run."""
    if not (
        type(e.id) is str
        and type(e.kind) is str
        and type(e.author) is str
        and type(e.agent) is str
        and type(e.provider) is str
        and type(e.model) is str
        and type(e.summary) is str
        and type(e.body) is str
    ):
        for name in _TEXT_FIELDS:  # the slow path names the field
            if not isinstance(getattr(e, name), str):
                return f"{name}: must be text"
    if e.dedup_key is not None and not isinstance(e.dedup_key, str):
        return "dedup_key: must be text or null"
    if not isinstance(e.parents, list) or not all(isinstance(p, str) for p in e.parents):
        return "parents: must be a list of ids"
    if e.kind not in _KIND_SET:
        return f"unknown kind {_clip(e.kind)}; known kinds: {', '.join(KINDS)}"
    if not HEX64.fullmatch(e.id):
        return "id must be 64 lowercase hex characters"
    if not isinstance(e.ts, datetime):
        return "ts: must be a datetime"
    offset = e.ts.utcoffset()
    if offset is None:
        return "ts must carry a UTC offset"
    if offset != _ZERO:
        return "ts must be in UTC"
    if e.ts < MIN_TS:
        return "ts is before 1970-01-01T00:00:00Z, which a git commit time cannot carry"
    if e.body != e.body.strip() or e.parents != sorted(e.parents):
        return "not in canonical form (body not stripped or parents not sorted)"
    return None


def _build(
    *,
    kind: Any,
    summary: Any,
    author: Any,
    body: Any,
    agent: Any,
    provider: Any,
    model: Any,
    parents: Any,
    dedup_key: Any,
    ts: Any,
    id: Any,
    require_why: bool = True,
    honour_override: bool = True,
) -> Entry:
    for name, value in (
        ("kind", kind),
        ("summary", summary),
        ("author", author),
        ("body", body),
        ("agent", agent),
        ("provider", provider),
        ("model", model),
    ):
        if not isinstance(value, str):
            raise EntryError(f"{name}: must be text")
    if dedup_key is not None and not isinstance(dedup_key, str):
        raise EntryError("dedup_key: must be text")
    if id is not None and not isinstance(id, str):
        raise EntryError("id: must be text")
    if not isinstance(parents, (list, tuple)) or not all(isinstance(p, str) for p in parents):
        raise EntryError("parents: must be a list of ids")
    if ts is None:
        ts = utcnow()
    elif not isinstance(ts, datetime):
        raise EntryError("ts: must be a datetime")
    elif ts.tzinfo is None:
        raise EntryError("ts must carry a UTC offset")
    try:
        ts = ts.astimezone(timezone.utc)
    except OverflowError:
        raise EntryError("ts is out of the range a git commit time can carry") from None
    body = body.strip()
    parents = sorted(parents)
    try:
        entry_id = id or compute_id(kind, author, agent, provider, model, summary, body, parents)
    except UnicodeEncodeError:
        # A lone surrogate cannot be hashed; a stand-in id lets the rules name the field that holds it.
        entry_id = _STAND_IN_ID
    e = Entry(entry_id, ts, kind, author, agent, provider, model, summary, body, parents, dedup_key)
    why = missing_why(kind, body) if require_why else None
    if why is not None:
        raise EntryError(why)
    # Imported here: the scan's patterns are compiled on first use, and read paths never need them.
    from .secrets import refuse_credentials

    refuse_credentials(e, honour_override)
    return e


# ---- the stored blob ------------------------------------------------------------------
# One encoder for every blob: json.dumps with non-default options builds a new one per call.
_BLOB_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def encode_blob(e: Entry) -> bytes:
    """The canonical JSON blob of an entry (docs/FORMAT.md §3)."""
    doc = {
        "agent": e.agent,
        "author": e.author,
        "body": e.body,
        "dedup_key": e.dedup_key,
        "id": e.id,
        "kind": e.kind,
        "model": e.model,
        "parents": list(e.parents),
        "provider": e.provider,
        "summary": e.summary,
        "ts": format_ts(e.ts),
    }
    return (_BLOB_ENCODER.encode(doc) + "\n").encode("utf-8")


_BLOB_KEYS = frozenset(
    {"agent", "author", "body", "dedup_key", "id", "kind", "model", "parents", "provider", "summary", "ts"}
)
_BLOB_TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, JSONValue]]) -> dict[str, JSONValue]:
    # A repeated key would let two readers see two entries in one blob (json keeps the last).
    doc = dict(pairs)
    if len(doc) != len(pairs):
        raise _DuplicateKey()
    return doc


# One decoder for every blob: json.loads with options builds a new one per call.
_BLOB_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _blob_size(data: Union[bytes, str]) -> int:
    if isinstance(data, bytes):
        return len(data)
    if len(data) > MAX_BLOB_BYTES or len(data) * 4 <= MAX_BLOB_BYTES:
        return len(data)  # already too large, or small enough whatever it encodes to
    return len(data.encode("utf-8", "surrogatepass"))


def _parse(data: Union[bytes, str]) -> Entry:
    if not isinstance(data, (bytes, str)):
        raise EntryError("not a blob")
    size = _blob_size(data)
    if size > MAX_BLOB_BYTES:
        raise EntryError(f"the blob is larger than any entry can be ({size} bytes; at most {MAX_BLOB_BYTES})")
    try:
        doc = read_json(data, MAX_BLOB_BYTES, _BLOB_DECODER)
    except JSONInputError as exc:
        raise EntryError(str(exc)) from None
    except _DuplicateKey:
        raise EntryError("a key is given twice") from None
    if not isinstance(doc, dict):
        raise EntryError("not a JSON object")
    keys = doc.keys()
    if keys != _BLOB_KEYS:
        missing, extra = sorted(_BLOB_KEYS - keys), sorted(keys - _BLOB_KEYS)
        raise EntryError(
            "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else [])
                + ([f"unexpected {', '.join(extra)}"] if extra else [])
            )
        )
    text = doc["ts"]
    if not isinstance(text, str) or not _BLOB_TS.fullmatch(text):
        raise EntryError(f"invalid timestamp {_clip(text)}: a blob stores YYYY-MM-DDTHH:MM:SS.ffffffZ")
    try:
        ts = datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)
    except ValueError:
        raise EntryError(f"invalid timestamp {text!r}: not a date and time") from None
    return Entry(
        doc["id"],
        ts,
        doc["kind"],
        doc["author"],
        doc["agent"],
        doc["provider"],
        doc["model"],
        doc["summary"],
        doc["body"],
        doc["parents"],
        doc["dedup_key"],
    )


parse_entry = Entry.from_json
new_entry = Entry.new


def stored_entry(
    fields: Mapping[str, Any],
    body: str,
    parents: Iterable[str],
    *,
    id: Optional[str] = None,
    ts: Optional[datetime] = None,
    dedup_key: Optional[str] = None,
    require_why: bool = True,
) -> Entry:
    """An entry from the fields another place stored: a projection's lines, a proposal's
    content. The values are untrusted (any JSON type): every write rule checks them, and
    the body's header never overrides the secret scan (only a human's flag does)."""
    return new_entry(
        kind=fields["kind"],
        summary=fields["summary"],
        author=fields["author"],
        agent=fields["agent"],
        provider=fields["provider"],
        model=fields["model"],
        body=body,
        parents=parents,
        id=id,
        ts=ts,
        dedup_key=dedup_key,
        require_why=require_why,
        honour_override=False,
    )
