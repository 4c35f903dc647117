"""Exchanging the ledger with remotes: fetch, pull, push, sync, clone (docs/SYNC.md).

The network and the merges are git/sync.py's; here each pull also brings the review
trails in and levels the projection files of the lines it changed. `lines=None`
means every line; the faces pass [name] when the user chose one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..core.entry import Entry
from ..git import sync
from ..git.fanout import Progress, no_progress
from ..git.integrate import PullLine
from ..git.namespaces import LEDGER, REVIEW
from ..git.sync import FetchLine, PartlyPulled, PushResult
from .workspace import Workspace

# Handed to the faces, which may import only app/ (tests/test_layers.py): what cli/sync.py reports a fetch, pull or push with.
__all__ = ["PartlyPulled", "Progress", "PullLine", "PushResult", "no_progress"]


@dataclass
class FetchReport:
    remote: str
    lines: list[FetchLine]  # how each line relates to the remote's


@dataclass
class PullReport:
    remote: str
    lines: list[PullLine]  # created, fast-forwarded, merged...


@dataclass
class SyncReport:
    remote: str
    pulls: list[PullLine]  # of every pull that changed a line
    push: PushResult


@dataclass
class CloneReport:
    workspace: Workspace
    directory: Path
    remote: str
    pulls: list[PullLine]


@dataclass
class RemoteSetup:
    remote: str
    added: bool  # False when the refspec was there already
    refspec: str


def fetch(ws: Workspace, remote: Optional[str] = None, lines: Optional[list[str]] = None) -> FetchReport:
    name = sync.resolve_remote(ws.gr, remote)
    return FetchReport(name, sync.fetch(ws.gr, name, lines))


def overrides_brought(pulls: list[PullLine]) -> list[tuple[str, str, str]]:
    """(line, entry id, reason) of every pulled entry that overrides the secret scan: a
    teammate's `--allow-secret`, which a pull names rather than bringing in silently
    (`git config lifeline.allowSecretOverride false` refuses them)."""
    from ..core.secrets import honoured_override

    out = []
    for pl in pulls:
        if pl.namespace != "ledger":
            continue
        for entry_id in pl.incoming:
            e = pl.parsed.get(entry_id)
            reason = honoured_override(e) if e is not None else None
            if reason is not None:
                out.append((pl.line, entry_id, reason))
    return out


def pull(
    ws: Workspace,
    remote: Optional[str] = None,
    lines: Optional[list[str]] = None,
    progress: Optional[Progress] = None,
    fetch: bool = True,
) -> PullReport:
    """Fetch, then bring each remote line and its review trail in (create, fast-forward or
    merge; sync.integrate carries every namespace, so each log is integrated once). A line that
    fails verification is left out and the others still come in; then PartlyPulled is
    raised with `report` set to what came in."""
    name = sync.resolve_remote(ws.gr, remote)
    if fetch:
        sync.fetch(ws.gr, name, lines)
    partial: Optional[PartlyPulled] = None
    try:
        results = sync.integrate(ws.gr, name, lines, progress or no_progress)
    except PartlyPulled as exc:
        partial, results = exc, exc.lines
    for pl in results:
        if pl.changed:
            led = ws.ledger(pl.line)
            led.projection.after_pull(pl)
            if not _may_bring_a_bootstrap(pl):
                continue
            identities = led.state().identities
            if len(identities) > 1 and set(identities) & set(pl.incoming):
                from .empty_ledger import identity_conflict

                ws.warnings.append(
                    f"line {pl.line}: the pull brought in a second bootstrap: {identity_conflict(identities)}"
                )
    report = PullReport(name, results)
    if partial is not None:
        partial.report = report
        raise partial
    return report


def _may_bring_a_bootstrap(pl: PullLine) -> bool:
    """Whether an entry the pull brought may be a bootstrap: an entry parsed whole says its
    kind, a compact record or none may be one. Only then is the line's truth derived for the
    second-bootstrap warning (in a clone without a cache, a whole cache build: at 1M entries
    the pull of 1,000 took 172 s of CPU, 2.5 s of it integrating them)."""
    if pl.namespace != "ledger":
        return False
    for entry_id in pl.incoming:
        record = pl.parsed.get(entry_id)
        if not isinstance(record, Entry) or record.kind == "bootstrap":
            return True
    return False


def push(
    ws: Workspace, remote: Optional[str] = None, lines: Optional[list[str]] = None, progress: Optional[Progress] = None
) -> PushResult:
    """Push every line and its review trail (never forced)."""
    name = sync.resolve_remote(ws.gr, remote)
    return sync.push(ws.gr, name, lines, progress or no_progress)


# Another clone's push landing between our pull and push costs one more round; several
# clones syncing at once need a few, spaced at random (sync.retry_pause).
SYNC_ATTEMPTS = 8
SYNC_SECONDS = 60.0


def sync_with(
    ws: Workspace,
    remote: Optional[str] = None,
    lines: Optional[list[str]] = None,
    progress: Optional[Progress] = None,
    attempts: int = SYNC_ATTEMPTS,
    seconds: float = SYNC_SECONDS,
) -> SyncReport:
    """Pull then push; when someone pushed in between, pull and push again after a
    jittered, growing pause (at most `attempts` rounds within about `seconds`).

    A line of the remote that fails verification is left out of both: the others are
    pulled and pushed, then PartlyPulled is raised with `report` set to the SyncReport."""
    name = sync.resolve_remote(ws.gr, remote)
    pulls: list[PullLine] = []
    result = PushResult(name)
    deadline = time.monotonic() + seconds
    partial: Optional[PartlyPulled] = None
    for attempt in range(1, max(1, attempts) + 1):
        if attempt > 1:
            pause = sync.retry_pause(attempt)
            if time.monotonic() + pause > deadline:
                break
            time.sleep(pause)
        try:
            pulled = pull(ws, name, lines, progress).lines
            partial = None
        except PartlyPulled as exc:
            partial, pulled = exc, exc.lines
        pulls.extend(p for p in pulled if p.changed)
        wanted = lines
        if partial is not None:
            every = set(sync.local_heads(ws.gr)) | set(REVIEW.names(ws.gr))
            wanted = sorted((set(lines) if lines is not None else every) - partial.refused_names)
        result = push(ws, name, wanted, progress) if wanted is None or wanted else PushResult(name)
        if not any(p.needs_sync for p in result.rejected):
            break
    report = SyncReport(name, pulls, result)
    if partial is not None:
        partial.report = report
        raise partial
    return report


def remote_setup(ws: Workspace, remote: Optional[str] = None) -> RemoteSetup:
    """Make a plain `git fetch REMOTE` bring the ledger too (a fetch refspec)."""
    name = sync.resolve_remote(ws.gr, remote)
    return RemoteSetup(name, sync.remote_setup(ws.gr, name), LEDGER.fetch_refspec(name))


def set_refspecs(ws: Workspace, remote: str) -> list[str]:
    """The fetch refspecs (and branch exclusions) that make a plain `git fetch REMOTE` bring
    the ledger and its review trails: what `init` and `clone` set. The ones added."""
    added = [LEDGER.fetch_refspec(remote)] if sync.remote_setup(ws.gr, remote) else []
    key, review_spec = f"remote.{remote}.fetch", REVIEW.fetch_refspec(remote)
    if review_spec not in ws.gr.config_all(key):
        ws.gr.config_add(key, review_spec)
        added.append(review_spec)
    return added


def clone(url: str, directory: Optional[str] = None, progress: Optional[Progress] = None) -> CloneReport:
    """git clone, then what `git lifeline init` sets for the remote (the fetch refspecs, so a
    plain `git fetch` brings the ledger too), then pull the ledger from the new clone's remote."""
    dest = sync.clone(url, directory)
    ws = Workspace.open(str(dest))
    names = sync.remotes(ws.gr)
    remote = names[0] if names else "origin"
    set_refspecs(ws, remote)
    return CloneReport(ws, dest, remote, pull(ws, remote, None, progress).lines)
