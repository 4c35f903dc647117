"""What `context` does once it has the truth, with no repository in sight: the budget
(the options and git config lifeline.budget / lifeline.tokenizer), the assembly and the
provider's shape. Ledger.context (ledger.py) and the warm path (warm_context.py) both go
through here, so the two cannot drift apart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Optional

from ..core.entry import Entry
from ..core.status import Status
from ..core.trust import Provenance
from ..core.truth import State
from ..errors import InputError
from ..git.stale_kept import KeptStaleness
from ..views.context_sections import ContextInput
from ..views.delivery import FORMATS, deliver

if TYPE_CHECKING:  # annotations only: the warm `context` parses its options, and may answer, without them
    from ..views import context as ctx

# Handed to the faces, which may import only app/ (tests/test_layers.py): the delivery formats cli/fast.py offers.
__all__ = ["FORMATS"]

DEFAULT_BUDGET = 16000  # characters (~4,000 tokens; measured in docs/CONTEXT.md), when neither --budget nor lifeline.budget says otherwise


def context_input(
    st: State,
    line: str,
    head: Optional[str],
    stale: KeptStaleness,
    provenance: Provenance,
    relevant: Iterable[tuple[Entry, Status]] = (),
    query: Optional[str] = None,
    thread: Optional[str] = None,
) -> ContextInput:
    """What the context is assembled from, for both paths (Ledger.context and the warm
    path): the state's conflicts and the staleness marks are read here, once."""
    return ContextInput(
        state=st,
        line=line,
        head_commit=head,
        relevant=list(relevant),
        query=query,
        thread=thread,
        conflicts=st.conflicting(),
        stale=stale.marks,
        stale_unknown=stale.unknown_note,
        provenance=provenance,
    )


def checked_budget(
    budget: Optional[int], budget_tokens: Optional[int], config_int: Callable[[str, int], int]
) -> Optional[int]:
    """The budget in characters (None when it is given in tokens), checked; a read is
    bounded by default, whatever the ledger's size."""
    if budget is not None and budget_tokens is not None:
        raise InputError("give --budget or --budget-tokens, not both")
    for name, value in (("--budget", budget), ("--budget-tokens", budget_tokens)):
        if value is not None and value < 0:
            raise InputError(f"{name} must be zero or more")
    if budget is None and budget_tokens is None:
        budget = config_int("lifeline.budget", DEFAULT_BUDGET)
        if budget < 0:
            raise InputError("git config lifeline.budget must be zero or more")
    return budget


def assembled(
    inp: ContextInput,
    budget: Optional[int],
    budget_tokens: Optional[int],
    config_get: Callable[[str], Optional[str]],
) -> ctx.ContextParts:
    from ..views.context import assemble

    if budget_tokens is not None:
        from ..views.tokens import measure_for

        return assemble(inp, budget_tokens, measure_for(config_get("lifeline.tokenizer") or "estimate"))
    return assemble(inp, budget)


def delivered(parts: ctx.ContextParts, fmt: str) -> str:
    """The context in a provider's system-message shape (generic: the markdown itself)."""
    return deliver(parts.stable, parts.volatile, fmt)
