"""Text helpers both faces use to show entries, taken from the views so that a face
needs nothing below app/."""

from __future__ import annotations

from ..core.blocks import strip_header
from ..core.entry import format_ts
from ..views.context import md, one_line, who

__all__ = ["format_ts", "md", "one_line", "recall_mode_fields", "who", "why_line"]


def why_line(body: str, width: int = 200) -> str:
    """An entry's why as one plain line of at most `width` characters (headers left out):
    what a recall hit shows under its summary, so a reader can act on it."""
    text = one_line(strip_header(body))
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def recall_mode_fields(recall_mode: tuple) -> dict:
    """What a structured recall answer says of the recall that answered (Ledger.recall_mode):
    semantic with its model, or lexical with the reason."""
    mode, detail = recall_mode
    return {"mode": mode, ("model" if mode == "semantic" else "reason"): detail}
