"""The namespaces of the ledger: every family of refs git-lifeline keeps, in one tuple.

Sync, verify and the hooks loop over `NAMESPACES`; a family that is not in it does not
exist for them, and one that is cannot be forgotten by any of them. To add a
namespace, define it here (see docs/ARCHITECTURE.md, "Storage"), give it its
verification rules in verify_rules.py, and a class over `FanoutLog` for what is
specific to it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from .fanout import Namespace
from .libgit2 import pygit2
from .names import NAME_RE
from .repo import GitRepo
from .trees import blob_data

if TYPE_CHECKING:  # annotations only: each parser imports its record type when it runs
    from ..core.entry import Entry
    from .records import Record


def _parse_entry(data: bytes) -> Entry:
    from ..core.entry import Entry

    return Entry.from_json(data)


def pick_blob(repo: pygit2.Repository, oids: list[pygit2.Oid]) -> str:
    """The blob every clone keeps when one entry id arrives with different non-hashed
    fields (FORMAT §4): the earliest ts, then the smallest blob id."""

    def key(oid: pygit2.Oid) -> tuple[datetime, str]:
        e = _parse_entry(blob_data(repo, oid))
        return (e.ts, str(oid))

    return str(min(oids, key=key))


def _parse_record(data: bytes) -> Record:
    from .records import Record

    return Record.from_bytes(data)


def names_in_use(gr: GitRepo) -> set[str]:
    """Every line name the repository's refs use, in every family (one pass over the refs):
    a review trail is named by its line, so `refs/lifeline-review/Main` takes the name
    `Main` as `refs/lifeline/Main` does."""
    out = set()
    for ref in gr.repo.references:
        found = namespace_of(ref)
        if found and NAME_RE.fullmatch(found[1]):
            out.add(found[1])
    return out


def tracking_names(gr: GitRepo, remote: str) -> set[str]:
    """Every line name a remote uses, in every family, as last fetched."""
    return {name for ns in NAMESPACES for name in ns.tracking_heads(gr, remote)}


LEDGER = Namespace(
    name="ledger",
    ref_prefix="refs/lifeline/",
    tree_dir="entries",
    tracking="lifeline",
    label="lifeline",
    lock_file="{name}.lock",
    noun="line",
    thing="ledger line",
    whole="ledger",
    item="entry",
    items="entries",
    push_prefix="",
    parse=_parse_entry,
    key=lambda e: e.id,
    proves=lambda e: e.verify(),
    pick=pick_blob,
    names_in_use=names_in_use,
)

REVIEW = Namespace(
    name="review",
    ref_prefix="refs/lifeline-review/",
    tree_dir="records",
    tracking="lifeline-review",
    label="lifeline-review",
    lock_file="review.{name}.lock",
    noun="review trail",
    thing="review trail",
    whole="review trail",
    item="record",
    items="records",
    push_prefix="review:",
    parse=_parse_record,
    key=lambda r: r.id,
    proves=lambda r: True,
    pick=None,  # a record's id is the hash of its bytes
    names_in_use=names_in_use,
)

NAMESPACES: tuple[Namespace, ...] = (LEDGER, REVIEW)


def namespace_of(ref: str) -> tuple[Namespace, str] | None:
    """(namespace, name) of a ref under one of our prefixes, else None."""
    for ns in NAMESPACES:
        if ref.startswith(ns.ref_prefix):
            return ns, ref[len(ns.ref_prefix) :]
    return None
