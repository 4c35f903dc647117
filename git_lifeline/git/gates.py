"""The gates a ref update of ours passes before it lands elsewhere: what the pre-push
hook (on the way out) and the pre-receive hook (on a server) ask of it.

One loop over namespaces.NAMESPACES: an update of `refs/lifeline/*` (a line) and one of
`refs/lifeline-review/*` (a review trail) are judged by the same rules, so no family of
refs can slip through a gate that forgot it:
* a valid name; no deletion (the logs are append-only);
* a name new there that does not clash with a line name in use there, or with another
  of the push (fanout.name_clashes: equal after NFKC and case folding);
* a fast-forward of what the other side has (no rewind, no rewrite);
* what the update adds passes the one verification engine (verify.verify_range), with
  the ledger heads of the same push counted as lines (they land together or not at all).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from ..core.entry import abbrev
from ..errors import IntegrityError
from .fanout import FanoutLog, clash_message, name_clashes
from .libgit2 import pygit2
from .names import NAME_RE
from .namespaces import LEDGER, NAMESPACES, namespace_of
from .repo import GitRepo
from .sync import ZERO, remotes
from .verify import verify_range


@dataclass
class RefUpdate:
    """One line of pre-push's standard input."""

    local_ref: str
    new: str
    remote_ref: str
    old: str

    @property
    def ref(self) -> str:
        """Ours: the ref it updates (the local one names it when the remote one is not ours)."""
        return self.remote_ref if namespace_of(self.remote_ref) else self.local_ref


def is_ours(ref: str) -> bool:
    return namespace_of(ref) is not None


def hook_input(stdin: bytes, fields: int) -> list[list[str]]:
    """The ref updates git hands a hook on stdin (pre-push: 4 fields a line, pre-receive: 3),
    split exactly as git writes them: lines end in a line feed, fields are apart by one
    space. A ref name holds no ASCII space or control character but may hold any other
    character: Python's str.split() and splitlines() also cut at U+00A0, U+3000, U+0085,
    U+2028, so an update of `refs/lifeline/a<U+00A0>b` was skipped and one of
    `refs/lifeline/a<U+2028>b` judged as line `a`. A name that is not UTF-8 keeps its
    prefix (it is refused as not a valid line name). A line of any other shape is refused:
    the gate never guesses which ref it would move."""
    out = []
    for raw in stdin.split(b"\n"):
        if not raw:
            continue
        parts = raw.split(b" ")
        if len(parts) != fields:
            raise IntegrityError(
                f"unreadable ref update from git: {raw[:200].decode('utf-8', 'replace')!r}; nothing was accepted"
            )
        out.append([p.decode("utf-8", "replace") for p in parts])
    return out


def check_updates(
    gr: GitRepo, updates: list[tuple[str, str, str]], where: str, present: Iterable[str] = ()
) -> list[str]:
    """Problems with moving each (ref, old, new) of one push at `where` (ZERO: absent);
    refs outside our namespaces are not ours to judge. `present`: the line names in use
    at `where`, in every family (a name the push updates is in use there too)."""
    pending = {}
    here = set(present)
    landing = []
    for ref, old, new in updates:
        found = namespace_of(ref)
        if not found or not NAME_RE.fullmatch(found[1]):
            continue
        if old != ZERO:
            here.add(found[1])
        if new != ZERO:
            landing.append(found[1])
            if found[0] is LEDGER:
                pending[found[1]] = new
    clashes = name_clashes(here, landing)
    problems: list[str] = []
    for ref, old, new in updates:
        found = namespace_of(ref)
        if found and new != ZERO and found[1] in clashes:
            name = found[1]
            problems.append(f"{found[0].noun} {name}: name-clash: {clash_message(name, clashes[name])}")
            continue
        problems += check_update(gr, ref, old, new, where, pending)
    return problems


def check_update(gr: GitRepo, ref: str, old: str, new: str, where: str, pending: dict | None = None) -> list[str]:
    """Problems with moving `ref` from `old` (ZERO: absent) to `new` at `where`."""
    found = namespace_of(ref)
    if found is None:
        return []
    ns, name = found
    if not NAME_RE.fullmatch(name):
        return [f"{ref}: not a valid line name"]
    label = f"{ns.noun} {name}"
    if new == ZERO:
        return [f"{label}: deleting a {ns.thing} on {where} is refused (the {ns.whole} is append-only)"]
    repo = gr.repo
    if repo.get(new) is None:
        return [f"{label}: commit {abbrev(new)} is missing"]
    hide = []
    if old != ZERO:
        if repo.get(old) is None:
            return [f"{label}: {where} has {ns.whole} commits this clone lacks ({abbrev(old)}); run: git lifeline sync"]
        if old != new and not repo.descendant_of(pygit2.Oid(hex=new), pygit2.Oid(hex=old)):
            return [
                f"{label}: not a fast-forward of what {where} has ({abbrev(old)}): {ns.items} would be lost; "
                "run: git lifeline sync"
            ]
        hide = [old]
    report = verify_range(FanoutLog(gr, ns, name), new, hide, pending=pending)
    return [f"{label}: {p.describe()}" for p in report.problems]


def outgoing_updates(gr: GitRepo, remote: str) -> list[RefUpdate]:
    """Every log of every namespace against the remote as last fetched (ZERO where the
    remote is not known to have it): what a push of everything would send."""
    known = remote in remotes(gr)
    out = []
    for ns in NAMESPACES:
        tracking = ns.tracking_heads(gr, remote) if known else {}
        for name in ns.names(gr):
            head = FanoutLog(gr, ns, name).head()
            if head:
                out.append(RefUpdate(ns.ref(name), head, ns.ref(name), tracking.get(name, ZERO)))
    return out


def see_quarantine(gr: GitRepo) -> None:
    """Let pygit2 see the objects a push has not yet moved out of git's quarantine
    (git diff-tree sees them through the environment git gives the hook)."""
    for var in ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY"):
        path = os.environ.get(var)
        if path and os.path.isdir(path):
            gr.repo.odb.add_disk_alternate(path)
