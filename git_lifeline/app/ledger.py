"""One line of the ledger: its truth, what is read from it, and writing to it.

Writing is two steps: *plan* an entry (every write rule, the secret scan, parents,
thread chaining, "does this checkpoint say anything new?") without touching the
repository, then *persist* it. The agents' door plans the same way and lets the
write policy choose where the entry goes (agents.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from ..core.entry import KINDS, abbrev, entry_order_key
from ..errors import DedupKeyConflict, InputError
from ..git.fanout import AppendResult
from ..git.names import DEFAULT_LINE
from ..git.provenance import IMPORT_TRAILER
from ..git.repo import GitRepo
from ..git.store import LineStore
from .draft import CheckpointDraft, Draft, Headers
from .projection_file import ProjectionFile
from .write_checks import WriteChecks

# The truth (core/truth.py and what it imports) and the context's modules (views/context*,
# app/context_run, app/provenance, app/staleness_kept) are imported by the methods that
# read: a `log` of a plain entry needs none of them, and every CLI process that writes
# opens a Ledger (docs/PERFORMANCE.md, "Start-up of `log`").
if TYPE_CHECKING:  # annotations only
    from ..core import truth
    from ..core.entry import Entry
    from ..git.history import StaleFindings, Staleness
    from ..views.cache import LineCache
    from ..views.context import ContextParts
    from ..views.context_sections import ContextInput
    from ..views.recall import Hit
    from ..views.semantic import Index


@dataclass
class LogOutcome:
    """What became of a write: the entry written (or the one already there)."""

    entry: Entry
    written: bool
    commit: Optional[str]
    projection: Optional[Path]


@dataclass
class Planned:
    """A planned entry. `new` is False when the line already says it (an unchanged
    checkpoint, a decision already pinned): `entry` is then the one in the line."""

    entry: Entry
    new: bool = True


MESSAGE_IDS = 20  # a batch's commit message names at most this many entries (its tree holds them all)


def _correction_lines(
    entries: list[Entry], describe: Optional[Callable[[str], Optional[str]]]
) -> tuple[list[str], list[str]]:
    """(sentences, trailers) naming what the corrections among `entries` correct."""
    sentences: list[str] = []
    trailers: list[str] = []
    for e in entries:
        if e.kind != "correction":
            continue
        # the truth's modules, for a correction's message only (see the imports above)
        from ..core.truth import is_revert

        verb = "Reverts" if is_revert(e.body) else "Revises"
        for p in e.parents:
            what = describe(p) if describe is not None else None
            sentences.append(f"{verb} {abbrev(p)}" + (f" ({what})" if what else "") + ".")
            trailers.append(f"Lifeline-{verb}: {p}\n")
    return sentences, trailers


def paths_matching_nothing(gr: GitRepo, body: str) -> list[str]:
    """A warning per pathspec of the `paths:` header that matches no file: recorded as
    given (the code may come later), but such a decision can never be marked stale."""
    from ..core import blocks

    value = blocks.field(body, "paths")
    if not value:
        return []
    # Only an entry that names code paths reads the work tree: the modules that know
    # pathspecs and git's file listing are imported for it alone, not for every `log`.
    from ..core.anchors import anchor_file
    from ..git.codelog import unmatched_pathspecs
    from ..git.history import pathspecs

    return [
        f"paths: {spec!r} matches no file in the work tree; the decision is recorded, but no code "
        "change can mark it stale until a file matches (check the pathspec)"
        for spec in unmatched_pathspecs(gr, [anchor_file(item) for item in pathspecs(value)])
    ]


def described(store: LineStore, entry_id: str) -> Optional[str]:
    """`kind: summary` of an entry of the line, or None (what a commit message names)."""
    e = store.read(entry_id)
    return kind_and_summary(e) if e is not None else None


def kind_and_summary(e: Entry) -> str:
    """`kind: summary`, what a commit subject and a correction's paragraph call an entry; a
    summary that already opens with its kind (a checkpoint's derived `checkpoint main: ...`)
    is not prefixed again."""
    first = e.summary.split(maxsplit=1)[0].rstrip(":").lower() if e.summary.strip() else ""
    return e.summary if first == e.kind else f"{e.kind}: {e.summary}"


def commit_message(
    entries: list[Entry],
    describe: Optional[Callable[[str], Optional[str]]] = None,
    subject: Optional[str] = None,
    imported: Optional[str] = None,
) -> str:
    """The ledger commit's message (docs/FORMAT.md §4): one entry's kind, summary and body,
    or a batch's count; what a correction corrects (`describe(id)` says what that entry is);
    trailers naming the entries (a batch names its first MESSAGE_IDS, so an import of
    10,000 entries writes a message of a few kilobytes). `imported` names the source of an
    import (`adr`, `lifeline-context`): its trailer marks the entries it adds as imported
    (core/trust.py)."""
    ordered = sorted(entries, key=entry_order_key)
    sentences, trailers = _correction_lines(ordered[:MESSAGE_IDS], describe)
    if imported is not None:
        trailers.append(f"{IMPORT_TRAILER}: {imported}\n")
    corrects = " ".join(sentences)
    if len(entries) == 1:
        e = entries[0]
        body = f"\n\n{e.body}" if e.body else ""
        note = f"\n\n{corrects}" if corrects else ""
        return f"{subject or kind_and_summary(e)}{body}{note}\n\nLifeline-Id: {e.id}\n{''.join(trailers)}"
    listed = ordered[:MESSAGE_IDS]
    paragraphs = [subject or f"lifeline: add {len(entries)} entries"]
    if corrects:
        paragraphs.append(corrects)
    if len(ordered) > len(listed):
        paragraphs.append(
            f"The first {len(listed)} are named below, in (ts, id) order; the commit's tree holds all {len(entries)}."
        )
    return "\n\n".join(paragraphs) + "\n\n" + "".join(f"Lifeline-Id: {e.id}\n" for e in listed) + "".join(trailers)


def with_headers(body: str, headers: Headers) -> str:
    """`body` with the header fields `headers` asks for on top, checked and normalised
    (core/blocks.py)."""
    if not headers:
        return body
    from ..core import blocks

    fields = blocks.header_from_options(
        paths=list(headers.paths),
        subject=headers.subject,
        valid_from=headers.valid_from,
        valid_until=headers.valid_until,
    )
    try:
        return blocks.with_header(body, fields)
    except ValueError as exc:
        raise InputError(str(exc)) from None


class Ledger:
    """One line of a repository's ledger.

    `warnings` is the sink for what the user should hear about after an operation has succeeded
    (a projection that could not be refreshed, a cache rebuilt because the line was rewound); the
    faces print it. `confined` keeps every write inside the git dir (the MCP server's rule): no projection file."""

    def __init__(
        self, gr: GitRepo, line: str = DEFAULT_LINE, warnings: Optional[list[str]] = None, confined: bool = False
    ):
        self.gr = gr
        self.store = LineStore(gr, line)
        self.checks = WriteChecks(gr, self.store)
        self.line = line
        self.warnings: list[str] = warnings if warnings is not None else []
        self.projection = ProjectionFile(self.store, self.warnings, confined)
        self._cache: Optional[LineCache] = None
        # The truth is a pure function of the head commit: kept while the head is the same
        # (a long-running face answers many calls from it), recomputed when anyone appends.
        self._memo: Optional[tuple[Optional[str], truth.State]] = None
        self._told_empty = False

    def note_if_empty(self, head: Optional[str]) -> None:
        """A read of a line with no entries here says where they may be (empty_ledger.py)."""
        if head is None and not self._told_empty:
            from .empty_ledger import hint_for_humans

            self._told_empty = True
            hint = hint_for_humans(self.gr, self.line)
            if hint:
                self.warnings.append(hint)

    def default_author(self) -> str:
        name, email = self.gr.identity()
        return f"{name} <{email}>"

    def projection_path(self) -> Optional[Path]:
        return self.projection.path

    # ---- reading -----------------------------------------------------------------
    def head(self) -> Optional[str]:
        return self.store.head()

    def entries(self, commit: Optional[str] = None, kind: Optional[str] = None) -> list[Entry]:
        """The line's entries, oldest first (only those of `kind` when given)."""
        if kind is not None and kind not in KINDS:
            raise InputError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
        loaded = self.store.load(commit)
        if commit is None:
            self.note_if_empty(self.store.head())
        return [e for e in sorted(loaded.entries.values(), key=entry_order_key) if kind is None or e.kind == kind]

    def show(self, ref: str) -> Entry:
        """The entry `ref` names (an id or a unique prefix)."""
        entry = self.store.read(self.store.resolve(ref))
        if entry is None:
            raise InputError(f"no entry {ref!r} in line {self.line!r}")
        return entry

    def exists(self) -> bool:
        """Whether the line has entries or a review trail (a mistyped --line has neither)."""
        if self.store.head() is not None:
            return True
        from ..git.namespaces import REVIEW

        return self.line in REVIEW.names(self.gr)

    def require(self) -> "Ledger":
        """This ledger, or InputError naming the lines there are: for a command that reads
        a line named with --line (a typo would otherwise read as an empty ledger)."""
        if not self.exists():
            from ..git.namespaces import LEDGER

            names = ", ".join(LEDGER.names(self.gr)) or "none yet"
            raise InputError(
                f"unknown line {self.line!r} (lines: {names}); a line is created by its first "
                "write (log, import, promote --to)"
            )
        return self

    def cache(self) -> LineCache:
        if self._cache is None:
            from ..views.cache import LineCache

            self._cache = LineCache(self.store, self.warnings)
        return self._cache

    def state(self, commit: Optional[str] = None) -> truth.State:
        """Current truth at `commit` (default: head); the head's goes through the cache."""
        head = self.store.head()
        if commit is not None and commit != head:
            from ..core import truth

            return truth.reduce(self.store.load(commit).entries.values())
        if self._memo is None or self._memo[0] != head:
            self.note_if_empty(head)
            self._memo = (head, self.cache().state(head))
        return self._memo[1]

    def state_as_of(self, when: str) -> truth.State:
        """The truth as the ledger stood then: a date in any form the other date flags take
        (core/dates.py; a bare day means its end), or a ledger commit."""
        from ..core import truth
        from ..core.dates import FORMS_HELP, as_of_date

        text = when.strip()
        limit = as_of_date(text)
        if limit is not None:
            # Bitemporal: entries recorded by then, with validity windows read at then.
            return truth.reduce(
                (e for e in self.store.load().entries.values() if e.ts <= limit), now=f"{limit:%Y-%m-%dT%H:%M:%S.%f}"
            )
        commit = self.gr.resolve_commit(text)
        if commit is None:
            raise InputError(f"--as-of {when!r}: neither a date ({FORMS_HELP}) nor a commit")
        head = self.head()
        if head is None or not self.gr.is_ancestor(commit, head):
            raise InputError(f"--as-of {when!r}: not a commit of line {self.line!r}")
        return self.state(commit)

    def thread_key(self, thread: str, st: Optional[truth.State] = None) -> str:
        from ..core import truth

        st = st or self.state()
        key = truth.thread_key(thread, st.fold.opens)
        if key not in st.threads and key not in st.checkpoints:
            known = ", ".join(sorted(abbrev(k) if len(k) == 64 else k for k in st.threads)) or "none"
            raise InputError(f"unknown thread {thread!r} in line {self.line!r} (threads: {known})")
        return key

    def stale(self, st: Optional[truth.State] = None, rev: str = "HEAD") -> list[Staleness]:
        """Decisions in force whose code (their `paths:`) changed after they were made, in
        the history of `rev` (a full commit id or HEAD), strongest first."""
        return self.staleness(st=st, rev=rev).stale

    def staleness(
        self,
        since: Optional[str] = None,
        st: Optional[truth.State] = None,
        rev: str = "HEAD",
        flag: str = "--since-commit",
    ) -> StaleFindings:
        """`stale`, and the decisions whose staleness a shallow clone cannot tell (`flag`: the
        option that gave `since`, named when it is not a commit)."""
        from ..git.history import find_stale

        st = st or self.state()
        if since is not None and not self.gr.names_commit(since):
            raise InputError(f"{flag} {since!r}: not a commit")
        return find_stale(
            self.gr, st.fold.facts, self.checks.rechecked(st), st.decision_ids, rev, since_rev=since, store=self.store
        )

    def stale_since(self, since: Optional[str] = None, since_commit: Optional[str] = None) -> StaleFindings:
        """`stale` bounded by a date (`since`: any form of core/dates.py, the same meaning as
        every other --since) or by a code commit (`since_commit`). A `since` that is no date
        but names a commit is read as one, as before, with a warning."""
        from ..core.dates import DateError, parse_when

        if since is not None and since_commit is not None:
            raise InputError("give --since or --since-commit, not both")
        if since is None:
            return self.staleness(since=since_commit)
        try:
            when = parse_when(since, what="--since")
        except DateError:
            if self.gr.resolve_commit(since) is None:
                raise
            self.warnings.append(
                f"--since {since!r} names a commit: that form is deprecated, "
                f"use --since-commit {since} (--since takes a date, as everywhere else)"
            )
            return self.staleness(since=since, flag="--since")
        # The newest commit on HEAD recorded before then: commits after it are "since".
        return self.staleness(since=self.gr.last_commit_before(int(when.start.timestamp())))

    def recall(self, query: str, k: int = 5) -> list[Hit]:
        """Search hits (views.recall.Hit), best first; empty when recall abstains."""
        from .recall import answer

        return answer(self, query, k).hits

    recall_mode: tuple[str, str] = (
        "lexical",
        "no model configured: semantic recall needs the [semantic] extra "
        "(pip install '.[semantic]' from a checkout) and a model (git lifeline model fetch)",
    )

    def semantic_index(self) -> Optional[Index]:
        """The semantic index when `lifeline.semantic.model` names a usable model, else None
        (recall is then lexical; `recall_mode` says which and why)."""
        from .models import configured_index

        index, mode = configured_index(self.gr, self.warnings)
        self.recall_mode = mode or type(self).recall_mode
        return index

    def resume(self, thread: Optional[str] = None) -> list[truth.Checkpoint]:
        """The live checkpoint of each thread (truth.Checkpoint), newest first."""
        st = self.state()
        cps = sorted(st.checkpoints.values(), key=lambda c: entry_order_key(c.entry), reverse=True)
        if thread is not None:
            key = self.thread_key(thread, st)
            cps = [c for c in cps if c.thread == key]
        return cps

    def thread_name(self, key: str) -> str:
        """What a thread is called: its open item's summary, or its name."""
        st = self.state()
        return st.by_id[key].summary if key in st.by_id else key

    def context(
        self,
        budget: Optional[int] = None,
        budget_tokens: Optional[int] = None,
        query: Optional[str] = None,
        thread: Optional[str] = None,
        as_of: Optional[str] = None,
        k: int = 5,
        notice: str = "",
    ) -> ContextParts:
        """The context within the budget; `notice` (catch_up.CatchUp.notice) comes first."""
        from ..core import truth
        from ..core.dates import as_of_date
        from ..core.status import status_of
        from .context_run import assembled, checked_budget, context_input
        from .provenance import line_provenance
        from .staleness_kept import context_staleness

        budget = checked_budget(budget, budget_tokens, self.gr.config_int)
        whole_line = not (query or thread or as_of)
        if whole_line and not notice:
            from .warm_context import kept_parts

            kept = kept_parts(self.gr, self.line, self.store.head(), budget, budget_tokens)
            if kept is not None:
                return kept  # answered for exactly this head, trail, code view and time (views/context_kept.py)
        st = self.state_as_of(as_of) if as_of else self.state()
        if thread is not None:
            st = truth.for_thread(st, self.thread_key(thread, st))
        relevant = []
        if query:
            relevant = [(st.by_id[h.id], status_of(st, h.id)) for h in self.recall(query, k=k) if h.id in st.by_id]
        stale = context_staleness(self.gr, self.store, st, lambda part: self.staleness(st=part), not (thread or as_of))
        # as of a date, as the team had reviewed by then: a later approval does not count
        provenance = line_provenance(self.gr, self.store, as_of_date(as_of) if as_of else None)
        inp = context_input(st, self.line, self.store.head(), stale, provenance, relevant, query, thread)
        with_history_notes(inp, self.gr, notice)
        parts = assembled(inp, budget, budget_tokens, self.gr.config_get)
        if whole_line:
            from .warm_context import keep_answer

            keep_answer(self.gr, inp, parts, budget, budget_tokens)  # for the next warm `context`
        return parts

    # ---- planning: every write rule, nothing written ---------------------------------
    def resolve_parents(self, refs: list[str]) -> list[str]:
        if any(":" in r for r in refs):  # `line:prefix` names a parent in another line
            from ..git.lines import LineIndex, resolve_ref

            index = LineIndex.scan(self.gr)
            return sorted({resolve_ref(self.gr, self.store, r, index) for r in refs})
        return sorted({self.store.resolve(r) for r in refs})

    def plan_entry(self, draft: Draft) -> Entry:
        """A new entry under every write rule, the secret scan included (entry.new_entry).

        The draft's `headers` are checked, normalised and written on top of the body. A
        header value the truth cannot read is refused; a line that looks like a header but
        is not one (a typo, a header below the prose) is a warning. `allow_secret` records a
        reasoned override of the secret scan. A ts before a parent's or too far in the
        future is refused (core/clock.py). With a `thread`, the body starts with `thread:`
        and the entry chains to the thread's head."""
        from ..core import blocks
        from ..core.entry import new_entry, parse_ts, utcnow
        from ..core.headers import refuse_bad_headers

        draft.refuse_forged_arguments()
        self.checks.refuse_a_second_history(draft.kind)
        body = draft.body
        parents: list[str] = list(draft.parents)
        if draft.thread:
            from ..core import truth

            st = self.state()
            key = truth.thread_key(draft.thread, st.fold.opens)
            if blocks.field(body, "thread") is None:
                body = blocks.render_header({"thread": key}) + body
            head = st.threads.get(key, [])[-1:] or ([key] if key in st.by_id else [])
            parents = sorted(set(parents) | set(head))
        body = with_headers(body, draft.headers)
        if draft.allow_secret is not None:
            from ..core.secrets import record_override

            body = record_override(body, draft.allow_secret)
        problems = blocks.header_value_problems(blocks.header_fields(body)) if draft.kind != "relation" else []
        if problems:
            raise InputError(f"body header: {problems[0]}")
        resolved = self.resolve_parents(parents)
        times = self.checks.parent_times(resolved)
        now = utcnow()
        # A child is written after what it names: a clock behind a parent's writes the parent's ts.
        when = parse_ts(draft.ts) if draft.ts is not None else max([now, *(t for _, t in times if t is not None)])
        entry = new_entry(
            kind=draft.kind,
            summary=draft.summary.strip(),
            body=body,
            author=(draft.author or self.default_author()).strip(),
            agent=draft.agent,
            provider=draft.provider,
            model=draft.model,
            parents=resolved,
            dedup_key=draft.dedup_key,
            ts=when,
        )
        refuse_bad_headers(entry)
        self.checks.refuse_bad_time(entry, times, now)
        for warning in blocks.header_warnings(entry.body, entry.kind) + paths_matching_nothing(self.gr, entry.body):
            if warning not in self.warnings:
                self.warnings.append(warning)
        return entry

    def plan_checkpoint(self, draft: CheckpointDraft) -> Planned:
        """A checkpoint of a thread; not new when the live one already says exactly this."""
        from ..core import blocks, truth

        blocks.refuse_line_break("thread", draft.thread)
        thread = (draft.thread or truth.MAIN_THREAD).strip()
        sections = draft.sections
        st = self.state()
        key = truth.thread_key(thread, st.fold.opens)
        if not any(sections.get(s) for s in blocks.CHECKPOINT_SECTIONS):
            raise InputError("a checkpoint needs at least one of --goal/--done/--next/--blocked/--tried")
        for name, items in sections.items():
            for item in items:
                if not item.strip() or "\n" in item or "\r" in item:
                    raise InputError(f"--{name} items must be single non-empty lines")
        body = blocks.render_header({"thread": key}) + "".join(
            blocks.render_list_block(s, [i.strip() for i in sections.get(s, [])]) for s in blocks.CHECKPOINT_SECTIONS
        )
        name = st.by_id[key].summary if key in st.by_id else key
        first = next((sections[s][0] for s in ("next", "goal", "blocked", "done", "tried") if sections.get(s)), "")
        summary = draft.summary or f"checkpoint {name[:60]}: {first}"[:300].strip()
        live = st.checkpoints.get(key)
        if live is not None and live.entry.body == body.strip() and live.entry.summary == summary:
            return Planned(live.entry, new=False)
        parents = [st.threads[key][-1]] if st.threads.get(key) else ([key] if key in st.by_id else [])
        return Planned(self.plan_entry(draft.writer.draft("checkpoint", summary, body, parents, draft.allow_secret)))

    # ---- persisting ----------------------------------------------------------------
    def _dedup_hit(self, e: Entry, head: Optional[str]) -> bool:
        """Whether `e` is already in the line by its dedup key; DedupKeyConflict when
        the key is held by an entry of other content."""
        if e.dedup_key is None or head is None:
            return False
        holder = self.cache().dedup_holder(head, e.dedup_key)
        if holder is None or holder == e.id:
            return holder is not None
        held = self.store.read(holder)
        raise DedupKeyConflict(
            f"dedup key {e.dedup_key!r} is already held by {holder[:12]}"
            + (f" ({held.kind}: {held.summary})" if held is not None else "")
            + ", an entry with other content; nothing written",
            "the same content again is a no-op; other content needs another key",
        )

    def append(
        self, entries: list[Entry], subject: Optional[str] = None, imported: Optional[str] = None
    ) -> AppendResult:
        """Write planned entries in one commit (those already present are not written again);
        `subject` and `imported` go to commit_message (a verb's first line, an import's source)."""
        message = lambda new: commit_message(new, lambda i: described(self.store, i), subject, imported)  # noqa: E731
        result = self.store.append(entries, message, self._dedup_hit)
        if result.commit:
            self.projection.refresh(result.parent, result.added, result.commit)
        return result

    def persist(self, entry: Entry) -> LogOutcome:
        result = self.append([entry])
        stored = result.added[0] if result.added else result.existing[0]
        return LogOutcome(stored, bool(result.added), result.commit, self.projection.path)

    def unchanged(self, planned: Planned) -> LogOutcome:
        return LogOutcome(planned.entry, False, None, self.projection.path)

    def log(self, draft: Draft) -> LogOutcome:
        return self.persist(self.plan_entry(draft))

    def checkpoint(self, draft: CheckpointDraft) -> LogOutcome:
        planned = self.plan_checkpoint(draft)
        return self.persist(planned.entry) if planned.new else self.unchanged(planned)

    def render(self) -> Path:
        """Rewrite the projection file from the ref."""
        return self.projection.render()


def with_history_notes(inp: ContextInput, gr: GitRepo, notice: str) -> None:
    """What a context says first: `notice` (catch_up.CatchUp.notice), two bootstraps in force
    as a conflict (never a silent swap of the What), and, for an empty line a remote may hold,
    that pull, not a bootstrap, comes next (empty_ledger.py)."""
    from . import empty_ledger

    if len(inp.state.identities) > 1:
        notice += f"> **Conflict:** {empty_ledger.identity_conflict(inp.state.identities)}\n\n"
    inp.notice = notice
    if inp.head_commit is None:
        inp.empty_text = empty_ledger.text_for_humans(gr, inp.line)
