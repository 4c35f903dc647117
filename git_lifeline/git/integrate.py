"""Bringing another clone's head of a log in: created, fast-forward or merged.

Generic over namespaces (fanout.py): the union is the log's, the merge commit's message
is the log's (`merge_message`), and what arrives is judged by the `verify` the caller
passes (verify.verified_incoming, the one engine), before anything moves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Optional

from ..errors import LifelineError
from .fanout import CAS_SECONDS, CorruptionError, FanoutLog, Progress, no_progress
from .libgit2 import pygit2
from .trees import Union, lookup

# verify(local head or None, incoming head) -> {id: record} the incoming range adds; raises when it fails
Verify = Callable[[Optional[str], str], dict]


@dataclass
class PullLine:
    """What integrating another clone's head did to one log."""

    line: str  # the log's name
    action: str  # created | fast-forward | merged | up-to-date | ahead | local-only
    before: Optional[str]  # local head before
    after: Optional[str]  # local head after
    incoming: list[str] = field(default_factory=list)  # ids that arrived
    local_only: int = 0
    rewritten: list[str] = field(default_factory=list)  # ids whose local blob was replaced (merge pick)
    parsed: dict = field(default_factory=dict)  # id -> record for what arrived (already verified)
    namespace: str = "ledger"

    @property
    def changed(self) -> bool:
        return self.before != self.after


def relation(repo: pygit2.Repository, local: Optional[str], remote: Optional[str]) -> str:
    """same | new (remote only) | local-only | behind | ahead | diverged | unknown."""
    if remote is None:
        return "local-only"
    if local is None:
        return "new"
    if local == remote:
        return "same"
    try:
        if repo.get(remote) is None:
            return "unknown"
        if repo.descendant_of(pygit2.Oid(hex=remote), pygit2.Oid(hex=local)):
            return "behind"
        if repo.descendant_of(pygit2.Oid(hex=local), pygit2.Oid(hex=remote)):
            return "ahead"
    except (pygit2.GitError, ValueError):
        # a commit git cannot parse on their side: verification says what is wrong with it
        # and leaves this line out, while the other lines come in
        return "diverged"
    return "diverged"


def integrate_head(
    log: FanoutLog, theirs: Optional[str], verify: Verify, source: str = "", progress: Progress = no_progress
) -> PullLine:
    """Bring another clone's head of this log in: created, fast-forward or merged (a
    commit with both parents and the union of the trees); up-to-date, ahead or
    local-only change nothing. `verify(local, theirs)` runs before the ref moves and
    must raise when the incoming history fails; nothing moves then."""
    with log.write_lock():  # queue with this repository's appends and imports of the log
        return _integrate_locked(log, theirs, verify, source, progress)


def _integrate_locked(
    log: FanoutLog, theirs: Optional[str], verify: Verify, source: str, progress: Progress
) -> PullLine:
    deadline = time.monotonic() + CAS_SECONDS
    what_moved = f"{log.ns.label}: pull {source}" if source else f"{log.ns.label}:"
    # Bounded by retry_pause (attempts and the time budget), which also waits out and
    # removes a ref lock left by a writer killed inside its ref update: a fixed count of
    # short pauses gave up before such a lock could turn stale.
    attempt = 0
    verified: dict = {}  # local head -> what verify returned (waiting on a lock re-verifies nothing)
    while True:
        attempt += 1
        if attempt > 1:
            pause = log.retry_pause(attempt, deadline)
            if pause is None:
                raise log.cas_failure()
            time.sleep(pause)
        local = log.head()
        state = relation(log.repo, local, theirs)
        if state in ("same", "ahead", "local-only"):
            action = {"same": "up-to-date", "ahead": "ahead", "local-only": "local-only"}[state]
            return PullLine(log.name, action, local, local, namespace=log.ns.name)
        assert theirs is not None
        if state == "unknown":
            raise LifelineError(
                f"{log.ns.noun} {log.name}: {source or 'the other side'}/{log.name} names a "
                "commit this repository lacks; fetch again"
            )
        if local not in verified:
            verified[local] = verify(local, theirs)
        parsed = verified[local]
        if state in ("new", "behind"):
            added, changed = log.incoming_by_diff(local, theirs)
            what = "created" if state == "new" else "fast-forward"
            if log.move_ref(local, theirs, f"{what_moved} ({what})"):
                return PullLine(
                    log.name,
                    what,
                    local,
                    theirs,
                    incoming=added,
                    rewritten=changed,
                    parsed=parsed,
                    namespace=log.ns.name,
                )
            continue
        assert local is not None
        commit, u = _plan_merge(log, local, theirs, source, progress, parsed)
        if log.move_ref(local, commit, f"{what_moved} (merge)"):
            mine = log.tree(local)
            rewritten = [p[0] for p in u.picked if p[1] != str(lookup(mine, p[0]))]
            return PullLine(
                log.name,
                "merged",
                local,
                commit,
                incoming=u.incoming,
                local_only=u.local_only,
                rewritten=rewritten,
                parsed=parsed,
                namespace=log.ns.name,
            )


def _plan_merge(
    log: FanoutLog, local: str, theirs: str, source: str, progress: Progress, parsed: dict
) -> tuple[str, Union]:
    with progress(f"merging {source}/{log.name}" if source else f"merging {log.name}", 256) as bar:
        u = log.union(log.tree(local), log.tree(theirs), bar)
    if u.corrupt:
        raise CorruptionError(
            f"{log.ns.noun} {log.name}: {source or 'the other side'} and this clone hold "
            "different content under the same id; nothing was changed:",
            *(f"  {i}: {why}" for i, why in u.corrupt[:20]),
        )
    root = log.root_tree(u.tree) if u.tree is not None else log.repo.TreeBuilder().write()
    now = int(datetime.now(timezone.utc).timestamp())
    commit = log.write_commit(
        log.merge_message(source, theirs, u, parsed), root, [pygit2.Oid(hex=local), pygit2.Oid(hex=theirs)], now
    )
    log.check_written(commit, list(u.incoming))
    return str(commit), u
