"""The one object the faces (CLI, MCP, hooks) call. It holds no presentation."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core import truth as state
from ..errors import InputError, LifelineError
from ..git.repo import GitRepo, open_repo
from ..git.store import DEFAULT_LINE, AppendResult, LineStore
from ..views import context as ctx

if TYPE_CHECKING:  # annotations only: importing the model loads pydantic
    from ..core.model import Entry

# The pydantic model and the projection are imported where an entry is built or
# written: read paths served from the cache (context, recall) never load pydantic.

_DISABLED = ("", "false", "off", "no", "none", "0")
DEFAULT_BUDGET = 8000  # characters, when neither --budget nor lifeline.budget says otherwise
_ENABLED = ("true", "on", "yes", "1")


@dataclass
class LogOutcome:
    entry: Entry
    written: bool
    commit: Optional[str]
    projection: Optional[Path]


def _order_key(e):
    return (e.ts, e.id)


def commit_message(entries: list) -> str:
    if len(entries) == 1:
        e = entries[0]
        body = f"\n\n{e.body}" if e.body else ""
        return f"{e.kind}: {e.summary}{body}\n\nLifeline-Id: {e.id}\n"
    return (f"lifeline: add {len(entries)} entries\n\n"
            + "".join(f"Lifeline-Id: {e.id}\n" for e in sorted(entries, key=_order_key)))


class Ledger:
    """A line of a repository's ledger, with every operation the faces offer."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        self.gr = gr
        self.store = LineStore(gr, line)
        self.line = line
        self._cache = None
        self.warnings: list = []  # what went wrong after a write had succeeded (the faces print it)

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
            from ..git.lines import LineIndex, resolve_ref
            index = LineIndex.scan(self.gr)
            return sorted({resolve_ref(self.gr, self.store, r, index) for r in refs})
        return sorted({self.store.resolve(r) for r in refs})

    def make_entry(self, kind: str, summary: str, body: str = "", parents: Optional[list] = None,
                   author: Optional[str] = None, agent: str = "human", provider: str = "none",
                   model: str = "human", dedup_key: Optional[str] = None, ts: Optional[str] = None,
                   allow_secret: Optional[str] = None):
        """A new entry under every write rule, the secret scan included (rules.new_record).
        `allow_secret` records a reasoned override of the secret scan in the body's header."""
        from ..core.rules import new_record, parse_ts  # the model's rules, without pydantic's start-up cost
        if allow_secret is not None:
            from ..core.secrets import record_override
            body = record_override(body, allow_secret)
        return new_record(kind=kind, summary=summary.strip(), body=body,
                          author=(author or self.default_author()).strip(), agent=agent, provider=provider,
                          model=model, parents=self.resolve_parents(parents or []), dedup_key=dedup_key,
                          ts=parse_ts(ts) if ts is not None else None)

    def _dedup_hit(self, e: Entry, head: Optional[str]) -> bool:
        if e.dedup_key is None or head is None:
            return False
        return self.cache().has_dedup_key(head, e.dedup_key)

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
        return sorted(loaded.entries.values(), key=_order_key)

    def stale(self, since: Optional[str] = None, st: Optional[state.State] = None) -> list:
        """Decisions in force whose code (their `paths:`) changed after they were made."""
        from ..git.history import find_stale
        st = st or self.state()
        if since is not None and self.gr.git(["rev-parse", "--verify", "--quiet", f"{since}^{{commit}}"],
                                             check=False).returncode != 0:
            raise InputError(f"--since {since!r}: not a commit")
        return find_stale(self.gr, st.fold.facts, st.fold.touched, st.decision_ids, since_rev=since)

    def state(self, commit: Optional[str] = None) -> state.State:
        """Current truth at `commit` (default: head); the head goes through the cache."""
        head = self.store.head()
        if commit is None or commit == head:
            return self.cache().state(head)
        return state.reduce(self.store.load(commit).entries.values())

    def cache(self):
        if self._cache is None:
            from ..views.cache import LineCache
            self._cache = LineCache(self.store)
        return self._cache

    def show(self, ref: str):
        entry_id = self.store.resolve(ref)
        return self.store.get(entry_id)

    def context(self, budget: Optional[int] = None, budget_tokens: Optional[int] = None,
                query: Optional[str] = None, thread: Optional[str] = None,
                as_of: Optional[str] = None, k: int = 5) -> ctx.ContextParts:
        from ..views.tokens import measure_for
        if budget is not None and budget_tokens is not None:
            raise InputError("give --budget or --budget-tokens, not both")
        for name, value in (("--budget", budget), ("--budget-tokens", budget_tokens)):
            if value is not None and value < 0:
                raise InputError(f"{name} must be zero or more")
        if budget is None and budget_tokens is None:
            # What a fresh AI reads must fit a prompt: bounded by default, whatever the ledger's size.
            budget = self.gr.config_int("lifeline.budget", DEFAULT_BUDGET)
            if budget < 0:
                raise InputError("git config lifeline.budget must be zero or more")
        st = self.state_as_of(as_of) if as_of else self.state()
        thread_key = None
        if thread is not None:
            thread_key = self.thread_key(thread, st)
            st = state.for_thread(st, thread_key)
        relevant = []
        if query:
            relevant = [(st.by_id[h.id], h.id not in st.superseded)
                        for h in self.recall(query, k=k) if h.id in st.by_id]
        inp = ctx.ContextInput(state=st, line=self.line, head_commit=self.store.head(), relevant=relevant,
                               query=query, thread=thread, conflicts=st.conflicting(),
                               stale={s.decision: s.mark() for s in self.stale(st=st)})
        if budget_tokens is not None:
            return ctx.assemble(inp, budget_tokens, measure_for(self.gr.config_get("lifeline.tokenizer", "estimate")))
        return ctx.assemble(inp, budget)

    def state_as_of(self, when: str) -> state.State:
        """The truth as the ledger stood then: a ledger commit, or a date (entries recorded by then)."""
        import re
        from datetime import timedelta

        from ..core.rules import parse_ts
        text = when.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            limit = parse_ts(text + "T00:00:00+00:00") + timedelta(days=1) - timedelta(microseconds=1)
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}T.*", text):
            limit = parse_ts(text)
        else:
            limit = None
        if limit is not None:
            # Bitemporal: entries recorded by then, with validity windows read at then.
            return state.reduce((e for e in self.store.load().entries.values() if e.ts <= limit),
                                now=f"{limit:%Y-%m-%dT%H:%M:%S.%f}")
        import pygit2
        try:
            commit = self.gr.repo.revparse_single(text).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise InputError(f"--as-of {when!r}: not a date (YYYY-MM-DD[THH:MM:SSZ]) nor a commit") from None
        head = self.head()
        if head is None or not (str(commit.id) == head or
                                self.gr.repo.descendant_of(pygit2.Oid(hex=head), commit.id)):
            raise InputError(f"--as-of {when!r}: not a commit of line {self.line!r}")
        return self.state(str(commit.id))

    def thread_key(self, thread: str, st: Optional[state.State] = None) -> str:
        st = st or self.state()
        key = state.thread_key(thread, st.fold.opens)
        if key not in st.threads and key not in st.checkpoints:
            known = ", ".join(sorted(k[:8] if len(k) == 64 else k for k in st.threads)) or "none"
            raise InputError(f"unknown thread {thread!r} in line {self.line!r} (threads: {known})")
        return key

    def recall(self, query: str, k: int = 5) -> list:
        from ..views import recall
        if k < 1:
            raise InputError("-k must be at least 1")
        st = self.state()
        db = self.cache().ensure(self.store.head())
        return recall.search(db, query, k, truth=recall.truth_of(st), semantic=self.semantic_index())

    def semantic_index(self):
        """The semantic index when `lifeline.semantic.model` names a usable model, else None
        (recall is then lexical; `recall_mode` says which and why)."""
        from ..views import semantic
        configured = self.gr.config_get("lifeline.semantic.model")
        self.recall_mode = ("lexical", "no model configured (git config lifeline.semantic.model DIR)")
        if not configured:
            return None
        try:
            index = semantic.Index(Path(configured).expanduser())
        except semantic.ModelUnavailable as exc:
            self.recall_mode = ("lexical", str(exc))
            self.warnings.append(f"recall is lexical: {exc}")
            return None
        self.recall_mode = ("semantic", configured)
        return index

    # ---- working state -----------------------------------------------------
    def checkpoint(self, thread: Optional[str], sections: dict, summary: Optional[str] = None,
                   **who) -> LogOutcome:
        from ..core import blocks
        thread = (thread or state.MAIN_THREAD).strip()
        st = self.state()
        key = state.thread_key(thread, st.fold.opens)
        if not any(sections.get(s) for s in blocks.CHECKPOINT_SECTIONS):
            raise InputError("a checkpoint needs at least one of --goal/--done/--next/--blocked/--tried")
        for name, items in sections.items():
            for item in items:
                if not item.strip() or "\n" in item or "\r" in item:
                    raise InputError(f"--{name} items must be single non-empty lines")
        body = blocks.render_header({"thread": key}) + "".join(
            blocks.render_list_block(s, [i.strip() for i in sections.get(s, [])]) for s in blocks.CHECKPOINT_SECTIONS)
        name = st.by_id[key].summary if key in st.by_id else key
        first = next((sections[s][0] for s in ("next", "goal", "blocked", "done", "tried") if sections.get(s)), "")
        summary = summary or f"checkpoint {name[:60]}: {first}"[:300].strip()
        live = st.checkpoints.get(key)
        if live is not None and live.entry.body == body.strip() and live.entry.summary == summary:
            return LogOutcome(live.entry, False, None, self.projection_path())
        parents = [st.threads[key][-1]] if st.threads.get(key) else ([key] if key in st.by_id else [])
        return self.log(kind="checkpoint", summary=summary, body=body, parents=parents, **who)

    def log_in_thread(self, thread: str, fields: dict) -> LogOutcome:
        """Append into a thread: the body starts with `thread:` and the entry chains to the thread's head."""
        from ..core import blocks
        st = self.state()
        key = state.thread_key(thread, st.fold.opens)
        body = fields.get("body", "")
        if blocks.field(body, "thread") is None:
            fields["body"] = blocks.render_header({"thread": key}) + body
        head = st.threads.get(key, [])[-1:] or ([key] if key in st.by_id else [])
        fields["parents"] = sorted(set(fields.get("parents") or []) | set(head))
        return self.log(**fields)

    def resume(self, thread: Optional[str] = None) -> list:
        st = self.state()
        cps = sorted(st.checkpoints.values(), key=lambda c: (c.entry.ts, c.entry.id), reverse=True)
        if thread is not None:
            key = self.thread_key(thread, st)
            cps = [c for c in cps if c.thread == key]
        return cps

    def pin(self, ref: str, **who) -> LogOutcome:
        st = self.state()
        target = self.store.resolve(ref)
        if target not in set(st.decision_ids):
            raise InputError(f"{ref!r} is not a decision in force; only those can be pinned")
        if target in st.pinned:
            return LogOutcome(st.by_id[target], False, None, self.projection_path())
        d = st.by_id[target]
        return self.log(kind="note", summary=f"pin: {d.summary}"[:300], parents=[target],
                        body=f"pin: {target}\n\nPinned as a foundation of the context.", **who)

    def unpin(self, ref: str, **who) -> LogOutcome:
        st = self.state()
        target = self.store.resolve(ref)
        notes = st.pin_notes_of(target)
        if not notes:
            raise InputError(f"{ref!r} is not pinned")
        return self.log(kind="correction", summary=f"unpin: {st.by_id[target].summary}"[:300],
                        parents=notes, body="action: revert\n\nUnpinned.", **who)

    def lines(self) -> list:
        # only real lines (lines.LineIndex): a stray or foreign ref under refs/lifeline/ is not one
        from ..git.lines import describe_lines
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
        if value is not None and value.strip().lower() in _ENABLED:
            value = None  # a boolean "on": the default place, not a file named "true"
        if value and self.line != DEFAULT_LINE and configured is None:
            # one setting for the main line; other lines sit beside it with their name
            p = Path(value)
            value = str(p.with_name(f"{p.stem}.{self.line}{p.suffix or '.md'}"))
        return self.gr.workdir / (value or default)

    def refresh_projection(self, prev_head: Optional[str], added: list, head: str) -> Optional[Path]:
        """`_refresh_projection`, after a write that has succeeded: a projection that cannot
        be written (a full or read-only work tree) is a warning, not a failed write."""
        try:
            return self._refresh_projection(prev_head, added, head)
        except OSError as exc:
            self.projection_failed(exc)
            return None

    def projection_failed(self, exc: OSError) -> None:
        self.warnings.append(f"the entry is recorded, but {self.projection_path()} could not be refreshed "
                             f"({exc.strerror or exc}); run `git lifeline render` when that is fixed")

    def _refresh_projection(self, prev_head: Optional[str], added: list, head: str) -> Optional[Path]:
        """Bring the projection up to the ref after an append that moved it prev_head -> head.

        Writers are serialised by a lock, and the ref is re-read under it: when another
        writer moved the ref since, the projection is rendered for the ref as it is now,
        so a late refresh can never put an older view over a newer one."""
        from ..views import projection
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
            if text is None and current is not None:
                text = self._catch_up(current, head)
            if text is None:
                text = projection.render(self.line, self.entries(head), self.store.entries_tree_id(head))
            if text != current:
                write_atomic(path, text)
        return path

    def _catch_up(self, current: str, head: Optional[str]) -> Optional[str]:
        """Extend the file from the entries tree its footer names to the head's, reading
        only what the trees' difference adds (concurrent writers each refresh after their
        own append, so a refresh often finds the ref moved on; a full render of the line
        there made each append cost a full read). None when only a full render will do."""
        from ..core.model import Entry
        from ..git.store import diff_entry_trees, is_entry_path
        from ..views import projection
        footer, shown = projection.shown_tree(current)
        target = self.store.entries_tree_id(head)
        if not footer:
            return None
        if shown == target:
            return current
        repo = self.gr.repo
        try:
            old = repo[shown] if shown else None
            added = []
            for path, o, n, kind in diff_entry_trees(repo, old, repo[target] if target else None):
                if o is not None or n is None or kind != "blob" or not is_entry_path(path):
                    return None  # a removal or a replaced blob: render in full
                added.append(Entry.from_json(repo[n].data))
        except (KeyError, ValueError, LifelineError):
            return None
        return projection.append_rendered(current, shown, added, target) if added else None

    def render(self) -> Optional[Path]:
        path = self.projection_path()
        if path is None:
            raise InputError("the projection is disabled (git config lifeline.projection) or this repo is bare")
        from ..views import projection
        with _projection_lock(self._projection_lock_path()):
            head = self.store.head()
            write_atomic(path, projection.render(self.line, self.entries(head), self.store.entries_tree_id(head)))
        return path

    def _projection_lock_path(self) -> Path:
        return self.gr.git_dir / f"lifeline-{self.line}-projection.lock"

    def _bulk_append(self, entries: list) -> AppendResult:
        """Append many entries as one pack (git fast-import) and one commit, ref by CAS."""
        from ..git.store import BulkWriter
        writer = BulkWriter(self.store)
        try:
            for e in entries:
                writer.add(e)
            return writer.publish(entries, commit_message)
        except BaseException:
            writer.abort()
            raise

    def migrate(self, source: Path, strict: bool = False) -> dict:
        """Rebuild the line from a projection file; every recorded id is checked first."""
        try:
            text = read_text_exact(source)
        except FileNotFoundError:
            raise InputError(f"{source}: no such file") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        from ..views import projection
        parsed = projection.parse(text, str(source))
        good, bad = [], []
        for e in parsed:
            (good if e.verify() else bad).append(e)
        if bad and strict:
            raise InputError(
                f"{len(bad)} entr{'y' if len(bad) == 1 else 'ies'} in {source} do not match their recorded id "
                f"(first: {bad[0].id[:12]} '{bad[0].summary[:40]}'); nothing was written")
        known = {e.id for e in good}
        from ..git.lines import LineIndex
        index = LineIndex.scan(self.gr)
        for e in good:
            missing = [p for p in e.parents if p not in known and not self.store.has(p)
                       and index.locate(p, exclude=self.line) is None]  # cross-line parents count
            if missing:
                raise InputError(f"{source}: entry {e.id[:12]} names parent {missing[0][:12]} which is in "
                                 "neither the file nor the line; nothing was written")
        result = self._bulk_append(good) if good else AppendResult([], [], None)
        if result.commit:
            try:
                self.render()
            except OSError as exc:
                self.projection_failed(exc)
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
        from ..core import seed as interop
        from ..git.lines import LineIndex
        from ..git.store import BulkWriter

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
            from ..views import projection
            path = self.projection_path()
            if head is None and path is not None:
                try:
                    write_atomic(path, projection.render(self.line, result.added,
                                                         self.store.entries_tree_id(result.commit)))
                except OSError as exc:
                    self.projection_failed(exc)
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
        from ..core import seed as interop
        entries = self.entries()
        interop.check_export(entries, self.line)
        return interop.render_seed_markdown(entries, self.line)

    def promote(self, src: str, refs: list, parents: Optional[list] = None) -> dict:
        """Copy entries of line `src` into this line, each with an origin block."""
        from ..git.lines import plan_promote
        plan = plan_promote(self.gr, src, self.line, refs, parents)
        result = self.append(plan.copies) if plan.copies else AppendResult([], [], None)
        return {"promoted": result.added, "already": plan.already + [(None, e.id) for e in result.existing],
                "commit": result.commit}

    def where(self, prefix: str) -> list:
        from ..git.lines import where
        return where(self.gr, prefix)

    def graph(self, only: Optional[str] = None, fmt: str = "mermaid") -> str:
        from ..git.lines import build_graph, render_dot, render_mermaid
        if fmt not in ("mermaid", "dot"):
            raise InputError(f"unknown graph format {fmt!r}: use mermaid or dot")
        g = build_graph(self.gr, only)
        return render_mermaid(g) if fmt == "mermaid" else render_dot(g)
    # ---- end of issue 6 additions -------------------------------------------------------------

    # ---- sync and hooks (docs/SYNC.md) ---------------------------------------------
    # Lines: `lines=None` means every line; the faces pass [name] when the user chose one.
    def remote_name(self, remote: Optional[str] = None) -> str:
        from ..git import sync
        return sync.resolve_remote(self.gr, remote)

    def fetch(self, remote: Optional[str] = None, lines: Optional[list] = None) -> tuple:
        from ..git import sync
        name = sync.resolve_remote(self.gr, remote)
        return name, sync.fetch(self.gr, name, lines)

    def pull(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             fetch: bool = True) -> tuple:
        """Fetch, then bring each remote line in (create, fast-forward or merge)."""
        from ..git import sync
        name = sync.resolve_remote(self.gr, remote)
        if fetch:
            sync.fetch(self.gr, name, lines)
        results = sync.integrate(self.gr, name, lines, progress or sync.no_progress)
        for pl in results:
            if pl.changed:
                self._refresh_after_pull(pl)
        self._integrate_review_trails(name, lines)
        return name, results

    def _integrate_review_trails(self, remote: str, lines: Optional[list]) -> None:
        """Bring the remote's review trails in (verified, then created, fast-forwarded or merged)."""
        from ..git import sync
        from ..git.review import ReviewTrail
        for line, commit in sorted(sync.review_tracking_heads(self.gr, remote).items()):
            if lines is None or line in lines:
                ReviewTrail(self.gr, line).integrate(commit)

    def _refresh_after_pull(self, pl) -> None:
        from ..views import projection  # imported where it is used (keeps read paths light)
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
        from ..git import sync
        from ..git.review import list_trails
        name = sync.resolve_remote(self.gr, remote)
        result = sync.push(self.gr, name, lines, progress or sync.no_progress)
        trails = [t for t in list_trails(self.gr) if lines is None or t in lines]
        result.lines.extend(sync.push_review(self.gr, name, trails))
        return result

    def sync(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             attempts: int = 3) -> tuple:
        """Pull then push; when someone pushed in between, pull and push again (bounded)."""
        from ..git import sync
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
        from ..git import sync
        name = sync.resolve_remote(self.gr, remote)
        return name, sync.remote_setup(self.gr, name), sync.fetch_refspec(name)

    @classmethod
    def clone(cls, url: str, directory: Optional[str] = None, progress=None) -> tuple:
        """git clone, then pull the ledger from the new clone's origin."""
        from ..git import sync
        from ..git.repo import open_repo
        dest = sync.clone(url, directory)
        gr = open_repo(str(dest))
        led = cls(gr, gr.config_get("lifeline.defaultLine") or DEFAULT_LINE)
        names = sync.remotes(gr)
        remote = names[0] if names else "origin"
        _, pulled = led.pull(remote, None, progress)
        return led, dest, remote, pulled

    def unpushed(self, remote: Optional[str] = None) -> list:
        from ..git import sync
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
        from ..git import links
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


    # ==== agents: write policy and review trail (issue 5) ======================
    # What the agent's door (MCP) and the review commands call. An agent's write is
    # planned exactly like a human's (same validation, parents, thread and checkpoint
    # rules, by the same methods) and then routed by the project's policy: written
    # with an audit record, filed as a proposal, or refused. Policy: policy.py;
    # trail: review.py; formats: docs/FORMAT.md, "Review trail".

    def policy(self):
        """The write policy in effect (HEAD's .lifeline/policy.json, else the built-in one)."""
        from ..core.policy import load_policy
        return load_policy(self.gr)

    def review_trail(self):
        from ..git.review import ReviewTrail
        return ReviewTrail(self.gr, self.line)

    def _planner(self) -> "_Planner":
        return _Planner(self)

    def agent_write(self, kind: str, summary: str, body: str = "", parents: Optional[list] = None,
                    thread: Optional[str] = None, agent: str = "mcp-agent", provider: str = "none",
                    model: str = "unknown", via: str = "mcp") -> "AgentWrite":
        """An agent's append, routed by the policy (direct | propose | deny)."""
        fields = dict(kind=kind, summary=summary, body=body, parents=list(parents or []), agent=agent,
                      provider=provider, model=model)
        planner = self._planner()
        planned = planner.log_in_thread(thread, fields) if thread else planner.log(**fields)
        return self._route(planned.entry, via)

    def agent_checkpoint(self, thread: Optional[str], sections: dict, summary: Optional[str] = None,
                         agent: str = "mcp-agent", provider: str = "none", model: str = "unknown",
                         via: str = "mcp") -> "AgentWrite":
        """An agent's checkpoint: unchanged ones write nothing; the rest are routed by the policy."""
        planned = self._planner().checkpoint(thread, sections, summary, agent=agent, provider=provider, model=model)
        if not planned.written:
            return AgentWrite("unchanged", "", planned.entry, written=False)
        return self._route(planned.entry, via)

    def _route(self, entry: Entry, via: str) -> "AgentWrite":
        from ..core.policy import PolicyDenied
        if via == "mcp" and entry.agent == "human":
            raise InputError("agent 'human' is kept for people writing with the CLI; pass your agent's name "
                             "(e.g. claude-code) as agent")
        policy = self.policy()
        decision = policy.decide(entry.agent, entry.kind)
        if decision.mode == "deny":
            raise PolicyDenied(f"denied by policy: agent {entry.agent!r} may not write kind {entry.kind!r} "
                               f"(rule {decision.rule} in {policy.source}); nothing was written")
        if decision.mode == "propose":
            rec = self.review_trail().propose(entry, by=self.default_author(), via=via)
            return AgentWrite("propose", decision.rule, entry, written=False, proposal=rec)
        result = self.append([entry])
        if not result.added:
            return AgentWrite("direct", decision.rule, result.existing[0], written=False)
        audit = self.review_trail().record_direct(entry, decision.rule, by=self.default_author(), via=via)
        return AgentWrite("direct", decision.rule, entry, written=True, audit=audit)

    def propose(self, fields: dict, thread: Optional[str] = None, via: str = "cli"):
        """File a proposal explicitly (whatever the policy says); returns its review record."""
        planner = self._planner()
        planned = planner.log_in_thread(thread, dict(fields)) if thread else planner.log(**fields)
        return self.review_trail().propose(planned.entry, by=self.default_author(), via=via)

    def proposals(self, everything: bool = False) -> list:
        """Pending proposals (or all of them), oldest first."""
        from ..git.review import order_key
        props = self.review_trail().proposals().values()
        return sorted((p for p in props if everything or p.status == "pending"), key=lambda p: order_key(p.record))

    def _targets(self, trail, refs: list, props: dict) -> list:
        """(ref, Proposal or None, error or None) for each requested pid; `all` = every pending one."""
        from ..git.review import ReviewError, order_key
        refs = [r.strip() for r in refs if r.strip()]
        if not refs:
            raise InputError("name at least one proposal id, or all")
        if "all" in refs:
            if len(refs) > 1:
                raise InputError("give proposal ids or all, not both")
            pending = sorted((p for p in props.values() if p.status == "pending"), key=lambda p: order_key(p.record))
            return [(p.short, p, None) for p in pending]
        out, seen = [], set()
        for ref in refs:
            try:
                p = trail.resolve(ref, props)
            except ReviewError as exc:
                out.append((ref, None, str(exc)))
                continue
            if p.id not in seen:
                seen.add(p.id)
                out.append((ref, p, None))
        return out

    def _decide_each(self, refs: list, decide) -> list:
        """Run `decide(trail, proposal, by) -> (status, entry)` on each targeted pending
        proposal, under the trail's lock. Each is independent: a failure is reported
        for that proposal and the others go on."""
        from ..errors import LifelineError
        from ..git.review import already_decided
        trail = self.review_trail()
        by = self.default_author()
        results = []
        with trail.lock():
            props = trail.proposals()
            for ref, p, error in self._targets(trail, refs, props):
                if error is not None:
                    results.append(ReviewOutcome(ref, None, False, error))
                elif p.decision is not None:
                    results.append(ReviewOutcome(ref, p, False, already_decided(p)))
                else:
                    try:
                        status, entry = decide(trail, p, by)
                    except LifelineError as exc:
                        results.append(ReviewOutcome(ref, p, False, str(exc)))
                    else:
                        results.append(ReviewOutcome(ref, p, True, status, entry=entry))
        return results

    def approve(self, refs: list) -> list:
        """Seal proposals into the line. Each is independent: one failure does not stop the others."""
        from ..errors import LifelineError

        def seal(trail, p, by):
            c = p.content
            try:
                entry = self.make_entry(kind=c["kind"], summary=c["summary"], body=c["body"],
                                        parents=c["parents"], author=c["author"], agent=c["agent"],
                                        provider=c["provider"], model=c["model"])
                result = self.append([entry])
                stored = (result.added or result.existing)[0]
                status = "approved" if result.added else "duplicate"
                trail.decide(p.id, status, by, entry=stored.id)
            except LifelineError as exc:
                raise LifelineError(f"proposal {p.short} not approved: {exc}") from None
            return status, stored
        return self._decide_each(refs, seal)

    def reject(self, refs: list, why: str = "") -> list:
        """Close proposals without writing to the line; an approved one can never be rejected."""
        from ..git.review import MAX_WHY_CHARS
        why = (why or "").strip()
        if len(why) > MAX_WHY_CHARS:
            raise InputError(f"--why is longer than {MAX_WHY_CHARS} characters")

        def close(trail, p, by):
            trail.decide(p.id, "rejected", by, why=why)
            return "rejected", None
        return self._decide_each(refs, close)

    def audit(self, since: Optional[str] = None) -> list:
        """Every direct agent write and every decision on a proposal, oldest first:
        (record, the proposal it decides or None, whether it is the deciding one)."""
        from ..git.review import DECISIONS, build_proposals, order_key, parse_since
        limit = parse_since(since) if since else None
        records = self.review_trail().load().records
        props = build_proposals(records)
        out = []
        for r in sorted(records.values(), key=order_key):
            if r.type == "proposed" or (limit is not None and r.ts < limit):
                continue
            p = props.get(r.doc["proposal"]) if r.type in DECISIONS else None
            out.append((r, p, p is None or p.decision is r))
        return out

    def install_mcp_config(self) -> tuple:
        """Add the `lifeline` server to the work tree's .mcp.json (Claude Code's project file)."""
        from .integration import install_mcp_json
        if self.gr.workdir is None:
            return ("skipped", "a bare repository has no work tree for .mcp.json")
        return install_mcp_json(self.gr.workdir)
    # ==== end of agents: write policy and review trail ===========================


def _projection_lock(lock_path: Path):
    """Serialises projection writers (an advisory lock, released by the OS if the holder dies)."""
    from ..git.store import file_lock
    return file_lock(lock_path)


@dataclass
class AgentWrite:
    """What became of an agent's write."""

    mode: str                      # direct | propose | unchanged (a checkpoint that says nothing new)
    rule: str                      # the policy rule that decided ("" when unchanged)
    entry: Entry                   # the entry written, found, or proposed
    written: bool                  # True only when the line grew
    proposal: object = None        # review record of the proposal (mode propose)
    audit: object = None           # review record of the direct write (mode direct, written)


@dataclass
class ReviewOutcome:
    """One proposal's result in an approve/reject batch."""

    ref: str                       # what the user typed (or the short pid for `all`)
    proposal: object               # review.Proposal, or None when the ref did not resolve
    ok: bool
    status: str                    # approved | duplicate | rejected, or the failure message
    entry: Optional[Entry] = None  # the entry an approval sealed (or found)


class _Planner(Ledger):
    """A Ledger whose `log` returns the entry it would write instead of writing it.

    Lets an agent's write reuse every rule of log/log_in_thread/checkpoint (validation,
    thread chaining, unchanged checkpoints) before the policy decides where it goes.
    """

    def __init__(self, owner: Ledger):
        super().__init__(owner.gr, owner.line)
        self._owner = owner

    def state(self, commit: Optional[str] = None) -> state.State:
        return self._owner.state(commit)

    def log(self, **fields) -> LogOutcome:
        return LogOutcome(self.make_entry(**fields), True, None, None)


class ConfinedLedger(Ledger):
    """The Ledger of a long-running face (the MCP server).

    It never writes outside the repository's git dir (no projection refresh: the next
    `git lifeline` write or `git lifeline render` brings LIFELINE.md up to date), and it
    keeps the derived state of the current head in memory between calls: the state is a
    pure function of the head commit, so it is reused exactly while the head is the same.
    A new head (anyone's append) goes through the cache like every other reader.
    """

    _memo: Optional[tuple] = None      # (head commit, State)

    def projection_path(self) -> Optional[Path]:
        return None

    def state(self, commit: Optional[str] = None) -> state.State:
        head = self.store.head()
        if commit is not None and commit != head:
            return super().state(commit)
        if self._memo is None or self._memo[0] != head:
            self._memo = (head, super().state(head))
        return self._memo[1]


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
