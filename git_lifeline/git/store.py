"""A line of the ledger as git objects: one ref, one commit per append, one blob per entry.

Layout (docs/FORMAT.md is the normative description):
    refs/lifeline/<line> -> commit -> tree { entries/<id[0:2]>/<id[2:4]>/<id[4:]> : blob }
Each blob is the entry's canonical JSON. Every commit's tree is the full snapshot of
the line, so any commit answers "what was the ledger then" and a merge is a union.

The storage engine is fanout.FanoutLog (the ledger is its LEDGER namespace); a
`LineStore` adds only what is particular to lines: entry prefixes, the append that
dedups by key, and the merge commit's message.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from ..core.entry import MIN_PREFIX, abbrev, entry_order_key
from ..errors import InputError
from .blobs import read_blobs, tree_blobs
from .fanout import AppendResult, FanoutLog
from .libgit2 import pygit2
from .names import DEFAULT_LINE
from .namespaces import LEDGER
from .repo import GitRepo
from .trees import TreeLookup, Union, commit_at, entry_path

if TYPE_CHECKING:  # annotations only
    from ..core.entry import Entry

REF_PREFIX = LEDGER.ref_prefix
ENTRIES_DIR = LEDGER.tree_dir
_LISTED_IN_MESSAGE = 10
_HEX = re.compile(r"[0-9a-f]+")
REMIND_SCAN_LIMIT = 1000
# The code commit HEAD was at when entries were appended, as a trailer of their ledger
# commit: outside the hashed entries, so it changes no id (history.py reads it).
CODE_TRAILER = "Lifeline-Code"


class LineStore(FanoutLog):
    """Reads and appends one line (`refs/lifeline/<line>`)."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        super().__init__(gr, LEDGER, line)

    @property
    def line(self) -> str:
        return self.name

    def stream(self, commit_id: Optional[str]) -> Iterator[Entry]:
        """The entries `load` returns for a commit, checked alike (check_data), one at a time
        and in no particular order: read by git cat-file beside this process, none held
        after it is handed on (a million-entry line loaded whole took 2.3 GB)."""
        tree = self.tree_id(commit_id)
        if tree is None:
            return
        for path, _oid, data in tree_blobs(self.gr, tree):
            entry, _problem = self.check_data(path, data)
            if entry is not None:
                yield entry

    def entries_at(self, ids: list[str], commit_id: Optional[str]) -> Iterator[tuple[str, Optional[Entry]]]:
        """(id, the entry `load` gives for it at the commit, or None where it gives none), in
        the order given: each id's blob found in the commit's tree and read by one git
        cat-file, checked alike (check_data) as it is handed on. The blobs are all read
        first: cat-file stopped while it is fed would end a CLI process with SIGPIPE."""
        tree = TreeLookup(self.tree(commit_id))
        found = [(entry_id, tree.find(entry_id)) for entry_id in ids]
        data = dict(read_blobs(self.gr, [str(oid) for _, oid in found if oid is not None]))
        for entry_id, oid in found:
            blob = data.get(str(oid)) if oid is not None else None
            yield entry_id, self.check_data("/".join(entry_path(entry_id)), blob)[0] if blob is not None else None

    def resolve(self, prefix: str, commit_id: Optional[str] = None) -> str:
        """Full id for a full id or a unique prefix of at least MIN_PREFIX hex chars.

        Costs a couple of tree reads whatever the ledger size, thanks to the fan-out.
        """
        p = prefix.strip().lower()
        if len(p) < MIN_PREFIX or not _HEX.fullmatch(p):
            raise InputError(
                f"invalid id {prefix!r}: give a full id or a prefix of at least {MIN_PREFIX} hex characters"
            )
        matches = self.prefix_matches(p, commit_id)
        if not matches:
            raise InputError(f"no entry {prefix!r} in line {self.line!r}")
        if len(matches) > 1:
            shown = ", ".join(abbrev(m) for m in matches[:5])
            raise InputError(f"ambiguous id prefix {prefix!r} in line {self.line!r}: matches {shown}")
        return matches[0]

    def append(
        self,
        entries: list[Entry],
        message_for: Callable[[list[Entry]], str],
        existing_check: Optional[Callable[[Entry, Optional[str]], bool]] = None,
    ) -> AppendResult:
        """Append entries in one commit; compare-and-swap on the ref, retried.

        `message_for(new_entries)` builds the commit message from what is really new.
        `existing_check(entry, head)` may report an entry as already present (dedup_key).
        Entries already in the line are skipped, so appending twice is a no-op.
        The commit message ends with the code commit the entries were made against
        (`with_code_trailer`).
        """
        code = code_head(self.gr)
        return self.add(entries, lambda new: with_code_trailer(message_for(new), code, new), existing=existing_check)

    def merge_message(self, source: str, theirs: str, u: Union, parsed: dict[str, Entry]) -> str:
        def n(k: int, word: str = "entry", plural: str = "entries") -> str:
            return f"{k} {word if k == 1 else plural}"

        incoming = [e for e in (parsed.get(i) or self.read(i, theirs) for i in u.incoming) if e is not None]
        summaries = [f"{e.short} {e.kind}: {e.summary}" for e in sorted(incoming, key=entry_order_key)]
        lines = [
            f"lifeline: merge {source}/{self.line} into {self.line}",
            "",
            f"{n(len(u.incoming))} from {source} ({abbrev(theirs)}), {n(u.local_only)} only here.",
        ]
        if u.picked:
            lines.append(
                f"{n(len(u.picked))} recorded on both sides with different timestamps: "
                "kept the earliest (verify.pick_blob)."
            )
        if summaries:
            lines.append("")
            lines.extend(f"+ {s}" for s in summaries[:_LISTED_IN_MESSAGE])
            if len(summaries) > _LISTED_IN_MESSAGE:
                lines.append(f"+ ... and {len(summaries) - _LISTED_IN_MESSAGE} more")
        lines += ["", f"Lifeline-Merged: {theirs}", ""]
        return "\n".join(lines)


def code_head(gr: GitRepo) -> Optional[tuple[str, int]]:
    """(commit id, commit time) of the code's HEAD, or None (unborn, or no HEAD)."""
    try:
        head = gr.repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError, pygit2.InvalidSpecError):
        return None
    return str(head.id), head.commit_time


def with_code_trailer(message: str, code: Optional[tuple[str, int]], entries: list[Entry]) -> str:
    """`message` with a `Lifeline-Code: <commit>` trailer naming the code commit the
    entries were made against. Left out when HEAD is younger than an entry (an entry
    dated in the past, as tests and imports write, was not made against it): such
    entries are judged by time."""
    if code is None or not entries or code[1] > min(int(e.ts.timestamp()) for e in entries):
        return message
    return message.rstrip("\n") + f"\n{CODE_TRAILER}: {code[0]}\n"


def last_append_time(gr: GitRepo, not_after: Optional[int] = None) -> Optional[int]:
    """Time of the newest append on any line (merges made by a pull do not count). An
    append dated after `not_after` is no evidence: a teammate's clock a year ahead (or a
    crafted commit date) must not silence every clone's reminders for that year."""
    latest = None
    for line in LEDGER.names(gr):
        head = LineStore(gr, line).head()
        commit = commit_at(gr.repo, head) if head else None
        for _ in range(REMIND_SCAN_LIMIT):
            if commit is None or len(commit.parents) < 2:
                break
            commit = commit.parents[0]
        if commit is not None and (not_after is None or commit.commit_time <= not_after):
            latest = commit.commit_time if latest is None else max(latest, commit.commit_time)
    return latest
