"""Text helpers both faces use to show entries, taken from the views so that a face
needs nothing below app/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.blocks import strip_header
from ..core.entry import abbrev, format_ts
from ..views.context_text import agent_label, md, one_line, who
from ..views.projection import fence_for

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from .ledger import Found

__all__ = [
    "abbrev",
    "agent_label",
    "fence_for",
    "format_ts",
    "md",
    "one_line",
    "recall_hit",
    "recall_mode_fields",
    "who",
    "why_line",
]


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


def recall_hit(found: Found) -> dict[str, object]:
    """One recall hit (app.ledger.Found) as both faces give it to a program (`recall --json`,
    lifeline_recall). What says how well it answers is `coverage`, the share of the question's
    weight its words match (the measure abstention reads; in [0, 1] in a ledger of any size),
    and with a model `similarity`, its cosine to the question. `rank_score` only orders the
    hits of this one answer: BM25's idf is about 0 in a ledger of one or two entries, so it is
    never a measure of relevance (docs/RECALL.md, "What a hit's numbers say")."""
    e = found.entry
    hit: dict[str, object] = {
        "id": e.id,
        "kind": e.kind,
        "summary": e.summary,
        "in_force": found.in_force,
        "status": found.status,
        "coverage": round(found.coverage, 3),
    }
    if found.similarity is not None:
        hit["similarity"] = round(found.similarity, 3)
    hit["rank_score"] = float(f"{found.score:.4g}")  # significant digits: a tiny ledger's are ~1e-6
    if found.replaces:
        hit["replaces"] = found.replaces  # shown for the superseded hit it replaced: those are its numbers
    return hit
