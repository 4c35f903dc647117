"""Text helpers both faces use to show entries, taken from the views so that a face
needs nothing below app/."""

from __future__ import annotations

from ..core.blocks import strip_header
from ..core.entry import format_ts
from ..views.context_text import md, one_line, who
from ..views.projection import fence_for

__all__ = ["fence_for", "format_ts", "md", "one_line", "who", "why_line"]


def why_line(body: str, width: int = 200) -> str:
    """An entry's why as one plain line of at most `width` characters (headers left out):
    what a recall hit shows under its summary, so a reader can act on it."""
    text = one_line(strip_header(body))
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
