"""Staleness from code history: which decisions' code changed after they were made.

A decision names the code it is about with a `paths:` header (globs, comma or space
separated) and may name the commit it was recorded alongside (`commit:` header, or
the `Lifeline:` trailer a code commit carries). One `git log --numstat` over the
code's HEAD answers every decision at once: commits that touched a decision's paths
after it was made (or re-checked by an entry naming it), with their churn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional

import pygit2

from .repo import GitRepo


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


def split_globs(value: str) -> list:
    return [g for g in re.split(r"[,\s]+", value.strip()) if g]


def glob_regex(glob: str) -> re.Pattern:
    """`**` spans directories, `*` and `?` do not; a plain path also covers what is below it."""
    out, i = [], 0
    g = glob.strip().lstrip("./").rstrip("/")
    while i < len(g):
        if g.startswith("**", i):
            out.append(".*")
            i += 2
            if i < len(g) and g[i] == "/":
                i += 1
                out[-1] = "(?:.*/)?"
        elif g[i] == "*":
            out.append("[^/]*")
            i += 1
        elif g[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(g[i]))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?")


def _ts_seconds(key: str) -> int:
    t = datetime.fromisoformat(key.rstrip("Z")).replace(tzinfo=timezone.utc)
    return int(t.timestamp())


def code_log(gr: GitRepo, rev: str, since: int) -> list:
    """[(commit, commit time, [(added, deleted, path)])] for commits after `since` on `rev`."""
    proc = gr.git(["log", "--no-renames", "--numstat", "--format=%x00%H %ct", f"--since=@{since}",
                   "--end-of-options", rev, "--"], check=False)
    if proc.returncode != 0:
        return []
    commits = []
    for chunk in proc.stdout.decode("utf-8", "replace").split("\0")[1:]:
        lines = chunk.strip("\n").split("\n")
        head = lines[0].split()
        if len(head) != 2:
            continue
        files = []
        for line in lines[1:]:
            parts = line.split("\t", 2)
            if len(parts) == 3:
                added = int(parts[0]) if parts[0].isdigit() else 0
                deleted = int(parts[1]) if parts[1].isdigit() else 0
                files.append((added, deleted, parts[2]))
        commits.append((head[0], int(head[1]), files))
    return commits


def anchored_since(gr: GitRepo, rev: str, commit: str) -> Optional[set]:
    """Commits reachable from `rev` but not from the anchor commit (None: unknown anchor)."""
    proc = gr.git(["rev-list", "--end-of-options", f"{commit}..{rev}", "--"], check=False)
    if proc.returncode != 0:
        return None
    return set(proc.stdout.decode().split())


def find_stale(gr: GitRepo, facts: dict, touched: dict, decision_ids: list, rev: str = "HEAD",
               since_rev: Optional[str] = None) -> list:
    """Staleness of every decision in `decision_ids` that names paths, most-changed first."""
    wanted = {i: facts[i] for i in decision_ids if facts.get(i, {}).get("paths")}
    if not wanted:
        return []
    if gr.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
              check=False).returncode != 0:
        return []  # no code history yet
    starts = {i: _ts_seconds(max(f["ts"], touched.get(i, ""))) for i, f in wanted.items()}
    restrict = None
    if since_rev is not None:
        restrict = anchored_since(gr, rev, since_rev)
    log = code_log(gr, rev, min(starts.values()))
    out = []
    for i, f in wanted.items():
        globs = [glob_regex(g) for g in split_globs(f["paths"])]
        after = anchored_since(gr, rev, f["commit"]) if f.get("commit") else None
        st = Staleness(i, split_globs(f["paths"]))
        for commit, when, files in log:
            if after is not None:
                if commit not in after:
                    continue
            elif when <= starts[i]:
                continue
            if restrict is not None and commit not in restrict:
                continue
            hit = False
            for added, deleted, path in files:
                if any(g.fullmatch(path) for g in globs):
                    hit = True
                    st.lines += added + deleted
                    d = path.rsplit("/", 1)[0] + "/" if "/" in path else "./"
                    st.where[d] = st.where.get(d, 0) + added + deleted
            if hit:
                st.commits.append(commit)
        if st.commits:
            out.append(st)
    out.sort(key=lambda s: (-len(s.commits), -s.lines, s.decision))
    return out


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
