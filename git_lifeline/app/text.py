"""Text helpers both faces use to show entries, taken from the views so that a face
needs nothing below app/."""

from __future__ import annotations

from ..views.context import one_line, who

__all__ = ["one_line", "who"]
