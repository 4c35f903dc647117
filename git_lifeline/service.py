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
from .store import DEFAULT_LINE, AppendResult, LineStore

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
        if any(":" in r for r in refs):  # `line:prefix` names a parent in another line
            from .lines import LineIndex, resolve_ref
            index = LineIndex.scan(self.gr)
            return sorted({resolve_ref(self.gr, self.store, r, index) for r in refs})
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
        # only real lines (lines.LineIndex): a stray or foreign ref under refs/lifeline/ is not one
        from .lines import describe_lines
        rows = describe_lines(self.gr)
        for row in rows:
            path = Ledger(self.gr, row["line"]).projection_path()
            row["projection"] = str(path) if path else None
        return rows

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
        from .lines import LineIndex
        index = LineIndex.scan(self.gr)
        for e in good:
            missing = [p for p in e.parents if p not in known and not self.store.has(p)
                       and index.locate(p, exclude=self.line) is None]  # cross-line parents count
            if missing:
                raise InputError(f"{source}: entry {e.id[:12]} names parent {missing[0][:12]} which is in "
                                 "neither the file nor the line; nothing was written")
        result = self.store.append(good, commit_message) if good else AppendResult([], [], None)
        if result.commit:
            self.render()
        return {"read": len(parsed), "added": len(result.added), "existing": len(result.existing),
                "mismatched": [e.id for e in bad]}

    # ---- interop with lifeline-context, and lines (issue 6; logic in interop.py, lines.py) ----
    def import_from(self, source: Path, strict: bool = False, assume_utc: bool = False,
                    progress=None) -> dict:
        """Import a lifeline-context ledger (LIFELINE.md, legacy markdown or .db) into this line.

        Every id is recomputed; refused records raise (nothing written); mismatches are
        skipped and listed (or abort with `strict`). One commit, written as a pack.
        `progress(stage, done, total)` is called while checking and writing.
        """
        from . import interop
        from .lines import LineIndex
        from .store import BulkWriter

        fmt, records = interop.read_source(Path(source))
        total = len(records)
        head = self.store.head()
        tree = self.store.entries_tree(head)
        index = LineIndex.scan(self.gr)

        def in_line(entry_id: str) -> bool:
            return tree is not None and self.store._lookup_blob(tree, entry_id) is not None

        def dedup_used() -> dict:
            if head is None:
                return {}
            return {e.dedup_key: e.id for e in self.store.load(head).entries.values() if e.dedup_key}

        def counted(items):
            for n, rec in enumerate(items, 1):
                if progress is not None and (n % 1000 == 0 or n == total):
                    progress("checking", n, total)
                yield rec

        writer = BulkWriter(self.store)
        try:
            plan = interop.check_records(
                counted(records), str(source), strict=strict, assume_utc=assume_utc, in_line=in_line,
                elsewhere=lambda p: index.locate(p, exclude=self.line), dedup_used=dedup_used, sink=writer.add)
            write_progress = (lambda done, n: progress("writing", done, n)) if progress is not None else None
            result = writer.publish(plan.entries, commit_message, write_progress)
        except BaseException:
            writer.abort()
            raise
        if result.commit:
            path = self.projection_path()
            if head is None and path is not None:
                write_atomic(path, projection.render(self.line, result.added, self.store.entries_tree_id(result.commit)))
            else:
                self.refresh_projection(head, result.added, result.commit)
        return {"format": fmt, "read": total, "added": len(result.added), "existing": len(result.existing),
                "commit": result.commit, "line": self.line,
                "mismatched": [{"where": r.where, "summary": r.summary, "recorded": r.recorded_id, "computed": c}
                               for r, c in plan.mismatched],
                "skipped": [{"id": e.id, "summary": e.summary, "why": why} for e, why in plan.skipped],
                "duplicates": plan.duplicates, "unrecorded": plan.unrecorded, "reordered": plan.reordered,
                "external": [{"id": i, "parent": p, "line": l} for i, p, l in plan.external]}

    def export_seed(self) -> str:
        """The line in lifeline-context's markdown; refuses entries it would misread."""
        from . import interop
        entries = self.entries()
        interop.check_export(entries, self.line)
        return interop.render_seed_markdown(entries, self.line)

    def promote(self, src: str, refs: list, parents: Optional[list] = None) -> dict:
        """Copy entries of line `src` into this line, each with an origin block."""
        from .lines import plan_promote
        plan = plan_promote(self.gr, src, self.line, refs, parents)
        result = self.append(plan.copies) if plan.copies else AppendResult([], [], None)
        return {"promoted": result.added, "already": plan.already + [(None, e.id) for e in result.existing],
                "commit": result.commit}

    def where(self, prefix: str) -> list:
        from .lines import where
        return where(self.gr, prefix)

    def graph(self, only: Optional[str] = None, fmt: str = "mermaid") -> str:
        from .lines import build_graph, render_dot, render_mermaid
        if fmt not in ("mermaid", "dot"):
            raise InputError(f"unknown graph format {fmt!r}: use mermaid or dot")
        g = build_graph(self.gr, only)
        return render_mermaid(g) if fmt == "mermaid" else render_dot(g)
    # ---- end of issue 6 additions -------------------------------------------------------------


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
