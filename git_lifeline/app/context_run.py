"""What `context` does once it has the truth, with no repository in sight: the budget
(the options and git config lifeline.budget / lifeline.tokenizer), the assembly and the
provider's shape. Ledger.context (ledger.py) and the warm path (warm_context.py) both go
through here, so the two cannot drift apart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from ..errors import InputError
from ..views.delivery import FORMATS, deliver

if TYPE_CHECKING:  # annotations only: the warm `context` parses its options, and may answer, without them
    from ..views import context as ctx

__all__ = ["DEFAULT_BUDGET", "FORMATS", "assembled", "checked_budget", "delivered"]

DEFAULT_BUDGET = 16000  # characters (~4,000 tokens; measured in docs/CONTEXT.md), when neither --budget nor lifeline.budget says otherwise


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
    inp: ctx.ContextInput,
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
