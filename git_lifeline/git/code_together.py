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

from .repo import GitRepo, at_time

GROUP_MIN = 3  # questions over one range asked together first
# The pathspecs one `git log` is given together: a decision's `paths:` may be 64 KB (its
# body's bound), and a union of many would pass what the system lets one process be given
# (Linux: 2 MB of arguments and environment, macOS: 1 MB): one question alone always fits.
UNION_MAX_BYTES = 256 * 1024
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
    GROUP_MIN questions (the extra process would cost more than it saves when touched). A
    range's questions are asked in parts of at most UNION_MAX_BYTES of pathspecs.

    Behind hidden commits git's walk is limited, and there a parent older than `since` no
    longer counts in a merge's TREESAME: an earlier `since` could hide a merge a later one
    shows. Such a range is asked together only by questions with the same `since`."""
    ranges: dict[tuple[tuple[str, ...], Optional[int]], list[Question]] = {}
    for q in questions:
        if q[0] and not any(spec.startswith((":", "-")) for spec in q[0]):
            ranges.setdefault((tuple(sorted(q[1])), q[2] if q[1] else None), []).append(q)
    quiet: set[Question] = set()
    for (hide, _since), in_range in ranges.items():
        for asked in _parts(in_range):
            if len(asked) >= GROUP_MIN and _untouched(gr, head, hide, asked):
                quiet.update(asked)
    return quiet


def _untouched(gr: GitRepo, head: str, hide: tuple[str, ...], asked: list[Question]) -> bool:
    """Whether no commit of the range touched the union of `asked`'s pathspecs."""
    times = [q[2] for q in asked if q[2] is not None]
    since = [at_time("--since", min(times))] if len(times) == len(asked) else []
    union = sorted({spec for q in asked for spec in q[0]})
    argv = ["log", "--full-history", "--max-count=1", "--format=%H", *since, "--end-of-options", head]
    proc = gr.git([*argv, *(f"^{h}" for h in hide), "--", *union], False, env=dict(os.environ, **PATHSPEC_ENV))
    return proc.returncode == 0 and not proc.stdout.strip()


def _parts(asked: list[Question]) -> list[list[Question]]:
    """`asked` in order, cut where the union of a part's pathspecs would pass UNION_MAX_BYTES
    (a question larger than that on its own is a part of its own, and walks alone)."""
    parts: list[list[Question]] = []
    specs: set[str] = set()
    size = 0
    for q in asked:
        if not parts or size + _bytes(set(q[0]) - specs) > UNION_MAX_BYTES:
            parts.append([])
            specs, size = set(), 0
        size += _bytes(set(q[0]) - specs)
        specs.update(q[0])
        parts[-1].append(q)
    return parts


def _bytes(specs: set[str]) -> int:
    return sum(len(spec.encode("utf-8", "surrogatepass")) + 1 for spec in specs)
