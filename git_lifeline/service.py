"""The one object the faces (CLI, MCP, hooks) call. It holds no presentation."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import context as ctx
from . import projection, state
from .errors import InputError
from .gitrepo import GitRepo, open_repo
from .model import Entry, build_entry, parse_ts
from .store import DEFAULT_LINE, ENTRIES_DIR, AppendResult, LineStore, list_lines

_DISABLED = ("", "false", "off", "no", "none", "0")
_ENABLED = ("true", "on", "yes", "1")


@dataclass
class LogOutcome:
    entry: Entry
    written: bool
    commit: Optional[str]
    projection: Optional[Path]


def commit_message(entries: list) -> str:
    if len(entries) == 1:
        e = entries[0]
        body = f"\n\n{e.body}" if e.body else ""
        return f"{e.kind}: {e.summary}{body}\n\nLifeline-Id: {e.id}\n"
    return (f"lifeline: add {len(entries)} entries\n\n"
            + "".join(f"Lifeline-Id: {e.id}\n" for e in sorted(entries, key=projection.order_key)))


class Ledger:
    """A line of a repository's ledger, with every operation the faces offer."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        self.gr = gr
        self.store = LineStore(gr, line)
        self.line = line

    @classmethod
    def open(cls, start: Optional[str] = None, line: Optional[str] = None) -> "Ledger":
        gr = open_repo(start)
        return cls(gr, line or gr.config_get("lifeline.defaultLine") or DEFAULT_LINE)

    # ---- identity --------------------------------------------------------
    def default_author(self) -> str:
        name, email = self.gr.identity()
        return f"{name} <{email}>"

    # ---- writing ---------------------------------------------------------
    def resolve_parents(self, refs: list) -> list:
        return sorted({self.store.resolve(r) for r in refs})

    def make_entry(self, kind: str, summary: str, body: str = "", parents: Optional[list] = None,
                   author: Optional[str] = None, agent: str = "human", provider: str = "none",
                   model: str = "human", dedup_key: Optional[str] = None, ts: Optional[str] = None) -> Entry:
        fields = dict(kind=kind, summary=summary.strip(), body=body, author=(author or self.default_author()).strip(),
                      agent=agent, provider=provider, model=model, parents=self.resolve_parents(parents or []),
                      dedup_key=dedup_key)
        if ts is not None:
            fields["ts"] = parse_ts(ts)
        return build_entry(**fields)

    def _dedup_hit(self, e: Entry, head: Optional[str]) -> bool:
        if e.dedup_key is None or head is None:
            return False
        return any(x.dedup_key == e.dedup_key for x in self.store.load(head).entries.values())

    def append(self, entries: list) -> AppendResult:
        prev = self.store.head()
        result = self.store.append(entries, commit_message, self._dedup_hit)
        if result.commit:
            self.refresh_projection(prev, result.added, result.commit)
        return result

    def log(self, **fields) -> LogOutcome:
        e = self.make_entry(**fields)
        result = self.append([e])
        stored = result.added[0] if result.added else result.existing[0]
        return LogOutcome(stored, bool(result.added), result.commit, self.projection_path())

    # ---- reading ---------------------------------------------------------
    def head(self) -> Optional[str]:
        return self.store.head()

    def entries(self, commit: Optional[str] = None) -> list:
        loaded = self.store.load(commit)
        return sorted(loaded.entries.values(), key=projection.order_key)

    def state(self, commit: Optional[str] = None) -> state.State:
        """Current truth; whatever under entries/ could not be read as an entry is
        listed as broken, so the context warns about it instead of dropping it silently."""
        loaded = self.store.load(commit)
        st = state.reduce(loaded.entries.values())
        for path, _problem in loaded.problems:
            name = path[len(ENTRIES_DIR) + 1:].replace("/", "")
            if name not in st.broken:
                st.broken.append(name)
        return st

    def show(self, ref: str) -> Entry:
        entry_id = self.store.resolve(ref)
        return self.store.get(entry_id)

    def context(self, budget: Optional[int] = None) -> ctx.ContextParts:
        if budget is not None and budget < 0:
            raise InputError("--budget must be zero or more")
        head = self.store.head()
        inp = ctx.ContextInput(state=self.state(head), line=self.line, head_commit=head)
        return ctx.assemble(inp, budget)

    def lines(self) -> list:
        out = []
        for name in list_lines(self.gr):
            s = LineStore(self.gr, name)
            head = s.head()
            count = sum(1 for _ in s.iter_blobs(head))
            out.append({"line": name, "head": head, "entries": count})
        return out

    # ---- projection ------------------------------------------------------
    def projection_path(self) -> Optional[Path]:
        if self.gr.workdir is None:
            return None
        default = "LIFELINE.md" if self.line == DEFAULT_LINE else f"LIFELINE.{self.line}.md"
        configured = self.gr.config_get(f"lifeline.{self.line}.projection") if self.line != DEFAULT_LINE else None
        value = configured if configured is not None else self.gr.config_get("lifeline.projection")
        if value is not None and value.strip().lower() in _DISABLED:
            return None
        if value is not None and value.strip().lower() in _ENABLED:
            value = None  # a boolean "on": the default place, not a file named "true"
        if value and self.line != DEFAULT_LINE and configured is None:
            # one setting for the main line; other lines sit beside it with their name
            p = Path(value)
            value = str(p.with_name(f"{p.stem}.{self.line}{p.suffix or '.md'}"))
        return self.gr.workdir / (value or default)

    def refresh_projection(self, prev_head: Optional[str], added: list, head: str) -> Optional[Path]:
        """Bring the projection up to the ref after an append that moved it prev_head -> head.

        Writers are serialised by a lock, and the ref is re-read under it: when another
        writer moved the ref since, the projection is rendered for the ref as it is now,
        so a late refresh can never put an older view over a newer one."""
        path = self.projection_path()
        if path is None:
            return None
        with _projection_lock(self._projection_lock_path()):
            current_head = self.store.head()
            if current_head != head:
                added, head = [], current_head
            text = None
            try:
                current = read_text_exact(path)
            except (OSError, UnicodeDecodeError):
                current = None
            if current is not None and added:
                text = projection.append_rendered(current, self.store.entries_tree_id(prev_head), added,
                                                  self.store.entries_tree_id(head))
            if text is None:
                text = projection.render(self.line, self.entries(head), self.store.entries_tree_id(head))
            write_atomic(path, text)
        return path

    def render(self) -> Optional[Path]:
        path = self.projection_path()
        if path is None:
            raise InputError("the projection is disabled (git config lifeline.projection) or this repo is bare")
        with _projection_lock(self._projection_lock_path()):
            head = self.store.head()
            write_atomic(path, projection.render(self.line, self.entries(head), self.store.entries_tree_id(head)))
        return path

    def _projection_lock_path(self) -> Path:
        return self.gr.git_dir / f"lifeline-{self.line}-projection.lock"

    def migrate(self, source: Path, strict: bool = False) -> dict:
        """Rebuild the line from a projection file; every recorded id is checked first."""
        try:
            text = read_text_exact(source)
        except FileNotFoundError:
            raise InputError(f"{source}: no such file") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        parsed = projection.parse(text, str(source))
        good, bad = [], []
        for e in parsed:
            (good if e.verify() else bad).append(e)
        if bad and strict:
            raise InputError(
                f"{len(bad)} entr{'y' if len(bad) == 1 else 'ies'} in {source} do not match their recorded id "
                f"(first: {bad[0].id[:12]} '{bad[0].summary[:40]}'); nothing was written")
        known = {e.id for e in good}
        for e in good:
            missing = [p for p in e.parents if p not in known and not self.store.has(p)]
            if missing:
                raise InputError(f"{source}: entry {e.id[:12]} names parent {missing[0][:12]} which is in "
                                 "neither the file nor the line; nothing was written")
        result = self.store.append(good, commit_message) if good else AppendResult([], [], None)
        if result.commit:
            self.render()
        return {"read": len(parsed), "added": len(result.added), "existing": len(result.existing),
                "mismatched": [e.id for e in bad]}


@contextmanager
def _projection_lock(lock_path: Path):
    """An advisory lock (released by the OS if the holder dies); a no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def read_text_exact(path: Path) -> str:
    """Read UTF-8 text byte-for-byte (no newline translation: CRLF in a body survives)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
