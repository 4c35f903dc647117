"""One server instance among many: a clone of the team's remote that reads from itself and
publishes what it writes.

No shared state but the remote. Reads are served from this clone, refreshed from the remote
at most every `refresh_seconds` (a pull: fetch, verify, integrate). A write is recorded in the
clone like any other (the review trail's or the line's compare-and-swap), then published
by `exchange.sync_with`: pull, push, and on a race (another instance pushed first) pull the
union and push again. Writes that waited behind one another go out in one push: `publish`
sends everything recorded up to the moment it starts.

Without a remote the instance is alone: nothing is fetched or pushed.
"""

from __future__ import annotations

import time
from typing import Optional

from ..errors import describe_failure
from . import exchange
from .workspace import Workspace

DEFAULT_REFRESH_SECONDS = 5.0


class Replica:
    """Called on the server's one worker thread only (no lock of its own)."""

    def __init__(self, ws: Workspace, remote: Optional[str], refresh_seconds: float = DEFAULT_REFRESH_SECONDS):
        self.ws = ws
        self.remote = remote
        self.refresh_seconds = refresh_seconds
        self._refreshed = float("-inf")
        self._recorded = 0  # writes recorded in this clone
        self._published = 0  # of them, how many a push has carried to the remote

    @classmethod
    def of(cls, ws: Workspace, remote: Optional[str], refresh_seconds: float) -> "Replica":
        """`remote` as named, else the repository's only or `origin` remote, else none."""
        if remote is None:
            names = ws.remotes()
            remote = "origin" if "origin" in names else (names[0] if len(names) == 1 else None)
        elif remote not in ws.remotes():
            from ..errors import InputError

            raise InputError(f"no remote named {remote!r} in this repository")
        return cls(ws, remote, refresh_seconds)

    def refresh(self) -> None:
        """Pull from the remote when the last pull is older than refresh_seconds. A remote that
        cannot be reached leaves the clone as it is, with a warning: reads still answer."""
        if self.remote is None or time.monotonic() - self._refreshed < self.refresh_seconds:
            return
        self._refreshed = time.monotonic()
        try:
            exchange.pull(self.ws, self.remote)
        except Exception as exc:  # the clone still answers; the warning says from what
            self.ws.warnings.append(f"could not refresh from remote {self.remote!r}: {describe_failure(exc)[0]}")

    def recorded(self) -> None:
        self._recorded += 1

    def publish(self) -> list[str]:
        """Push everything recorded so far (nothing when an earlier push carried it). A failure
        keeps the writes in this clone, to go out with the next publish; the caller is told."""
        if self.remote is None or self._published >= self._recorded:
            return []
        upto = self._recorded
        try:
            report = exchange.sync_with(self.ws, self.remote)
        except Exception as exc:
            return [
                f"recorded in this server's clone, not yet published to remote {self.remote!r} "
                f"({describe_failure(exc)[0]}); it goes out with the next write"
            ]
        rejected = report.push.rejected
        if rejected:
            return [f"recorded in this server's clone; the remote refused part of the push ({len(rejected)} ref(s))"]
        self._published = upto
        self._refreshed = time.monotonic()  # sync_with pulled first
        return []
