"""Text helpers both faces use to show entries, taken from the views so that a face
needs nothing below app/."""

from __future__ import annotations

from ..core.blocks import strip_header
from ..core.entry import abbrev, format_ts
from ..core.json_input import JSON, JSONInputError, JSONObject, read_json  # the one bounded JSON reader, for the faces
from ..core.trust import WORDS as TRUST_WORDS
from ..core.trust import waiting_tier
from ..views.context_text import agent_label, md, one_line, trust_tag, who
from ..views.projection import fence_for

# Handed to the faces, which may import only app/ (tests/test_layers.py): the core and views
# helpers they print entries with, and the one bounded JSON reader.
__all__ = [
    "JSON",
    "JSONInputError",
    "JSONObject",
    "TRUST_WORDS",
    "abbrev",
    "agent_label",
    "fence_for",
    "format_ts",
    "md",
    "one_line",
    "read_json",
    "trust_tag",
    "waiting_tier",
    "who",
]


def why_line(body: str, width: int = 200) -> str:
    """An entry's why as one plain line of at most `width` characters (headers left out):
    what a recall hit shows under its summary, so a reader can act on it."""
    text = one_line(strip_header(body))
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
