"""The one object the faces (CLI, MCP, hooks) call. It holds no presentation."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import context as ctx
from . import projection, state
from .errors import InputError
from .gitrepo import GitRepo, open_repo
from .model import Entry, build_entry, parse_ts
from .store import DEFAULT_LINE, AppendResult, LineStore, list_lines

_DISABLED = ("", "false", "off", "no", "none", "0")


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
        return state.reduce(self.store.load(commit).entries.values())

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
        if value and self.line != DEFAULT_LINE and configured is None:
            # one setting for the main line; other lines sit beside it with their name
            p = Path(value)
            value = str(p.with_name(f"{p.stem}.{self.line}{p.suffix or '.md'}"))
        return self.gr.workdir / (value or default)

    def refresh_projection(self, prev_head: Optional[str], added: list, head: str) -> Optional[Path]:
        path = self.projection_path()
        if path is None:
            return None
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
        head = self.store.head()
        write_atomic(path, projection.render(self.line, self.entries(head), self.store.entries_tree_id(head)))
        return path

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

    # ---- sync and hooks (docs/SYNC.md) ---------------------------------------------
    # Lines: `lines=None` means every line; the faces pass [name] when the user chose one.
    def remote_name(self, remote: Optional[str] = None) -> str:
        from . import sync
        return sync.resolve_remote(self.gr, remote)

    def fetch(self, remote: Optional[str] = None, lines: Optional[list] = None) -> tuple:
        from . import sync
        name = sync.resolve_remote(self.gr, remote)
        return name, sync.fetch(self.gr, name, lines)

    def pull(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             fetch: bool = True) -> tuple:
        """Fetch, then bring each remote line in (create, fast-forward or merge)."""
        from . import sync
        name = sync.resolve_remote(self.gr, remote)
        if fetch:
            sync.fetch(self.gr, name, lines)
        results = sync.integrate(self.gr, name, lines, progress or sync.no_progress)
        for pl in results:
            if pl.changed:
                self._refresh_after_pull(pl)
        return name, results

    def _refresh_after_pull(self, pl) -> None:
        from . import projection  # imported where it is used (keeps read paths light)
        led = self if pl.line == self.line else Ledger(self.gr, pl.line)
        path = led.projection_path()
        if path is None:
            return
        # Extending the file needs only the incoming entries; a missing file, a new line
        # or a replaced blob (ts tie-break changes an entry already shown) renders in full.
        if pl.before is None and len(pl.parsed) == len(pl.incoming):
            # a new line: everything was parsed while verifying it; render from that
            write_atomic(path, projection.render(pl.line, pl.parsed.values(), led.store.entries_tree_id(pl.after)))
            return
        extend = path.exists() and pl.before is not None and not pl.rewritten
        added = [pl.parsed.get(i) or led.store.get(i, pl.after) for i in pl.incoming] if extend else []
        led.refresh_projection(pl.before, added, pl.after)

    def push(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None):
        from . import sync
        name = sync.resolve_remote(self.gr, remote)
        return sync.push(self.gr, name, lines, progress or sync.no_progress)

    def sync(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             attempts: int = 3) -> tuple:
        """Pull then push; when someone pushed in between, pull and push again (bounded)."""
        from . import sync
        name = sync.resolve_remote(self.gr, remote)
        pulls: list = []
        result = None
        for _ in range(max(1, attempts)):
            _, pulled = self.pull(name, lines, progress)
            pulls.extend(p for p in pulled if p.changed)
            result = self.push(name, lines, progress)
            if not any(p.needs_sync for p in result.rejected):
                break
        return name, pulls, result

    def remote_setup(self, remote: Optional[str] = None) -> tuple:
        from . import sync
        name = sync.resolve_remote(self.gr, remote)
        return name, sync.remote_setup(self.gr, name), sync.fetch_refspec(name)

    @classmethod
    def clone(cls, url: str, directory: Optional[str] = None, progress=None) -> tuple:
        """git clone, then pull the ledger from the new clone's origin."""
        from . import sync
        from .gitrepo import open_repo
        dest = sync.clone(url, directory)
        gr = open_repo(str(dest))
        led = cls(gr, gr.config_get("lifeline.defaultLine") or DEFAULT_LINE)
        names = sync.remotes(gr)
        remote = names[0] if names else "origin"
        _, pulled = led.pull(remote, None, progress)
        return led, dest, remote, pulled

    def unpushed(self, remote: Optional[str] = None) -> list:
        from . import sync
        return sync.unpushed(self.gr, sync.resolve_remote(self.gr, remote))

    def hooks_install(self, names: Optional[list] = None) -> list:
        from . import hooks
        return hooks.install(self.gr, names)

    def hooks_uninstall(self, names: Optional[list] = None) -> list:
        from . import hooks
        return hooks.uninstall(self.gr, names)

    def hooks_status(self) -> list:
        from . import hooks
        return hooks.status(self.gr)

    def hooks_dir(self) -> Path:
        from . import hooks
        return hooks.hooks_dir(self.gr)

    def run_hook(self, name: str, args: list, stdin: bytes):
        from . import hooks
        return hooks.run(self.gr, name, list(args), stdin, self.line)

    def why(self, target: str) -> list:
        """Entries linked (by `Lifeline:` trailers) to the commits that touched `target`,
        newest commit first, each entry once: [(Entry or None, Link)]."""
        from . import links
        out, seen = [], set()
        for link in links.links_for(self.gr, target, self.line):
            key = link.entry_id or link.value
            if key in seen:
                continue
            seen.add(key)
            entry = None
            if link.entry_id:
                entry = (self.store if link.line == self.line else LineStore(self.gr, link.line)).get(link.entry_id)
            out.append((entry, link))
        return out


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
