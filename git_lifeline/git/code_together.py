"""Staleness questions over one range of code commits, asked of git together first.

git/codelog.py runs one `git log` per question (a decision's pathspecs, the commits whose
history is hidden, the time it starts from): a cold `context` of gen.py's 1,000-entry ledger
started 33 of them, a sixth of its CPU, though no commit since touched any of those paths.
The questions over one range are first asked of one `git log` over the union of their
pathspecs; only when a commit touches the union does each walk on its own (CodeLog.changes).
"""

from __future__ import annotations

import os
from typing import Optional

from .repo import GitRepo

GROUP_MIN = 3  # questions over one range asked together first
# git's pathspec settings from the environment (GIT_LITERAL_PATHSPECS and friends) must
# not change what a ledger's `paths:` mean from one shell to the next
PATHSPEC_ENV = {
    "GIT_LITERAL_PATHSPECS": "0",
    "GIT_GLOB_PATHSPECS": "0",
    "GIT_NOGLOB_PATHSPECS": "0",
    "GIT_ICASE_PATHSPECS": "0",
}
# What a decision asks of the code log: (its pathspecs, the commits whose history is
# hidden, the time it starts from or None), the key of CodeLog.changes.
Question = tuple[tuple[str, ...], tuple[str, ...], Optional[int]]


def untouched_together(gr: GitRepo, head: str, questions: list[Question]) -> set[Question]:
    """The questions `code_changes` answers with [] (no commit touched them), known from one
    `git log --max-count=1` per range (the same hidden commits) over the union of their
    pathspecs from the earliest `since`. Exact: a commit TREESAME under the union is TREESAME
    under each part, and the earliest `since` walks every commit a later one walks. Magic (an
    exclude widens the answer) and anchors walk alone, and so does a range asked by fewer than
    GROUP_MIN questions (the extra process would cost more than it saves when touched)."""
    ranges: dict[tuple[str, ...], list[Question]] = {}
    for q in questions:
        if q[0] and not any(spec.startswith((":", "-")) for spec in q[0]):
            ranges.setdefault(tuple(sorted(q[1])), []).append(q)
    quiet: set[Question] = set()
    for hide, asked in ranges.items():
        times = [q[2] for q in asked if q[2] is not None]
        if len(asked) < GROUP_MIN:
            continue
        since = [f"--since=@{min(times)}"] if len(times) == len(asked) else []
        union = sorted({spec for q in asked for spec in q[0]})
        argv = ["log", "--full-history", "--max-count=1", "--format=%H", *since, "--end-of-options", head]
        proc = gr.git([*argv, *(f"^{h}" for h in hide), "--", *union], False, env=dict(os.environ, **PATHSPEC_ENV))
        if proc.returncode == 0 and not proc.stdout.strip():
            quiet.update(asked)
    return quiet
