"""The staleness `context` shows for a whole line, found from git once per (ledger head,
trail head, code view) and kept in the line's `.stale` file (git/stale_kept.py) for the
next reader, the warm context included: a ledger whose decisions name code paths (a tenth
of a realistic one's) no longer sends every warm `context` down the normal path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from ..core import truth
from ..git.reffiles import read_ref
from ..git.stale_kept import KeptStaleness, code_view, keep_staleness, kept_staleness, stale_file

if TYPE_CHECKING:  # the warm context imports names_code: no pygit2 on its path
    from ..git.history import StaleFindings
    from ..git.repo import GitRepo
    from ..git.store import LineStore


def names_code(st: truth.State) -> bool:
    """Whether a decision in force names code paths (else nothing is stale: find_stale)."""
    return any(st.fold.facts.get(i, {}).get("paths") for i in st.decision_ids)


def context_staleness(
    gr: "GitRepo",
    store: "LineStore",
    st: truth.State,
    find: Callable[[truth.State], "StaleFindings"],
    whole_line_now: bool,
) -> KeptStaleness:
    """The marks and note of `find(st)` (Ledger.staleness); for the whole line at its head
    (`whole_line_now`: no thread, no --as-of) read from and kept in the line's `.stale`
    file, for the triple the warm context will ask with."""
    if not names_code(st):
        return KeptStaleness({}, None)
    if not whole_line_now:
        return _shown(find(st))
    head = store.head()
    trail_head = read_ref(str(gr.common_dir), f"refs/lifeline-review/{store.name}")
    view = code_view(str(gr.git_dir), str(gr.common_dir))
    path = stale_file(str(gr.lifeline_dir()), store.name)
    if head is not None and view is not None:
        kept = kept_staleness(path, head, trail_head, view)
        if kept is not None:
            return kept
    findings = find(st)
    found = _shown(findings)
    if head is not None and view is not None and _holds(gr, store, findings, trail_head, view):
        keep_staleness(path, head, trail_head, view, found)
    return found


def _shown(findings: "StaleFindings") -> KeptStaleness:
    return KeptStaleness({s.decision: s.mark() for s in findings.stale}, findings.unknown_note())


def _holds(gr: "GitRepo", store: "LineStore", findings: "StaleFindings", trail_head: Optional[str], view: str) -> bool:
    """Whether the answer is the one the triple stands for: the code HEAD git answered at
    is the one the files say, the trail read from its files is git's, and no commit the
    ledger records was missing (a fetch of it may change the answer)."""
    from ..git.trails import ReviewTrail

    if findings.missing or findings.code_head is None or view.split(" ", 1)[0] != findings.code_head:
        return False
    return ReviewTrail(gr, store.name).head() == trail_head
