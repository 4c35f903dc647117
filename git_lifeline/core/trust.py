"""An entry's trust tier: where it came from, so that an agent reading the context can weigh
an unreviewed agent's claim apart from what the team wrote (docs/SECURITY.md, "Trust tiers").

* `human`: written by a human (the entry's `agent` is `human`);
* `approved`: an agent's write that a human approved through review (an `approved` or
  `duplicate` record of the line's trail names it);
* `agent`: an agent's direct write, which the policy let in unreviewed: an agent's claim;
* `imported`: brought in by `import` (an ADR directory, a lifeline-context ledger), whoever
  wrote it at its source.

The tier says what the ledger records, not who pushed it: anyone who can push can write an
entry that says `human` (docs/SECURITY.md). Pure: what git records is read by git/provenance.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Tier = Literal["human", "approved", "agent", "imported"]

# What the context shows after an item's anchor (views/context_text.py); a human's item has no tag.
TAGS: dict[Tier, str] = {"human": "", "approved": "approved", "agent": "agent", "imported": "imported"}

# What a reader is told of each tier in full (show, lifeline_show).
WORDS: dict[Tier, str] = {
    "human": "written by a human",
    "approved": "an agent's write, approved by a human through review",
    "agent": "an agent's direct write, unreviewed: an agent's claim",
    "imported": "imported (by an ADR or lifeline-context import)",
}


def waiting_tier(agent: str) -> Tier:
    """A proposal waiting for review: nobody approved it yet, so an agent's is an agent's claim."""
    return "human" if agent == "human" else "agent"


class Written(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def agent(self) -> str: ...


@dataclass(frozen=True)
class Provenance:
    """What the line records beyond the entries themselves: ids approved through review,
    ids an import brought in."""

    approved: frozenset[str] = frozenset()
    imported: frozenset[str] = frozenset()

    def tier(self, e: Written) -> Tier:
        if e.id in self.imported:
            return "imported"
        if e.agent == "human":
            return "human"
        return "approved" if e.id in self.approved else "agent"
