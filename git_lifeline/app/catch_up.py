"""What git fetched is what the agent reads (docs/SYNC.md, "Reads catch up with git fetch").

In a clone set up by `init`, a plain `git pull` or `git fetch` brings the remotes' lines into
their tracking refs (refs/remotes/<remote>/lifeline/*) and leaves the local lines where they
were. Every read of a line (CLI context, recall, show, list; MCP; the SessionStart hook; the
HTML view) first calls `catch_up`: what the tracking refs hold beyond the line is brought in
exactly as `git lifeline pull` brings it (exchange.pull without its fetch: the same verified
integration, the line and its review trail), so the read includes it. When that cannot be
done — a tip that fails verification (never read), a read-only repository, another process
writing the line — nothing of it is read, and the answer's first lines say how far behind
the line is and the one command that fixes it (`CatchUp.notice`).

A read that finds nothing to bring in records, beside the cache, that the line's head
contains the remotes' heads (views/cache_warm.py, `.fetched`), so the warm `context` can tell
from ref files alone that nothing was fetched since.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ..errors import LifelineError, describe_failure
from ..git import sync
from ..git.fs import LockHeld
from .workspace import Workspace

if TYPE_CHECKING:
    from ..git.integrate import PullLine

# lifeline.sessionFetchTimeout: how long a session's start waits for its fetch (seconds)
SESSION_FETCH_SECONDS = 3.0


@dataclass(frozen=True)
class Behind:
    """Entries a remote's head (as last fetched) holds that the line does not, and why they
    were not brought in."""

    remote: str
    entries: int
    why: str
    command: str  # the one command that fixes it


@dataclass
class CatchUp:
    line: str
    brought: list[PullLine] = field(default_factory=list)  # what came in (changed lines only)
    behind: list[Behind] = field(default_factory=list)

    def sentences(self) -> list[str]:
        """One sentence per remote the line stays behind: how far, why, the command."""
        return [
            f"line {self.line} is {b.entries} entr{'y' if b.entries == 1 else 'ies'} behind {b.remote} as "
            f"fetched: {b.why}. What follows does not include them. Run: {b.command}"
            for b in self.behind
        ]

    def notice(self) -> str:
        """The first lines of a context read while the line stays behind ("" when it does not)."""
        return "".join(f"> **Behind:** {s}\n" for s in self.sentences()) + ("\n" if self.behind else "")


def catch_up(ws: Workspace, line: Optional[str] = None) -> CatchUp:
    """Bring into `line` (default: the default line) what the remotes' tracking refs hold
    beyond it, verified as a pull verifies; never raises for what it could not do."""
    led = ws.ledger(line)
    out = CatchUp(led.line)
    fetched = sync.fetched_heads(ws.gr, led.line)
    if not fetched:
        return out
    pull_line = f" --line {led.line}" if led.line != ws.default_line else ""
    for remote, theirs in fetched.items():
        if sync.holds(ws.gr, led.head(), theirs):
            continue
        command = f"git lifeline pull {remote}{pull_line}"
        try:
            with sync.hold_writers(ws.gr, led.line):
                from .exchange import pull

                out.brought.extend(p for p in pull(ws, remote, [led.line], fetch=False).lines if p.changed)
            continue
        except sync.PartlyPulled as exc:
            out.brought.extend(p for p in exc.lines if p.changed)
            why = "what was fetched fails verification and was not read (the command says why)"
        except LockHeld:
            why = "another git-lifeline process is writing the line (or read again in a moment)"
        except (LifelineError, OSError) as exc:
            why = f"they could not be brought in: {describe_failure(exc)[0]}"
            if not os.access(ws.gr.common_dir, os.W_OK):  # a read-only mount says so even to root
                why = (
                    "this repository cannot be written here (read-only: a mount, a CI cache, another "
                    "user's tree), so they could not be brought in; run the command where it can be"
                )
        out.behind.append(Behind(remote, _entries_behind(ws, led.line, theirs), why, command))
    _note_contained(ws, led.line)
    return out


def _entries_behind(ws: Workspace, line: str, theirs: str) -> int:
    store = ws.ledger(line).store
    try:
        return len(store.incoming_by_diff(store.head(), theirs)[0])
    except Exception:  # a tip git cannot even walk: at least one entry is missing
        return 1


def _note_contained(ws: Workspace, line: str) -> None:
    """Tell the warm `context` which fetched heads the line's head already contains."""
    from ..views import cache_warm

    head = ws.ledger(line).head()
    if head is None:
        return
    contained = [t for t in sync.fetched_heads(ws.gr, line).values() if sync.holds(ws.gr, head, t)]
    cache_warm.write_fetched(cache_warm.cache_file(str(ws.gr.lifeline_dir()), line), head, contained)


def session_fetch(ws: Workspace) -> bool:
    """At a session's start: fetch the ledger from the shared remote, within
    lifeline.sessionFetchTimeout seconds (default 3; 0 turns it off), silent and harmless
    offline; then the read catches up as any read does. False when nothing was fetched."""
    from .status import shared_remote

    raw = ws.gr.config_get("lifeline.sessionFetchTimeout")
    try:
        seconds = float(raw) if raw is not None else SESSION_FETCH_SECONDS
    except ValueError:
        ws.warnings.append(f"git config lifeline.sessionFetchTimeout {raw!r} is not a number of seconds; used 3")
        seconds = SESSION_FETCH_SECONDS
    remote = shared_remote(ws)
    if remote is None or not seconds > 0:
        return False
    return sync.quiet_fetch(ws.gr, remote, min(seconds, 60.0))
