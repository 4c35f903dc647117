"""Recall as both faces give it: the hits that answer a question with their entries, or an
abstention with its reason and the nearest entries, which are never presented as answers.

`answer_json` gives the one shape of `recall --json` and of lifeline_recall's structured
content, the typed model `AnswerJSON` (docs/RECALL.md, "The answer an agent reads");
mcp/recall_schema.py builds the tool's output schema from that same model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

from ..core.entry import Entry
from ..core.status import REPLACED, Status, status_of
from ..core.trust import Tier
from ..errors import InputError
from ..views.recall import Strength

if TYPE_CHECKING:  # annotations only
    from ..core.truth import State
    from ..git.repo import GitRepo
    from ..git.store import LineStore
    from ..views.cache import LineCache
    from ..views.recall import Hit
    from ..views.recall_answer import Answer
    from ..views.semantic import Index


class Ledger(Protocol):
    """What recall reads of app.ledger.Ledger (named here, not imported: the ledger imports
    this module to answer `recall`)."""

    gr: GitRepo
    store: LineStore
    recall_mode: tuple[str, str]

    def state(self) -> State: ...

    def cache(self) -> LineCache: ...

    def semantic_index(self) -> Optional[Index]: ...


@dataclass(frozen=True)
class Found:
    """A recall hit, with the entry and whether it is still in force."""

    entry: Entry
    score: float  # views.recall.Hit's: the ranking's, relative to one question
    coverage: float  # the share of the question's weight it matches, in [0, 1]
    status: Status  # core/status.py
    similarity: Optional[float] = None  # the cosine to the question (semantic recall only)
    replaces: Optional[str] = None  # shown because it replaced this hit (whose numbers it carries)
    strength: Strength = "weak"  # "strong": answers on its own; "weak": related; "none": nearest only
    answer_score: float = 0.0  # the number the strength stands on (views/recall_answer.py)
    trust: Tier = "agent"  # core/trust.py: where it came from (never `human` unless it says so)

    @property
    def in_force(self) -> bool:
        """Not replaced by a correction (an entry superseded, withdrawn or closed is not)."""
        return self.status not in REPLACED


@dataclass(frozen=True)
class Recalled:
    """Recall's answer with its entries: `hits` answer the question; when it abstained,
    `reason` says why and `nearest` holds the closest entries (strength "none")."""

    hits: list[Found]
    abstained: bool
    reason: str
    nearest: list[Found]
    floor: float  # the answer score a strong hit reaches


def answer(ledger: Ledger, query: str, k: int = 5) -> Answer:
    """views.recall_answer.Answer for the question, in the ledger's cache."""
    from ..views import recall, recall_answer

    if k < 1:
        raise InputError("-k must be at least 1")
    size = recall.question_length(query)
    if size > recall.MAX_QUESTION_CHARS:
        raise InputError(
            f"the question is {size} characters long as recall reads it (accents and compound "
            f"characters spelled out); recall takes at most {recall.MAX_QUESTION_CHARS} "
            "(ask about one thing at a time)"
        )
    st = ledger.state()
    db = ledger.cache().ensure(ledger.store.head())
    semantic = ledger.semantic_index()
    answered = recall_answer.answer(db, query, k, truth=recall.truth_of(st), semantic=semantic)
    if semantic is not None:
        ledger.cache().restamp()  # the vectors it may have stored are ours, not damage
    return answered


def ask(ledger: Ledger, query: str, k: int = 5) -> Recalled:
    """Recall's answer (views.recall_answer) with each hit's entry."""
    from .provenance import line_provenance

    answered = answer(ledger, query, k)
    st = ledger.state()
    provenance = line_provenance(ledger.gr, ledger.store)

    def found(h: Hit, strength: Strength) -> Found:
        return Found(
            st.by_id[h.id],
            h.score,
            h.coverage,
            status_of(st, h.id),
            h.similarity,
            h.replaces,
            strength,
            h.answer_score,
            provenance.tier(st.by_id[h.id]),
        )

    return Recalled(
        [found(h, h.strength) for h in answered.hits if h.id in st.by_id],
        answered.abstained,
        answered.reason,
        [found(h, "none") for h in answered.nearest if h.id in st.by_id],
        answered.floor,
    )


def strength_words(found: Found) -> str:
    """How a hit answers, in words: what the CLI and the MCP text show beside it."""
    if found.strength == "strong":
        return f"answers (score {found.answer_score:.2f})"
    if found.strength == "weak":
        return f"related, weak (score {found.answer_score:.2f})"
    return f"does not answer (score {found.answer_score:.2f})"
