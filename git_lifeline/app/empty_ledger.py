"""What to say when a line has no entries in this repository.

A plain `git clone` does not fetch `refs/lifeline/*`, so a teammate's clone looks empty while
its remote holds the project's ledger. "The ledger is empty" is then wrong, and telling an
agent to write a new bootstrap would fork the project's history. Whether a remote may hold
the line is read from what is known locally (no network): the remote's lines as last
fetched, and whether its fetch refspec for the ledger is set (`git lifeline init` sets it
and fetches, so afterwards "nothing fetched" means "nothing there").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..git.namespaces import LEDGER
from ..git.repo import GitRepo


@dataclass(frozen=True)
class RemoteLedger:
    remote: str
    state: str  # has-line (fetched, pull it) | unknown (never looked) | absent (looked: not there)


def remote_ledger(gr: GitRepo, line: str) -> Optional[RemoteLedger]:
    """What is known of `line` on the shared remote, or None when there is no remote."""
    # git/sync.py imports the verifier and the gates (git/verify.py, git/checks.py): only a
    # read of an empty line or a bootstrap asks about the remote, so every other write
    # (`log` imports this module through app/workspace.py) starts without them.
    from ..git.sync import default_remote, remotes

    names = remotes(gr)
    if not names:
        return None
    remote = "origin" if "origin" in names else (names[0] if len(names) == 1 else default_remote(gr))
    if remote not in names:
        remote = names[0]
    tracking = LEDGER.tracking_heads(gr, remote)
    if line in tracking:
        return RemoteLedger(remote, "has-line")
    looked = bool(tracking) or LEDGER.fetch_refspec(remote) in gr.config_all(f"remote.{remote}.fetch")
    return RemoteLedger(remote, "absent" if looked else "unknown")


def refuse_second_history(gr: GitRepo, line: str, head: Optional[str]) -> None:
    """A bootstrap starts a project's history: refused (InputError, with the command that
    brings the remote's ledger in) while the shared remote holds a ledger of `line` that is
    not here. Known locally when the tracking refs or init's refspec say; only a remote never
    looked at (a plain clone before `init`) is asked, once, by this rare write."""
    from ..errors import InputError
    from ..git.sync import holds

    found = remote_ledger(gr, line)
    if found is None or found.state == "absent":
        return
    if found.state == "has-line":
        theirs = LEDGER.tracking_heads(gr, found.remote)[line]
        if head is not None and holds(gr, head, theirs):
            return
        raise InputError(
            f"{found.remote} holds a ledger of line {line!r} that is not brought in here: a bootstrap now "
            f"would start a second history of the project. Bring it in first: git lifeline pull {found.remote}"
        )
    # never looked (a plain clone before `init`): ask the remote once, as only a bootstrap does
    from ..git.sync import advertises

    held = advertises(gr, found.remote, line, 10.0)
    if held is False:
        return
    if held:
        raise InputError(
            f"{found.remote} holds the project's ledger (a plain git clone does not fetch refs/lifeline/*): a "
            f"bootstrap now would start a second history of the project. Bring it in first: git lifeline "
            f"pull {found.remote} (or git lifeline init, which also makes git fetch bring it)"
        )
    raise InputError(
        f"could not ask {found.remote} whether it holds the project's ledger, and a bootstrap written before "
        f"it is brought in would start a second history. Once {found.remote} can be reached, run git "
        "lifeline init (or git lifeline pull), then write the bootstrap"
    )


def hint_for_humans(gr: GitRepo, line: str) -> Optional[str]:
    """A warning for a read of an empty line, when a remote may hold it."""
    found = remote_ledger(gr, line)
    if found is None or found.state == "absent":
        return None
    if found.state == "has-line":
        return (
            f"line {line!r} has no entries here, but {found.remote} has it (as last fetched): "
            f"run `git lifeline pull {found.remote}`"
        )
    return (
        f"line {line!r} has no entries in this clone, and {found.remote} may hold the project's ledger "
        f"(a plain git clone does not fetch refs/lifeline/*): run `git lifeline pull {found.remote}`, "
        "or `git lifeline init`, which also makes `git fetch` bring it"
    )


def text_for_humans(gr: GitRepo, line: str) -> Optional[str]:
    """What `context` prints on stdout for an empty line when a remote may hold it (None: ask
    for a bootstrap, as for a project with no remote ledger)."""
    found = remote_ledger(gr, line)
    if found is None or found.state == "absent":
        return None
    return (
        f"_Line {line} has no entries in this clone, but {found.remote} "
        f"{'has it' if found.state == 'has-line' else 'may hold it'}: run `git lifeline pull {found.remote}` "
        "(or `git lifeline init`, which also makes `git fetch` bring it). Record no bootstrap before: it "
        "would start a second history of the project._\n"
    )


def text_for_agents(gr: GitRepo, line: str) -> str:
    """The context an agent reads when the line is empty: never a bootstrap request while a
    remote may hold the ledger, and never a command that would bypass the write policy."""
    found = remote_ledger(gr, line)
    if found is not None and found.state != "absent":
        return (
            f"# Lifeline context: {line}\n\n"
            f"This clone has no entries in ledger line '{line}', but the remote {found.remote} "
            f"{'has it' if found.state == 'has-line' else 'may hold it'} (a plain git clone does not fetch "
            "the ledger). Do not propose a bootstrap: that would start a second history of the project. "
            f"Ask the human to run `git lifeline pull {found.remote}` (or `git lifeline init`), then read "
            "the context again.\n"
        )
    where = f" (nor on {found.remote} when it was last fetched)" if found is not None else ""
    return (
        f"# Lifeline context: {line}\n\n"
        f"The ledger is empty: nothing is recorded for this project yet{where}. Ask the human three to "
        "seven questions about what the project is and why it exists, then propose one bootstrap entry "
        "with lifeline_append (kind bootstrap, the why in the body); a human approves it. Propose the "
        "decisions in force and the open items the same way, one entry each.\n"
    )


TWO_BOOTSTRAPS = "the project's What: two bootstraps in force (supersede one with git lifeline revise)"


def identity_conflict(identities: list[str]) -> str:
    """The sentence a context or a pull says when more than one bootstrap is in force."""
    others = ", ".join(f"[{i[:8]}]" for i in identities[:-1])
    return (
        f"{len(identities)} bootstraps are in force (two histories of the project met): the What shown is "
        f"the latest, [{identities[-1][:8]}]; also in force: {others}. A human supersedes one "
        "(git lifeline revise <id>)."
    )
