"""Staleness from code history: which decisions' code changed after they were made.

A decision names the code it is about with a `paths:` header: git pathspecs, comma or
space separated, read from the top of the repository (as `git log -- <pathspec>` run
there reads them: `*.sql` matches `db/schema.sql`, a directory covers what is below it,
`:(glob)` gives `**` its directory meaning, `:(exclude)` or `:!` leaves paths out).
Git itself matches them: they are passed to `git log` after `--`, never parsed here.

What the decision saw is exact by the DAG when the ledger knows it: every append
records the code commit HEAD was at in its ledger commit (the `Lifeline-Code:` trailer,
store.py), outside the hashed entry. A commit counts against a decision when it touched
the paths and is not in the history of that recorded commit (nor of a `commit:` header,
nor of the commit recorded by the latest entry naming the decision: a re-check). An
entry without such a record (older ledgers, imports, a commit this clone does not have)
falls back to time: commits made after it. Renames are followed: a path renamed out of
the pathspecs is followed under its new name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Mapping, Optional

from ..core.anchors import AnchorError, parse_anchor
from ..core.blocks import field as header_field
from ..core.facts import Facts
from ..core.headers import valid_value
from .code_range import commit_oid
from .codelog import WALK_LIMIT, CodeLog, CodeSize
from .libgit2 import pygit2
from .reffiles import UNBORN
from .repo import GitRepo, at_time
from .store import CODE_TRAILER, LineStore
from .trees import lookup

PATHSPEC_LIMIT = 256  # pathspecs read from one `paths:` header
CLOCK_SKEW = 86400  # how far a ledger commit may be dated before what it adds
_OBJECT = re.compile(r"[0-9a-fA-F]{7,64}")
_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# git's pathspec settings from the environment (GIT_LITERAL_PATHSPECS and friends) must
# not change what a ledger's `paths:` mean from one shell to the next
# Files git leaves in the git dir while it replays commits (rebase, am, cherry-pick,
# revert of several commits, a merge being concluded), and the reflog actions it runs
# them under: a commit made then is not new work (the post-commit hook stays silent).
REPLAY_STATE = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer")
REPLAY_ACTIONS = ("rebase", "cherry-pick", "am", "merge", "pull", "revert")


GRADES = ("removed", "rewritten", "touched")  # strongest first (docs/FORMAT.md §9)


def grade_of(size: CodeSize, churn: int) -> str:
    """How much of a decision's code changed: *removed* when its paths match no file now,
    *rewritten* when the lines added and deleted reach the lines its files hold now (a
    changed line counts twice, so about half of the code changed), else *touched*."""
    if size.files == 0:
        return "removed"
    return "rewritten" if churn >= max(size.lines, 1) else "touched"


@dataclass
class Staleness:
    decision: str
    paths: list[str]
    commits: list[str] = field(default_factory=list)  # commit ids, newest first
    lines: int = 0
    where: dict[str, int] = field(default_factory=dict)  # directory -> lines changed
    grade: str = "touched"  # one of GRADES
    files_now: int = 0  # files its paths match at the code HEAD
    lines_now: int = 0  # and their lines

    @property
    def top_dir(self) -> str:
        return max(self.where.items(), key=lambda kv: (kv[1], kv[0]))[0] if self.where else ""

    def order_key(self) -> tuple[int, float, int, int, str]:
        """Strongest first: the grade, then the share of the code changed, then commits."""
        share = self.lines / max(self.lines_now, 1)
        return (GRADES.index(self.grade), -share, -len(self.commits), -self.lines, self.decision)

    def mark(self) -> str:
        n = len(self.commits)
        what = (
            "no file matches its paths now"
            if self.grade == "removed"
            else f"{self.lines} lines changed, {self.lines_now} now in {self.files_now} file"
            + ("s" if self.files_now != 1 else "")
        )
        return (
            f"⚠ code changed since: {n}{'+' if n >= WALK_LIMIT else ''} commit{'s' if n != 1 else ''}, "
            f"{self.lines} lines in {self.top_dir}"
            f" — {self.grade} ({what})"
        )


@dataclass(frozen=True)
class StaleFindings:
    stale: list[Staleness]  # strongest first (Staleness.order_key)
    unknown: list[str]  # decisions whose code history crosses a shallow clone's cut
    code_head: Optional[str] = None  # the code commit HEAD was read as (UNBORN: none yet; None: none asked)
    # a commit the ledger records was not in this repository (time decided instead): a
    # fetch of it may change the answer, so it is not kept (app/staleness_kept.py)
    missing: bool = False

    def unknown_note(self) -> Optional[str]:
        """The one line that says so, for every decision at once (None: nothing unknown)."""
        n = len(self.unknown)
        if not n:
            return None
        return (
            f"staleness unknown (shallow clone) for {n} decision{'s' if n != 1 else ''}: the code history "
            "since they were made is cut; git fetch --deepen=<n> (or --shallow-since=<date>) brings it"
        )


def graft_commits(gr: GitRepo) -> frozenset[str]:
    """The commits a shallow clone was cut at (their parents are missing, so their diff
    is their whole tree); empty in a complete clone."""
    try:
        text = (gr.common_dir / "shallow").read_text(encoding="ascii", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(t for t in text.split() if _FULL_OID.fullmatch(t))


def split_pathspecs(value: str) -> list[str]:
    """The pathspecs of a `paths:` header (comma or whitespace separated)."""
    return [g for g in re.split(r"[,\s]+", value.strip()) if g]


def pathspecs(value: str) -> list[str]:
    """What is passed to git for a `paths:` header: a leading `/` (the top of the
    repository, as in .gitignore) is dropped, since every pathspec is read from the top."""
    out = []
    for spec in split_pathspecs(value)[:PATHSPEC_LIMIT]:
        if spec.startswith("/"):
            spec = spec.lstrip("/") or "."
        out.append(spec)
    return out


def _anchored(item: str) -> bool:
    try:
        return parse_anchor(item) is not None
    except AnchorError:
        return False  # the fold keeps no malformed value; read as git would, a pathspec


def _commit_at(gr: GitRepo, head: str, ts: int) -> Optional[str]:
    """The newest commit of `head`'s history made no later than `ts` (seconds)."""
    proc = gr.git(["rev-list", "-1", at_time("--before", ts), "--end-of-options", head, "--"], check=False)
    out = proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else ""
    return out if _FULL_OID.fullmatch(out) else None


def code_specs(gr: GitRepo, code: CodeLog, value: str, seen: list[Seen]) -> tuple[str, ...]:
    """What a decision's `paths:` asks of git at `code.head` (git/codelog.py): its
    pathspecs, and its anchors (a file's lines, a symbol) followed from the code the
    decision was made against (`seen[0]`: its recorded commit, else the commit of its time)
    to that HEAD. The one answer `stale`, the context, MCP, the HTML view and `pr` use."""
    items = pathspecs(value)
    anchored = [item for item in items if _anchored(item)]
    if not anchored:
        return tuple(items)
    made: Seen = seen[0]
    base = made.code[0] if made.code else _commit_at(gr, code.head, made.ts)
    resolved = code.resolve([(item, base) for item in anchored])
    return tuple(resolved[(item, base)] if _anchored(item) else item for item in items)


def governed_code(
    gr: GitRepo,
    code: CodeLog,
    facts: Mapping[str, Facts],
    touched: Mapping[str, str],
    decision_ids: list[str],
    store: Optional[LineStore],
) -> dict[str, tuple[str, ...]]:
    """{decision id: code_specs} for the decisions of `decision_ids` that name paths."""
    wanted = [i for i in decision_ids if facts.get(i, {}).get("paths")]
    seen = _seen_by(gr, facts, touched, wanted, store)[0] if wanted else {}
    return {i: code_specs(gr, code, facts[i]["paths"], seen[i]) for i in wanted}


def _ts_seconds(key: str) -> int:
    t = datetime.fromisoformat(key.rstrip("Z")).replace(tzinfo=timezone.utc)
    return int(t.timestamp())


def _ts_key(ts: datetime) -> str:
    return f"{ts:%Y-%m-%dT%H:%M:%S.%f}"  # the fold's key (truth.Fold.key_of)


def _present_commit(gr: GitRepo, value: Optional[str]) -> Optional[str]:
    """The full id of the commit `value` (a hex object name from the ledger) names in this
    repository; None for anything else. Never reaches git as an argument unchecked."""
    if not value or not _OBJECT.fullmatch(value):
        return None
    try:
        obj = gr.repo.get(value.lower())  # an object name (a prefix expands), never a ref name
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None
    if obj is None:
        return None
    try:
        return str(obj.peel(pygit2.Commit).id)
    except (pygit2.InvalidSpecError, ValueError, pygit2.GitError):
        return None


# ---- what the ledger recorded ---------------------------------------------------------
def code_trailer(message: str) -> tuple[Optional[str], set[str]]:
    """(recorded code commit or None, entry ids) from a ledger commit's final trailer block."""
    block = message.rstrip("\n").rsplit("\n\n", 1)[-1]
    code: Optional[str] = None
    ids: set[str] = set()
    for line in block.split("\n"):
        key, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        if key == CODE_TRAILER and _FULL_OID.fullmatch(value):
            code = value
        elif key == "Lifeline-Id" and _FULL_OID.fullmatch(value):
            ids.add(value)
    return code, ids


def _added(store: LineStore, commit: pygit2.Commit, entry_id: str) -> bool:
    """Whether `commit` is the one that added `entry_id` (a message can claim anything)."""
    if lookup(store.tree(str(commit.id)), entry_id) is None:
        return False
    return not commit.parents or lookup(store.tree(str(commit.parents[0].id)), entry_id) is None


def recorded_code(
    store: LineStore, decisions: Mapping[str, str], rechecks: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The code commits recorded at append time: ({decision id: commit}, {decision id:
    commit of its latest re-check}). `decisions` maps ids to their ts key, `rechecks`
    maps decision ids to the ts key of the latest entry naming them.

    One walk of the line's commits, newest first, stopping when everything is found or
    the commits are older than what is looked for; a ledger commit is dated by what it
    adds, so the walk stays short for recent decisions."""
    made: dict[str, str] = {}
    rechecked: dict[str, str] = {}
    head = store.head()
    if head is None or not (decisions or rechecks):
        return made, rechecked
    want_made = set(decisions)
    want_re = dict(rechecks)
    re_seconds = {_ts_seconds(t) for t in want_re.values()}
    oldest = min(_ts_seconds(t) for t in list(decisions.values()) + list(rechecks.values()))
    walker = store.repo.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.TIME)
    for commit in walker:
        if not (want_made or want_re) or commit.commit_time < oldest - CLOCK_SKEW:
            break
        if len(commit.parents) > 1:
            continue  # a merge of a pull adds what was appended elsewhere, with its own record
        code, ids = code_trailer(commit.message)
        if code is None or not ids:
            continue
        for eid in ids & want_made:
            if _added(store, commit, eid):
                made[eid] = code
                want_made.discard(eid)
        # the commit of one entry is dated by it: read only the entries a re-check can be
        if want_re and ((commit.commit_time in re_seconds) if len(ids) == 1 else commit.commit_time >= min(re_seconds)):
            for eid in ids:
                if not _added(store, commit, eid):
                    continue
                try:
                    e = store.read(eid, str(commit.id))
                    if e is None:
                        continue
                    key, parents = _ts_key(e.ts), list(e.parents)
                    # a re-affirmation says which code it was re-read against (`commit:`)
                    against = valid_value("commit", header_field(e.body, "commit")) or code
                except Exception:  # noqa: BLE001 - an unreadable entry records nothing
                    continue
                for p in parents:
                    if want_re.get(p) == key:
                        rechecked[p] = against
                        del want_re[p]
    return made, rechecked


@dataclass(frozen=True)
class Seen:
    """The code one entry was made against: the commits whose history it had seen
    (`code`), else only its time."""

    ts: int
    code: tuple[str, ...] = ()


def _seen_by(
    gr: GitRepo, facts: Mapping[str, Facts], touched: Mapping[str, str], wanted: list[str], store: Optional[LineStore]
) -> tuple[dict[str, list[Seen]], bool]:
    """{decision id: [Seen]}: the decision itself and its latest re-check; and whether a
    commit the ledger records for one of them is missing here."""
    decisions = {i: facts[i]["ts"] for i in wanted}
    rechecks = {i: touched[i] for i in wanted if touched.get(i)}
    made, rechecked = recorded_code(store, decisions, rechecks) if store is not None else ({}, {})
    out: dict[str, list[Seen]] = {}
    missing = False
    for i in wanted:
        recorded = [made.get(i), facts[i].get("commit")]
        own = tuple(c for c in map(lambda value: _present_commit(gr, value), recorded) if c)
        missing = missing or len(own) < sum(1 for value in recorded if value)
        seen = [Seen(_ts_seconds(facts[i]["ts"]), own)]
        if i in rechecks:
            again = _present_commit(gr, rechecked.get(i))
            missing = missing or (bool(rechecked.get(i)) and again is None)
            seen.append(Seen(_ts_seconds(rechecks[i]), (again,) if again else ()))
        out[i] = seen
    return out, missing


def find_stale(
    gr: GitRepo,
    facts: Mapping[str, Facts],
    touched: Mapping[str, str],
    decision_ids: list[str],
    rev: str = "HEAD",
    since_rev: Optional[str] = None,
    store: Optional[LineStore] = None,
) -> StaleFindings:
    """Staleness of every decision in `decision_ids` that names paths, strongest first,
    and the decisions whose staleness a shallow clone cannot tell.

    `store` is the line the decisions are in: its ledger commits say which code commit
    each entry was made against (without it, or for entries without that record, time
    decides). `since_rev` keeps only code commits not in the history of that revision."""
    wanted = [i for i in decision_ids if facts.get(i, {}).get("paths")]
    if not wanted:
        return StaleFindings([], [])
    head = commit_oid(gr, rev)
    if head is None:
        # no code history yet: said as the code view says it (git/reffiles.head_view), so
        # the answer is kept for it
        unborn = rev == "HEAD" and since_rev is None and gr.repo.head_is_unborn
        return StaleFindings([], [], UNBORN if unborn else None)
    hide_also = []
    if since_rev is not None:
        since = commit_oid(gr, since_rev)
        if since is None:
            return StaleFindings([], [])
        hide_also.append(since)
    seen, absent = _seen_by(gr, facts, touched, wanted, store)
    code = CodeLog(gr, head)
    asked = {}
    for i in wanted:
        anchors = tuple(sorted({c for s in seen[i] for c in s.code} | set(hide_also)))
        untimed = [s.ts for s in seen[i] if not s.code]
        asked[i] = (code_specs(gr, code, facts[i]["paths"], seen[i]), anchors, max(untimed) if untimed else None)
    answers = code.changes([q for q in dict.fromkeys(asked.values()) if q[0]])
    # a commit whose `Lifeline:` trailer names the decision re-affirms it at that commit:
    # what that commit's history holds no longer counts (one more question, remembered)
    for i in wanted:
        linking = [r.commit for r in answers.get(asked[i], []) if any(i.startswith(v) for v in r.links)]
        if linking:
            specs, anchors, floor = asked[i]
            asked[i] = (specs, tuple(sorted(set(anchors) | set(linking))), floor)
    missing = [q for q in dict.fromkeys(asked.values()) if q[0] and q not in answers]
    if missing:
        answers.update(code.changes(missing))
    shallow = graft_commits(gr)
    out: list[Staleness] = []
    unknown: list[str] = []
    for i in wanted:
        floor = asked[i][2]
        st, cut = Staleness(i, split_pathspecs(facts[i]["paths"])), False
        for row in answers.get(asked[i], []):
            if floor is not None and row.when <= floor:
                continue  # by time: made no later than an entry that has no record of its code
            if row.commit in shallow:
                cut = True  # its diff is the whole tree a shallow clone was cut at
                break
            if not row.changes:
                continue  # a merge: its sides are counted, not the merge
            st.commits.append(row.commit)
            for ch in row.changes:
                st.lines += ch.lines
                path = ch.old if ch.status == "D" else ch.new
                d = path.rsplit("/", 1)[0] + "/" if "/" in path else "./"
                st.where[d] = st.where.get(d, 0) + ch.lines
        if cut:
            unknown.append(i)
        elif st.commits:
            out.append(st)
    sizes = code.sizes_of([asked[s.decision][0] for s in out])
    for st in out:
        size = sizes[asked[st.decision][0]]
        st.files_now, st.lines_now, st.grade = size.files, size.lines, grade_of(size, st.lines)
    out.sort(key=Staleness.order_key)
    return StaleFindings(out, unknown, head, absent)


def replaying(gr: GitRepo) -> bool:
    """Whether git is replaying commits (rebase, am, cherry-pick, revert of several, the
    end of a merge): the commit just made is not new work."""
    action = os.environ.get("GIT_REFLOG_ACTION", "")
    if any(action.startswith(a) for a in REPLAY_ACTIONS):
        return True
    if any((gr.git_dir / f).exists() for f in REPLAY_STATE):
        return True
    try:
        return len(gr.repo.head.peel(pygit2.Commit).parents) > 1
    except (pygit2.GitError, KeyError, ValueError):
        return False


@dataclass
class CodeRun:
    """The code commits on the current branch's first-parent line since a time."""

    count: int  # commits since `since`, stopping at one that names an entry (`Lifeline:`)
    walked: int  # commits looked at (more than the limit: the count is a floor)
    subject: str  # HEAD's subject


def unrecorded_commits(gr: GitRepo, since: Optional[int], limit: int) -> Optional[CodeRun]:
    """How many commits the branch gained since `since` (a time) without naming a ledger
    entry; None when HEAD has no commit."""
    try:
        head = gr.repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError):
        return None
    count, walked = 0, 0
    walker = gr.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()  # the line of work on this branch, not what merges brought in
    for commit in walker:
        walked += 1
        if walked > limit or (since is not None and commit.commit_time <= since):
            break
        if any(line.lower().startswith("lifeline:") for line in commit.message.splitlines()):
            break  # linked to an entry: the why of the work so far is recorded
        count += 1
    return CodeRun(count, walked, head.message.split("\n", 1)[0].strip())
