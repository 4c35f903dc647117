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
from typing import Iterable, Optional

import pygit2

from .repo import GitRepo
from .store import CODE_TRAILER, LineStore

PATHSPEC_LIMIT = 256        # pathspecs read from one `paths:` header
RENAME_ROUNDS = 3           # times a rename out of the pathspecs is followed
RENAMED_LIMIT = 256         # new names added by following renames
CLOCK_SKEW = 86400          # how far a ledger commit may be dated before what it adds
_OBJECT = re.compile(r"[0-9a-fA-F]{7,64}")
_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_HEADER = re.compile(rb"([0-9a-f]{40,64}) (\d+)")
_NUMSTAT = re.compile(rb"(\d+|-)\t(\d+|-)\t(.*)", re.S)
# git's pathspec settings from the environment (GIT_LITERAL_PATHSPECS and friends) must
# not change what a ledger's `paths:` mean from one shell to the next
# Files git leaves in the git dir while it replays commits (rebase, am, cherry-pick,
# revert of several commits, a merge being concluded), and the reflog actions it runs
# them under: a commit made then is not new work (the post-commit hook stays silent).
REPLAY_STATE = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer")
REPLAY_ACTIONS = ("rebase", "cherry-pick", "am", "merge", "pull", "revert")
_PATHSPEC_ENV = {"GIT_LITERAL_PATHSPECS": "0", "GIT_GLOB_PATHSPECS": "0", "GIT_NOGLOB_PATHSPECS": "0",
                 "GIT_ICASE_PATHSPECS": "0"}


@dataclass
class Staleness:
    decision: str
    paths: list
    commits: list = field(default_factory=list)  # commit ids, newest first
    lines: int = 0
    where: dict = field(default_factory=dict)    # directory -> lines changed

    @property
    def top_dir(self) -> str:
        return max(self.where.items(), key=lambda kv: (kv[1], kv[0]))[0] if self.where else ""

    def mark(self) -> str:
        n = len(self.commits)
        return (f"⚠ code changed since: {n} commit{'s' if n != 1 else ''}, {self.lines} lines"
                f" in {self.top_dir}")


def split_pathspecs(value: str) -> list:
    """The pathspecs of a `paths:` header (comma or whitespace separated)."""
    return [g for g in re.split(r"[,\s]+", value.strip()) if g]


split_globs = split_pathspecs  # the name the header had when it held home-made globs


def pathspecs(value: str) -> list:
    """What is passed to git for a `paths:` header: a leading `/` (the top of the
    repository, as in .gitignore) is dropped, since every pathspec is read from the top."""
    out = []
    for spec in split_pathspecs(value)[:PATHSPEC_LIMIT]:
        if spec.startswith("/"):
            spec = spec.lstrip("/") or "."
        out.append(spec)
    return out


def _ts_seconds(key: str) -> int:
    t = datetime.fromisoformat(key.rstrip("Z")).replace(tzinfo=timezone.utc)
    return int(t.timestamp())


def _ts_key(ts: datetime) -> str:
    return f"{ts:%Y-%m-%dT%H:%M:%S.%f}"  # the fold's key (truth.Fold.key_of)


def _commit_oid(gr: GitRepo, rev: str) -> Optional[str]:
    proc = gr.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], check=False)
    out = proc.stdout.decode("ascii", "replace").strip()
    return out if proc.returncode == 0 and _FULL_OID.fullmatch(out) else None


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
def code_trailer(message: str) -> tuple:
    """(recorded code commit or None, entry ids) from a ledger commit's final trailer block."""
    block = message.rstrip("\n").rsplit("\n\n", 1)[-1]
    code, ids = None, set()
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
    if store.lookup(store.tree(str(commit.id)), entry_id) is None:
        return False
    return not commit.parents or store.lookup(store.tree(str(commit.parents[0].id)), entry_id) is None


def recorded_code(store: LineStore, decisions: dict, rechecks: dict) -> tuple:
    """The code commits recorded at append time: ({decision id: commit}, {decision id:
    commit of its latest re-check}). `decisions` maps ids to their ts key, `rechecks`
    maps decision ids to the ts key of the latest entry naming them.

    One walk of the line's commits, newest first, stopping when everything is found or
    the commits are older than what is looked for; a ledger commit is dated by what it
    adds, so the walk stays short for recent decisions."""
    made: dict = {}
    rechecked: dict = {}
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
        if want_re and ((commit.commit_time in re_seconds) if len(ids) == 1
                        else commit.commit_time >= min(re_seconds)):
            for eid in ids:
                if not _added(store, commit, eid):
                    continue
                try:
                    e = store.read(eid, str(commit.id))
                    key, parents = _ts_key(e.ts), list(e.parents)
                except Exception:  # noqa: BLE001 - an unreadable entry records nothing
                    continue
                for p in parents:
                    if want_re.get(p) == key:
                        rechecked[p] = code
                        del want_re[p]
    return made, rechecked


@dataclass(frozen=True)
class Seen:
    """The code one entry was made against: the commits whose history it had seen
    (`code`), else only its time."""

    ts: int
    code: tuple = ()


def _seen_by(gr: GitRepo, facts: dict, touched: dict, wanted: list, store: Optional[LineStore]) -> dict:
    """{decision id: [Seen]}: the decision itself and its latest re-check."""
    decisions = {i: facts[i]["ts"] for i in wanted}
    rechecks = {i: touched[i] for i in wanted if touched.get(i)}
    made, rechecked = recorded_code(store, decisions, rechecks) if store is not None else ({}, {})
    out = {}
    for i in wanted:
        own = tuple(c for c in (_present_commit(gr, made.get(i)), _present_commit(gr, facts[i].get("commit")))
                    if c)
        seen = [Seen(_ts_seconds(facts[i]["ts"]), own)]
        if i in rechecks:
            again = _present_commit(gr, rechecked.get(i))
            seen.append(Seen(_ts_seconds(rechecks[i]), (again,) if again else ()))
        out[i] = seen
    return out


# ---- what the code did ----------------------------------------------------------------
@dataclass
class Change:
    status: str
    old: str
    new: str
    lines: int = 0


def parse_log(raw: bytes) -> list:
    """[(commit, commit time, [Change])] from `git log -z --raw --numstat --format=%x00%H %ct`."""
    tokens = raw.split(b"\0")
    commits: list = []
    numstat: dict = {}
    current: Optional[list] = None

    def close():
        if current is not None:
            for ch in current[2]:
                ch.lines = numstat.get(ch.new, 0)

    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i].lstrip(b"\n")
        if not tok:
            i += 1
            continue
        if tok.startswith(b":") and current is not None:
            status = tok.rsplit(b" ", 1)[-1][:1].decode("ascii", "replace")
            if status in ("R", "C") and i + 2 < n:
                old, new = tokens[i + 1], tokens[i + 2]
                i += 3
            else:
                old = new = tokens[i + 1] if i + 1 < n else b""
                i += 2
            current[2].append(Change(status, old.decode("utf-8", "surrogateescape"),
                                     new.decode("utf-8", "surrogateescape")))
            continue
        m = _NUMSTAT.fullmatch(tok)
        if m and current is not None:
            if m.group(3) == b"" and i + 2 < n:
                path = tokens[i + 2]
                i += 3
            else:
                path = m.group(3)
                i += 1
            added = int(m.group(1)) if m.group(1).isdigit() else 0
            deleted = int(m.group(2)) if m.group(2).isdigit() else 0
            numstat[path.decode("utf-8", "surrogateescape")] = added + deleted
            continue
        h = _HEADER.fullmatch(tok)
        if h:
            close()
            numstat = {}
            current = [h.group(1).decode("ascii"), int(h.group(2)), []]
            commits.append(current)
        i += 1
    close()
    return [tuple(c) for c in commits]


def _log(gr: GitRepo, head: str, hide: Iterable, since: Optional[int], specs: list) -> Optional[list]:
    args = ["log", "-z", "--raw", "--numstat", "-M", "--full-history", "--format=%x00%H %ct"]
    if since is not None:
        args.append(f"--since=@{since}")
    # only full object ids (checked) reach git as revisions; pathspecs only after `--`
    args += ["--end-of-options", head, *(f"^{h}" for h in hide), "--", *specs]
    proc = gr.git(args, check=False, env=dict(os.environ, **_PATHSPEC_ENV))
    if proc.returncode != 0:
        return None  # a pathspec git refuses (outside the repository, unknown magic)
    return parse_log(proc.stdout)


def _renamed_away(gr: GitRepo, commit: str, gone: set) -> list:
    """New names of the paths in `gone` that `commit` renamed (to outside the pathspecs)."""
    proc = gr.git(["diff-tree", "-z", "-r", "-M", "--raw", "--no-commit-id", "--end-of-options", commit],
                  check=False)
    if proc.returncode != 0:
        return []
    out = []
    tokens = proc.stdout.split(b"\0")
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip(b"\n")
        if tok.startswith(b":") and tok.rsplit(b" ", 1)[-1][:1] == b"R" and i + 2 < len(tokens):
            old = tokens[i + 1].decode("utf-8", "surrogateescape")
            if old in gone:
                out.append(tokens[i + 2].decode("utf-8", "surrogateescape"))
            i += 3
        elif tok.startswith(b":"):
            i += 2
        else:
            i += 1
    return out


def code_changes(gr: GitRepo, head: str, hide: Iterable, since: Optional[int], specs: list) -> list:
    """Commits on `head`, not in the history of `hide`, made after `since` (when given),
    that touched the pathspecs, following renames; [(commit, time, [Change])], newest first."""
    hide, specs = list(hide), list(specs)
    renames: dict = {}   # commit -> new names of what it deleted, diffed once
    added = 0
    for round_ in range(RENAME_ROUNDS + 1):
        log = _log(gr, head, hide, since, specs)
        if not log or round_ == RENAME_ROUNDS or added >= RENAMED_LIMIT:
            return log or []
        followed: set = set()
        for commit, _when, changes in log:
            gone = {c.old for c in changes if c.status == "D"}
            if gone:
                if commit not in renames:
                    renames[commit] = _renamed_away(gr, commit, gone)
                followed.update(f":(top,literal){new}" for new in renames[commit])
        followed -= set(specs)
        if not followed:
            return log
        new_specs = sorted(followed)[:RENAMED_LIMIT - added]
        added += len(new_specs)
        specs += new_specs
    return []


def find_stale(gr: GitRepo, facts: dict, touched: dict, decision_ids: list, rev: str = "HEAD",
               since_rev: Optional[str] = None, store: Optional[LineStore] = None) -> list:
    """Staleness of every decision in `decision_ids` that names paths, most-changed first.

    `store` is the line the decisions are in: its ledger commits say which code commit
    each entry was made against (without it, or for entries without that record, time
    decides). `since_rev` keeps only code commits not in the history of that revision."""
    wanted = [i for i in decision_ids if facts.get(i, {}).get("paths")]
    if not wanted:
        return []
    head = _commit_oid(gr, rev)
    if head is None:
        return []  # no code history yet
    hide_also = []
    if since_rev is not None:
        since = _commit_oid(gr, since_rev)
        if since is None:
            return []
        hide_also.append(since)
    seen = _seen_by(gr, facts, touched, wanted, store)
    memo: dict = {}
    out = []
    for i in wanted:
        specs = pathspecs(facts[i]["paths"])
        anchors = sorted({c for s in seen[i] for c in s.code} | set(hide_also))
        untimed = [s.ts for s in seen[i] if not s.code]
        floor = max(untimed) if untimed else None
        key = (tuple(specs), tuple(anchors), floor)
        if key not in memo:
            memo[key] = code_changes(gr, head, anchors, floor, specs) if specs else []
        st = Staleness(i, split_pathspecs(facts[i]["paths"]))
        for commit, when, changes in memo[key]:
            if floor is not None and when <= floor:
                continue  # by time: made no later than an entry that has no record of its code
            if not changes:
                continue  # a merge: its sides are counted, not the merge
            st.commits.append(commit)
            for ch in changes:
                st.lines += ch.lines
                path = ch.old if ch.status == "D" else ch.new
                d = path.rsplit("/", 1)[0] + "/" if "/" in path else "./"
                st.where[d] = st.where.get(d, 0) + ch.lines
        if st.commits:
            out.append(st)
    out.sort(key=lambda s: (-len(s.commits), -s.lines, s.decision))
    return out


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

    count: int      # commits since `since`, stopping at one that names an entry (`Lifeline:`)
    walked: int     # commits looked at (more than the limit: the count is a floor)
    subject: str    # HEAD's subject


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
