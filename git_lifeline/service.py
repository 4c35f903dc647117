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
        self._cache = None

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
        """Current truth at `commit` (default: head); the head goes through the cache."""
        head = self.store.head()
        if commit is None or commit == head:
            good, broken = self.cache().entries(head)
            return state.reduce_verified(good, broken)
        return state.reduce(self.store.load(commit).entries.values())

    def cache(self):
        if self._cache is None:
            from .cache import LineCache
            self._cache = LineCache(self.store)
        return self._cache

    def show(self, ref: str) -> Entry:
        entry_id = self.store.resolve(ref)
        return self.store.get(entry_id)

    def context(self, budget: Optional[int] = None, budget_tokens: Optional[int] = None,
                query: Optional[str] = None, thread: Optional[str] = None,
                as_of: Optional[str] = None, k: int = 5) -> ctx.ContextParts:
        from .tokens import measure_for
        if budget is not None and budget_tokens is not None:
            raise InputError("give --budget or --budget-tokens, not both")
        for name, value in (("--budget", budget), ("--budget-tokens", budget_tokens)):
            if value is not None and value < 0:
                raise InputError(f"{name} must be zero or more")
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
                               query=query, thread=thread)
        if budget_tokens is not None:
            return ctx.assemble(inp, budget_tokens, measure_for(self.gr.config_get("lifeline.tokenizer", "estimate")))
        return ctx.assemble(inp, budget)

    def state_as_of(self, when: str) -> state.State:
        """The truth as the ledger stood then: a ledger commit, or a date (entries recorded by then)."""
        import re
        from datetime import timedelta
        text = when.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            limit = parse_ts(text + "T00:00:00+00:00") + timedelta(days=1)
            return state.reduce(e for e in self.store.load().entries.values() if e.ts < limit)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}T.*", text):
            limit = parse_ts(text)
            return state.reduce(e for e in self.store.load().entries.values() if e.ts <= limit)
        try:
            commit = self.gr.repo.revparse_single(text).peel(None)
        except (KeyError, ValueError, Exception):
            raise InputError(f"--as-of {when!r}: not a date (YYYY-MM-DD[THH:MM:SSZ]) nor a commit") from None
        import pygit2
        if not isinstance(commit, pygit2.Commit) or not (str(commit.id) == self.head() or
                                                         self.gr.repo.descendant_of(self.head(), commit.id)):
            raise InputError(f"--as-of {when!r}: not a commit of line {self.line!r}")
        return self.state(str(commit.id))

    def thread_key(self, thread: str, st: Optional[state.State] = None) -> str:
        st = st or self.state()
        key = state.thread_key(thread, [e for e in st.entries if e.kind == "open"])
        if key not in st.threads and key not in st.checkpoints:
            known = ", ".join(sorted(k[:8] if len(k) == 64 else k for k in st.threads)) or "none"
            raise InputError(f"unknown thread {thread!r} in line {self.line!r} (threads: {known})")
        return key

    def recall(self, query: str, k: int = 5) -> list:
        from . import recall
        if k < 1:
            raise InputError("-k must be at least 1")
        return recall.search(self.cache().ensure(self.store.head()), query, k)

    # ---- working state -----------------------------------------------------
    def checkpoint(self, thread: Optional[str], sections: dict, summary: Optional[str] = None,
                   **who) -> LogOutcome:
        from . import blocks
        thread = (thread or state.MAIN_THREAD).strip()
        st = self.state()
        key = state.thread_key(thread, [e for e in st.entries if e.kind == "open"])
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
        from . import blocks
        st = self.state()
        key = state.thread_key(thread, [e for e in st.entries if e.kind == "open"])
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
        if target not in {d.id for d in st.decisions}:
            raise InputError(f"{ref!r} is not a decision in force; only those can be pinned")
        if target in st.pinned:
            return LogOutcome(st.by_id[target], False, None, self.projection_path())
        d = st.by_id[target]
        return self.log(kind="note", summary=f"pin: {d.summary}"[:300], parents=[target],
                        body=f"pin: {target}\n\nPinned as a foundation of the context.", **who)

    def unpin(self, ref: str, **who) -> LogOutcome:
        from . import blocks
        st = self.state()
        target = self.store.resolve(ref)
        notes = [e for e in st.entries if e.id not in st.superseded and blocks.field(e.body, "pin") == target
                 and target in e.parents]
        if not notes:
            raise InputError(f"{ref!r} is not pinned")
        return self.log(kind="correction", summary=f"unpin: {st.by_id[target].summary}"[:300],
                        parents=[n.id for n in notes], body="action: revert\n\nUnpinned.", **who)

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

    # ==== agents: write policy and review trail (issue 5) ======================
    # What the agent's door (MCP) and the review commands call. An agent's write is
    # planned exactly like a human's (same validation, parents, thread and checkpoint
    # rules, by the same methods) and then routed by the project's policy: written
    # with an audit record, filed as a proposal, or refused. Policy: policy.py;
    # trail: review.py; formats: docs/FORMAT.md, "Review trail".

    def policy(self):
        """The write policy in effect (HEAD's .lifeline/policy.json, else the built-in one)."""
        from .policy import load_policy
        return load_policy(self.gr)

    def review_trail(self):
        from .review import ReviewTrail
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
        from .policy import PolicyDenied
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
        from .review import order_key
        props = self.review_trail().proposals().values()
        return sorted((p for p in props if everything or p.status == "pending"), key=lambda p: order_key(p.record))

    def _targets(self, trail, refs: list, props: dict) -> list:
        """(ref, Proposal or None, error or None) for each requested pid; `all` = every pending one."""
        from .review import ReviewError, order_key
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

    def approve(self, refs: list) -> list:
        """Seal proposals into the line. Each is independent: one failure does not stop the others."""
        from .errors import LifelineError
        from .review import already_decided
        trail = self.review_trail()
        by = self.default_author()
        results = []
        with trail.lock():
            props = trail.proposals()
            for ref, p, error in self._targets(trail, refs, props):
                if error is not None:
                    results.append(ReviewOutcome(ref, None, False, error))
                    continue
                if p.decision is not None:
                    results.append(ReviewOutcome(ref, p, False, already_decided(p)))
                    continue
                try:
                    c = p.content
                    entry = self.make_entry(kind=c["kind"], summary=c["summary"], body=c["body"],
                                            parents=c["parents"], author=c["author"], agent=c["agent"],
                                            provider=c["provider"], model=c["model"])
                    result = self.append([entry])
                    stored = (result.added or result.existing)[0]
                    status = "approved" if result.added else "duplicate"
                    trail.decide(p.id, status, by, entry=stored.id)
                except LifelineError as exc:
                    results.append(ReviewOutcome(ref, p, False, f"proposal {p.short} not approved: {exc}"))
                    continue
                results.append(ReviewOutcome(ref, p, True, status, entry=stored))
        return results

    def reject(self, refs: list, why: str = "") -> list:
        """Close proposals without writing to the line; an approved one can never be rejected."""
        from .errors import LifelineError
        from .review import MAX_WHY_CHARS, already_decided
        why = (why or "").strip()
        if len(why) > MAX_WHY_CHARS:
            raise InputError(f"--why is longer than {MAX_WHY_CHARS} characters")
        trail = self.review_trail()
        by = self.default_author()
        results = []
        with trail.lock():
            props = trail.proposals()
            for ref, p, error in self._targets(trail, refs, props):
                if error is not None:
                    results.append(ReviewOutcome(ref, None, False, error))
                    continue
                if p.decision is not None:
                    results.append(ReviewOutcome(ref, p, False, already_decided(p)))
                    continue
                try:
                    trail.decide(p.id, "rejected", by, why=why)
                except LifelineError as exc:
                    results.append(ReviewOutcome(ref, p, False, str(exc)))
                    continue
                results.append(ReviewOutcome(ref, p, True, "rejected"))
        return results

    def audit(self, since: Optional[str] = None) -> list:
        """Every direct agent write and every decision on a proposal, oldest first:
        (record, the proposal it decides or None, whether it is the deciding one)."""
        from .review import DECISIONS, build_proposals, order_key, parse_since
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
