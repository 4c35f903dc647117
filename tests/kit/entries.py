"""Entries and ledgers as the tests build them: valid new entries in order, entries as a
stored blob would give them, a varied ledger-like mix, random valid entries for the property
tests, and two decisions whose ids share a prefix."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Optional, Union, cast

from git_lifeline.core.content_rules import MAX_SUMMARY_CHARS
from git_lifeline.core.entry import (
    KINDS,
    MAX_BLOB_BYTES,
    MAX_BODY_BYTES,
    MIN_PREFIX,
    Entry,
    compute_id,
    format_ts,
    new_entry,
)
from kit.home import AUTHOR

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

# the fields an entry's id hashes, in order
HASHED = ("kind", "author", "agent", "provider", "model", "summary", "body", "parents")
BASE_TS = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
ENTRY_PATH_RE = re.compile(r"entries/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{60})")
# a field of an entry as a test gives it (kind, summary, ts, parents, dedup_key, ...)
EntryField = Union[str, datetime, Sequence[str], bool, None]
# a field of a stored blob as a hand-made commit could hold it (any JSON value)
BlobValue = Union[str, int, float, bool, None, Sequence["BlobValue"], Mapping[str, "BlobValue"]]


def path_of(entry_id: str) -> str:
    """Where a line's tree keeps the entry `entry_id`."""
    return f"entries/{entry_id[:2]}/{entry_id[2:4]}/{entry_id[4:]}"


def stored_entry(**fields: EntryField) -> Entry:
    """An entry as a blob read back from git would give it: no write-time secret scan
    (to build what an old client or a hand-made commit could have stored)."""
    doc: dict[str, BlobValue] = dict(
        kind="note",
        author=AUTHOR,
        agent="human",
        provider="none",
        model="human",
        summary="Stored as is",
        body="Written by hand.",
        parents=[],
        dedup_key=None,
        ts=format_ts(BASE_TS),
    )
    for key, value in fields.items():
        doc[key] = format_ts(value) if isinstance(value, datetime) else value
    # a stored blob carries every key and its recorded id
    doc.setdefault("id", sealed_id(doc))
    return Entry.from_json(json.dumps(doc).encode("utf-8"))


def ts_at(i: int) -> datetime:
    return BASE_TS + timedelta(minutes=i)


COLLISION_LIMIT = 300_000  # birthday bound for 24 bits is ~5,000 tries; this never runs out


def find_prefix_collision() -> tuple[str, str, str]:
    """Two summaries whose decision ids (by AUTHOR, body "why") share their first MIN_PREFIX
    hex characters: (first summary, second summary, the shared prefix)."""
    seen: dict[str, str] = {}
    for i in range(COLLISION_LIMIT):
        summary = f"Collision probe {i}"
        prefix = compute_id("decision", AUTHOR, "human", "none", "human", summary, "why", [])[:MIN_PREFIX]
        if prefix in seen:
            return seen[prefix], summary, prefix
        seen[prefix] = summary
    raise AssertionError("no prefix collision found")


def make_entry(i: int = 0, **fields: EntryField) -> Entry:
    """A valid entry; `i` varies summary and ts so entries are distinct and ordered."""
    values = dict(
        kind="decision", author=AUTHOR, summary=f"Decision number {i}", body=f"Because reason {i}.", ts=ts_at(i)
    )
    values.update(fields)
    return new_entry(**values)  # type: ignore[arg-type]  # the test names the fields; new_entry checks them


def varied_entries(count: int = 40) -> list[Entry]:
    """A ledger-like mix: every kind, unicode, multi-line bodies, parents, agents."""
    out: list[Entry] = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        body = (
            f"Why {i}: the long reason — ünïcødé 漢字 🚀\nsecond line with `code`\n\n- a\n- b"
            if kind != "checkpoint"
            else f"thread: t{i % 3}\ngoal:\n  - finish part {i}\nnext:\n  - step {i}"
        )
        parents = [out[i - 1].id] if i and i % 4 == 0 else []
        agent = ("human", "none", "human") if i % 3 else ("coder", "anthropic", "claude")
        if kind == "correction" and out:
            parents = (
                [next(e.id for e in reversed(out) if e.kind == "decision")]
                if any(e.kind == "decision" for e in out)
                else parents
            )
        out.append(
            new_entry(
                kind=kind,
                author=AUTHOR,
                agent=agent[0],
                provider=agent[1],
                model=agent[2],
                summary=f"{kind.title()} item {i}: ça marche",
                body=body,
                parents=parents,
                ts=ts_at(i),
            )
        )
    return out


# Body lines that have broken markdown projections before: our own markers, fences,
# headings, front-matter rules and the seed's end sentinel.
TRICKY_LINES = (
    "---",
    "```",
    "````",
    "```text",
    "~~~",
    "### decision: not an entry",
    "## Heading",
    "- id: " + "a" * 64,
    "- ts: 2024-01-01T00:00:00.000000Z",
    "<!-- lifeline:end -->",
    "<!-- lifeline:tree none entries 0 -->",
    "<!-- git-lifeline projection v1 line main",
    "\r",
    "line with CRLF\r",
    "    indented code",
    "",
    "\t",
    " -->",
)


def entry_strategy() -> SearchStrategy[Entry]:
    from hypothesis import strategies as st

    line_chars = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
    one_line = st.text(line_chars, min_size=1, max_size=30).map(str.strip).filter(bool)
    body_chars = st.characters(blacklist_categories=("Cc", "Cs"), whitelist_characters="\t\r")
    body_line = st.one_of(st.sampled_from(TRICKY_LINES), st.text(body_chars, max_size=30))
    body = st.lists(body_line, max_size=6).map("\n".join)
    hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)

    @st.composite
    def entries(draw: st.DrawFn) -> Entry:
        kind = draw(st.sampled_from(KINDS))
        text = draw(body)
        if kind != "checkpoint" and not text.strip():
            text = "why: " + text
        return new_entry(
            kind=kind,
            author=draw(one_line),
            agent=draw(one_line),
            provider=draw(one_line),
            model=draw(one_line),
            summary=draw(one_line),
            body=text,
            parents=draw(st.lists(hex64, max_size=3, unique=True)),
            dedup_key=draw(st.none() | one_line),
            ts=draw(
                st.datetimes(
                    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(timezone.utc)
                )
            ),
        )

    return entries()


# ---- stored blobs, well-formed and not ----------------------------------------------------------
def sealed_id(doc: Mapping[str, BlobValue]) -> str:
    """The id a blob's content hashes to, whatever its fields hold (a hand-made blob may hold
    values of any type: the hash takes them as they are)."""
    kind, author, agent, provider, model, summary, body = cast("list[str]", [doc[k] for k in HASHED[:-1]])
    return compute_id(kind, author, agent, provider, model, summary, body, cast("list[str]", doc["parents"]))


def blob(doc: Mapping[str, BlobValue], *, reseal: bool = True) -> bytes:
    """A blob as a hand-made commit could hold it; `reseal` gives it the id its content hashes to."""
    doc = dict(doc)
    if reseal:
        doc["id"] = sealed_id(doc)
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()


def corpus(base: Mapping[str, BlobValue]) -> dict[str, tuple[str, bytes]]:
    """name -> (id its path names, blob bytes). Every blob but those named "valid..." is malformed
    or tampered. An empty body is valid in a stored blob (lifeline-context stores them; only a
    new write needs its why), so every reader must take it."""
    out: dict[str, tuple[str, bytes]] = {}

    def own_id(name: str) -> str:
        return compute_id("note", name, "", "", "", "", "", [])

    def add(name: str, data: bytes, entry_id: Optional[str] = None) -> None:
        out[name] = (entry_id or json.loads(data)["id"], data)

    def variant(name: str, reseal: bool = True, **changes: BlobValue) -> None:
        doc = {**base, "summary": f"{base['summary']} ({name})", "id": own_id(name), **changes}
        add(name, blob(doc, reseal=reseal))

    variant("valid")
    add("invalid-json", b'{"kind": "decision", ', own_id("invalid-json"))
    add("not-an-object", b"[1, 2, 3]\n", own_id("not-an-object"))
    add("empty", b"", own_id("empty"))
    add("nested-too-deeply", b"[" * 100_000, own_id("nested-too-deeply"))
    add("utf16", blob({**base, "summary": "UTF-16"}).decode().encode("utf-16"))
    add("bom", b"\xef\xbb\xbf" + blob({**base, "summary": "BOM"}), own_id("bom"))
    missing = blob({**base, "summary": "Missing key"})
    add("missing-key", json.dumps({k: v for k, v in json.loads(missing).items() if k != "dedup_key"}).encode())
    variant("extra-key", extra="surprise")
    repeated = blob({**base, "summary": "Repeated key"})
    add("repeated-key", repeated.replace(b'"kind":"decision"', b'"kind":"decision","kind":"decision"'))
    variant("unknown-kind", kind="gossip")
    add("id-not-hex", blob({**base, "summary": "Id not hex", "id": "Z" * 64}, reseal=False), own_id("id-not-hex"))
    variant("tampered", reseal=False, id="ab" * 32)
    variant("ts-with-offset", ts="2024-05-01T12:00:00+00:00")
    variant("ts-before-1970", ts="1969-12-31T23:59:59.000000Z")
    variant("ts-not-a-date", ts="2024-13-01T00:00:00.000000Z")
    variant("ts-not-text", ts=1714560000)
    variant("body-not-stripped", body="  Reasons.  ")
    parents = cast("list[str]", base["parents"])
    variant("parents-unsorted", parents=sorted(parents, reverse=True))
    variant("parents-not-a-list", reseal=False, parents=parents[0])
    variant("summary-line-break", summary="Two\nlines")
    variant("summary-not-text", reseal=False, summary=42)
    variant("summary-too-long", summary="x" * (MAX_SUMMARY_CHARS + 1))
    variant("author-control-char", author="Bell \x07 <b@example.com>")
    variant("valid-body-empty", body="")
    variant("body-too-large", body="y" * (MAX_BODY_BYTES + 1))
    variant("dedup-key-not-text", dedup_key=7)
    variant("parent-not-hex", parents=["not-an-id"])
    variant("oversized", body="z" * (MAX_BLOB_BYTES + 1))
    return out
