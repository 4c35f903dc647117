"""`context`'s finished answers, kept: `<line>.context` beside the line's cache
(docs/FORMAT.md §10), so that a warm `context` reads one small file instead of the whole
fold and the sections over every item in force (app/warm_context.py). The warm path keeps
what it renders, and the normal path what it answers for the whole line at its head (after
a `log`, the `context` that brings the cache to the new head is the only one that renders).

A kept answer is the context's two parts for one ask (budget, or budget in tokens and
tokenizer; any provider's format wraps the same parts), keyed by exactly what it is made of:

* the code that made it (`fingerprint`: the package's version and the size and mtime of
  every module of it, as Python itself tells a changed module);
* the line, its ledger head and the `entries` tree, seal and stamp of the cache file that
  served it (views/cache_warm.py: the same checks as for the fold, without reading it);
* the review trail's head (who approved what: core/trust.py);
* the code view (HEAD's commit and the shallow file) when a decision in force names code
  paths, and then only while the line's `.stale` is kept for exactly that view too;
* the time: validity windows (core/dates.py) turn decisions in and out of force, so an
  answer holds only strictly between the last window bound before it was made and the
  next one after (`window_of`).

A file that is not exactly as written here (its sha256 first line), of another version or
for anything else reads as nothing, and the answer is made again and kept. The rows of the
entries a kept text shows are checked against their ids once more as it is served, as a
rendering checks every row it meets (views/cache_warm.py): a damaged row sends `context`
the normal way.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from .. import __version__
from ..core.dates import window_bound
from ..core.json_input import JSONInputError, read_json
from ..git.fs import UnsafeFile, read_bounded, write_atomic

if TYPE_CHECKING:  # annotations only: a kept answer is served without the truth's modules
    from ..core.truth import State

VERSION = 1
MAX_FILE = 4 << 20
MAX_TEXT = 512 << 10  # a larger answer (an unbounded budget over a large line) is made each time
MAX_ASKS = 8  # answers kept per head: budgets and formats in use side by side
_PACKAGE = Path(__file__).resolve().parent.parent

Window = tuple[Optional[str], Optional[str]]
AskKey = list[Union[int, str, None]]


@dataclass(frozen=True)
class Base:
    """What every answer kept in the file was made from."""

    line: str
    ledger: str
    trail: Optional[str]
    tree: str
    seal: str

    def to_json(self) -> list[Optional[str]]:
        return [self.line, self.ledger, self.trail, self.tree, self.seal]


@dataclass(frozen=True)
class Ask:
    """What `context` was asked for: the budget as resolved (options or git config), or the
    budget in tokens and the tokenizer it is measured with (the provider's format is only
    the wrapping of the two parts: views/delivery.py)."""

    budget: Optional[int]
    budget_tokens: Optional[int]
    tokenizer: Optional[str]

    def key(self) -> AskKey:
        return [self.budget, self.budget_tokens, self.tokenizer]

    @property
    def keepable(self) -> bool:
        # tiktoken is measured by whatever version of it is installed (or the estimate
        # without it), which the code's fingerprint does not cover
        return self.tokenizer != "tiktoken"


@dataclass(frozen=True)
class Kept:
    """One answer: its stable and volatile parts (views/context.py), the ids of the entries
    it shows, the code view it was made for (None: no decision in force names code) and the
    time it holds for."""

    stable: str
    volatile: str
    shown: list[str]
    code: Optional[str]
    window: Window


def kept_file(lifeline_dir: str, line: str) -> Path:
    return Path(lifeline_dir) / f"{line}.context"


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """The code that renders: the version and every module's (path, size, mtime), read once
    per process. A long-running server renders with the code it loaded, so the files' state
    when it first asked is the one its answers are made by (read at every call, it was
    0.5 ms of CPU, twice for each answer kept, and could name code installed since)."""
    h = hashlib.sha256(__version__.encode("utf-8"))
    stack = [str(_PACKAGE)]
    while stack:  # bounded by the package's directories
        folder = stack.pop()
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda d: d.name)
        for d in found:
            if d.is_dir(follow_symlinks=False) and d.name != "__pycache__":
                stack.append(d.path)
            elif d.name.endswith(".py"):
                st = d.stat()
                h.update(f"{d.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def window_of(st: State) -> Optional[Window]:
    """(last bound before, next bound after) the state's `now` among the validity windows of
    the decisions it judged (None: unbounded); None when a bound is `now` itself."""
    lo: Optional[str] = None
    hi: Optional[str] = None
    facts = st.fold.facts
    for i in st.fold.derived.live:
        f = facts.get(i)
        if not f:
            continue
        for value, end in ((f.get("valid-until"), True), (f.get("valid-from"), False)):
            if not value:
                continue
            bound = window_bound(value, end=end)
            if bound == st.now:
                return None
            if bound < st.now:
                lo = bound if lo is None or bound > lo else lo
            elif hi is None or bound < hi:
                hi = bound
    return lo, hi


def find(path: Path, base: Base, ask: Ask, now: str) -> Optional[Kept]:
    """The answer kept for exactly this base and ask at `now`, or None."""
    if not ask.keepable:
        return None
    doc = _read(path)
    if doc is None or doc.get("base") != base.to_json():
        return None
    for v in _asks(doc):
        if v.get("ask") == ask.key():
            kept = _kept(v)
            if kept is not None and _holds(kept.window, now):
                return kept
            return None
    return None


def keep(path: Path, base: Base, ask: Ask, kept: Kept) -> None:
    """Keep `kept` beside the other asks' answers for the same base (at most MAX_ASKS); a
    file that cannot be written only makes the next `context` render again."""
    if not ask.keepable or len(kept.stable) + len(kept.volatile) > MAX_TEXT:
        return
    doc = _read(path)
    same_base = doc is not None and doc.get("base") == base.to_json()
    others = [v for v in _asks(doc) if v.get("ask") != ask.key()] if same_base else []
    new = {
        "ask": ask.key(),
        "shown": kept.shown,
        "code": kept.code,
        "window": list(kept.window),
        "stable": kept.stable,
        "volatile": kept.volatile,
    }
    if same_base and new in _asks(doc):
        return  # kept already (every MCP call and hook answers through the normal path)
    asks = [*others[-(MAX_ASKS - 1) :], new]
    body = json.dumps(
        {"version": VERSION, "code": fingerprint(), "base": base.to_json(), "asks": asks},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    text = f"{hashlib.sha256(body.encode('utf-8', 'surrogatepass')).hexdigest()}\n{body}"
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE:
        return
    try:
        write_atomic(path, text)
    except (OSError, UnicodeEncodeError):
        pass


def _read(path: Path) -> Optional[dict]:
    """The file's document when it is whole, of this version and made by this code."""
    try:
        data = read_bounded(path, MAX_FILE, follow=False)
    except (OSError, UnsafeFile):
        return None
    digest, nl, body = data.partition(b"\n")
    if not nl or hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        return None
    try:
        doc = read_json(body, MAX_FILE)
    except JSONInputError:
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or doc.get("code") != fingerprint():
        return None
    return doc


def _asks(doc: Optional[dict]) -> list[dict]:
    asks = doc.get("asks") if doc is not None else None
    return [v for v in asks if isinstance(v, dict)] if isinstance(asks, list) else []


def _kept(v: dict) -> Optional[Kept]:
    stable, volatile = v.get("stable"), v.get("volatile")
    shown, code, window = v.get("shown"), v.get("code"), v.get("window")
    if not isinstance(stable, str) or not isinstance(volatile, str) or not stable + volatile:
        return None
    if not isinstance(shown, list) or not all(isinstance(i, str) and len(i) == 64 for i in shown):
        return None
    if code is not None and not isinstance(code, str):
        return None
    if not isinstance(window, list) or len(window) != 2 or not all(b is None or isinstance(b, str) for b in window):
        return None
    return Kept(stable, volatile, shown, code, (window[0], window[1]))


def _holds(window: Window, now: str) -> bool:
    lo, hi = window
    return (lo is None or lo < now) and (hi is None or now < hi)
