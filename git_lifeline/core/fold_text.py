"""A Fold's stored form (core/truth.py `Fold.to_json` / `from_json`; `text_of` / `read`
are what the cache stores and reads).

Every id is written once: `ids` is the sorted table of the ids the fold holds (64-hex ids
packed as their bytes in base64), and everywhere else an id is its index in that table,
as a number or, for an object's key, as text. Spelled out at each mention, a 100k-entry
ledger's fold was 27 MB of text; this way it is ~10 MB. Dicts keep their order; thread
keys, names and broken ids stay text. Equal folds give equal docs.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Callable, Iterable, Iterator, Optional, Protocol, TypeVar, Union

from .json_input import read_json_object
from .supersession import Derived


class Stored(Protocol):
    """What of a Fold (core/truth.py) its stored form holds."""

    count: int
    last: Optional[list[str]]
    recent: list[str]
    recent_meta: dict
    decisions: list[str]
    corrections: list
    opens: list[str]
    bootstraps: list[str]
    pins: list[list[str]]
    checkpoints: list[list[str]]
    threads: dict[str, list[str]]
    keys: dict[str, str]
    links: dict[str, list[str]]
    contributors: dict[str, int]
    kinds: dict[str, int]
    broken: list[str]
    facts: dict
    touched: dict[str, str]
    agent_touched: dict[str, list[list[str]]]
    version: int
    _derived: Optional[Derived]

    @property
    def derived(self) -> Derived: ...


F = TypeVar("F", bound=Stored)
F_co = TypeVar("F_co", covariant=True)


class Loads(Protocol[F_co]):
    """A class whose `from_json` makes one of it from a stored doc (the Fold)."""

    def from_json(self, doc: dict) -> F_co: ...


V = TypeVar("V")
_HEX = re.compile(r"[0-9a-f]*")
_COMPACT = json.JSONEncoder(separators=(",", ":"))  # one encoder for every section


def text_of(f: Stored) -> str:
    """A fold's doc as compact JSON text, made a section at a time: the whole doc is never
    held beside its text."""
    return "{" + ",".join(f"{_COMPACT.encode(key)}:{_COMPACT.encode(value)}" for key, value in sections(f)) + "}"


def sections(f: Stored) -> Iterator[tuple[str, object]]:
    """(key, value) of a fold's JSON doc, each value made when asked for."""
    derived = f.derived
    table = sorted(ids_held(f, derived))
    index = {i: n for n, i in enumerate(table)}
    at = index.__getitem__

    def many(ids: Iterable[str]) -> list:
        return [index[i] for i in ids]

    def keyed(d: dict) -> dict:  # a JSON object's keys are text: the index as text
        return {str(index[i]): v for i, v in d.items()}

    yield "version", f.version
    yield "ids", packed(table)
    yield "count", f.count
    yield "last", None if f.last is None else [f.last[0], at(f.last[1])]
    yield "recent", many(f.recent)
    yield "recent_meta", {str(at(i)): [ts, many(parents)] for i, (ts, parents) in f.recent_meta.items()}
    yield "decisions", many(f.decisions)
    yield "corrections", [[at(c), many(parents), revert] for c, parents, revert in f.corrections]
    yield "opens", many(f.opens)
    yield "bootstraps", many(f.bootstraps)
    yield "pins", [[at(note), at(target)] for note, target in f.pins]
    yield "checkpoints", [[at(c), thread] for c, thread in f.checkpoints]
    yield "threads", {thread: many(ids) for thread, ids in f.threads.items()}
    yield "keys", keyed(f.keys)
    yield "links", {str(at(i)): many(parents) for i, parents in f.links.items()}
    yield "contributors", f.contributors
    yield "kinds", f.kinds
    yield "broken", f.broken
    yield "facts", keyed(f.facts)
    yield "touched", keyed(f.touched)
    yield (
        "agent_touched",
        {str(at(target)): [[ts, at(by)] for ts, by in rows] for target, rows in f.agent_touched.items()},
    )
    yield "derived", derived.to_json(at)


def ids_held(f: Stored, derived: Derived) -> set[str]:
    """Every id the fold (and its derived truth) names."""
    ids = set(f.recent)
    for group in (
        f.decisions,
        f.opens,
        f.bootstraps,
        f.keys,
        f.links,
        f.facts,
        f.touched,
        f.agent_touched,
        f.recent_meta,
        derived.superseded,
        derived.live,
    ):
        ids.update(group)
    for parents in f.links.values():
        ids.update(parents)
    for _, parents in f.recent_meta.values():
        ids.update(parents)
    for c, parents, _ in f.corrections:
        ids.add(c)
        ids.update(parents)
    for pair in f.pins:
        ids.update(pair)
    ids.update(c for c, _ in f.checkpoints)
    for members in f.threads.values():
        ids.update(members)
    for rows in f.agent_touched.values():
        ids.update(by for _, by in rows)
    for _, members in derived.subjects.values():
        ids.update(members)
    for root, members in derived.lineages.items():
        ids.add(root)
        ids.update(members)
    if f.last is not None:
        ids.add(f.last[1])
    return ids


def read(cls: Loads[F_co], text: str) -> F_co:
    """The `cls` (a Fold) `text_of` wrote; ValueError for anything else."""
    return cls.from_json(read_json_object(text, len(text.encode("utf-8", "surrogatepass"))))


def decoded(cls: Callable[..., F], doc: dict, version: int) -> F:
    """The `cls` (a Fold) of a doc of `version`; ValueError for another version or a
    malformed doc (the seal, views/cache_check.py, is what guards the text against damage)."""
    if not isinstance(doc, dict) or doc.get("version") != version:
        raise ValueError("fold version changed")
    try:
        return _decoded(cls, doc)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:  # binascii.Error too
        raise ValueError(f"malformed fold ({exc.__class__.__name__})") from exc


def _decoded(cls: Callable[..., F], doc: dict) -> F:
    """Ids looked up by `map`, no Python call per id: this runs on every warm read."""
    table = unpacked(doc["ids"])
    at = table.__getitem__

    def many(ns: list) -> list:
        return list(map(at, ns))  # anything but an int raises TypeError

    def keyed(d: dict, value: Callable = _itself) -> dict:  # an object's key: the index as text
        return dict(zip(map(at, map(int, d)), map(value, d.values()), strict=True))

    last = doc["last"]
    f = cls(
        count=doc["count"],
        last=None if last is None else [last[0], at(last[1])],
        recent=many(doc["recent"]),
        recent_meta=keyed(doc["recent_meta"], lambda meta: [meta[0], many(meta[1])]),
        decisions=many(doc["decisions"]),
        corrections=[[at(c), many(parents), revert] for c, parents, revert in doc["corrections"]],
        opens=many(doc["opens"]),
        bootstraps=many(doc["bootstraps"]),
        pins=[[at(note), at(target)] for note, target in doc["pins"]],
        checkpoints=[[at(c), thread] for c, thread in doc["checkpoints"]],
        threads={thread: many(ids) for thread, ids in doc["threads"].items()},
        keys=keyed(doc["keys"]),
        links=keyed(doc["links"], many),
        contributors=dict(doc["contributors"]),
        kinds=dict(doc["kinds"]),
        broken=list(doc["broken"]),
        facts=keyed(doc["facts"]),
        touched=keyed(doc["touched"]),
        agent_touched=keyed(doc["agent_touched"], lambda rows: [[ts, at(by)] for ts, by in rows]),
        version=doc["version"],
    )
    f._derived = Derived.from_json(doc["derived"], at)
    return f


def packed(ids: list[str]) -> Union[str, list[str]]:
    """A sorted table of ids as stored: entry ids are 64 lowercase hex characters, so the
    table is their 32 bytes each, concatenated, in base64 (a third of the text of a JSON
    list of hex strings: 5.4 MB -> 3.6 MB at 100k entries). Anything else (never made by
    an Entry) keeps the list."""
    joined = "".join(ids)
    if len(joined) != 64 * len(ids) or not _HEX.fullmatch(joined):
        return ids
    return base64.b64encode(bytes.fromhex(joined)).decode("ascii")


def unpacked(stored: object) -> list[str]:
    if isinstance(stored, str):
        raw = base64.b64decode(stored.encode("ascii"), validate=True)
        if len(raw) % 32:
            raise ValueError("ids: not whole ids")
        text = raw.hex()
        return list(map(text.__getitem__, map(slice, range(0, len(text), 64), range(64, len(text) + 64, 64))))
    if not isinstance(stored, list) or not all(type(i) is str for i in stored):
        raise TypeError("ids")
    return stored


def _itself(value: V) -> V:
    return value
