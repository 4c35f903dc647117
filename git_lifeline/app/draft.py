"""What a write asks for, before any rule has run: the draft of an entry.

Every face (the CLI's options, the MCP tools' arguments, a proposal's content being
approved) builds a `Draft`; the ledger plans it (app/ledger.py, `Ledger.plan_entry`:
every write rule, the secret scan, parents, thread chaining) into the `Entry` it writes
(core/entry.py). A draft is only what was asked: nothing in it is checked yet, but
`refuse_forged_arguments`, the first thing planning runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Union

from ..core.content_rules import MAX_BODY_BYTES, MAX_FIELD_CHARS, MAX_PARENTS, MAX_SUMMARY_CHARS
from ..errors import InputError

# Handed to the faces, which may import only app/ (tests/test_layers.py): the most a draft's
# fields can be and still be written, by which they bound what they take in (mcp/schema.py
# ARGUMENT_BOUNDS).
__all__ = ["MAX_BODY_BYTES", "MAX_FIELD_CHARS", "MAX_PARENTS", "MAX_SUMMARY_CHARS"]


def _tuple(values: Union[str, Iterable[str], None]) -> tuple[str, ...]:
    """A list of strings as a tuple (a draft is frozen); one string is one item."""
    if values is None:
        return ()
    if isinstance(values, str):
        return (values,)
    return tuple(values)


@dataclass(frozen=True)
class Headers:
    """The header fields the options ask for, written on top of the body (core/blocks.py):
    the code it is about (git pathspecs), its subject, and its validity window (dates in
    any form of core/dates.py). Checked and normalised when the draft is planned."""

    paths: tuple[str, ...] = ()
    subject: Optional[str] = None
    valid_from: Optional[str] = None
    valid_until: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", _tuple(self.paths))

    def __bool__(self) -> bool:
        """Whether any header was asked for."""
        return bool(self.paths or self.subject or self.valid_from or self.valid_until)


NO_HEADERS = Headers()


@dataclass(frozen=True)
class Writer:
    """Who writes: the author ("Name <email>"; None: git's identity) and the agent, its
    provider and model ("human", "none", "human" for a person writing without an agent)."""

    author: Optional[str] = None
    agent: str = "human"
    provider: str = "none"
    model: str = "human"

    def draft(
        self,
        kind: str,
        summary: str,
        body: str = "",
        parents: Iterable[str] = (),
        allow_secret: Optional[str] = None,
        thread: Optional[str] = None,
    ) -> Draft:
        """A draft this writer writes (what the verbs that derive an entry build: checkpoint,
        pin, revise, close...; an MCP agent's log and correction)."""
        return Draft(
            kind=kind,
            summary=summary,
            body=body,
            parents=tuple(parents),
            author=self.author,
            agent=self.agent,
            provider=self.provider,
            model=self.model,
            allow_secret=allow_secret,
            thread=thread,
        )


HUMAN = Writer()


@dataclass(frozen=True)
class CheckpointDraft:
    """A checkpoint as asked for: the thread (a name or an open item's id; None: the main
    thread), its sections (goal, done, next, blocked, tried: single lines each), an own
    summary (None: one made from the thread and the first item), who writes, and a human's
    reasoned override of the secret scan. Planned by `Ledger.plan_checkpoint`."""

    thread: Optional[str]
    sections: dict[str, list[str]]
    summary: Optional[str] = None
    writer: Writer = HUMAN
    allow_secret: Optional[str] = None

    @classmethod
    def from_options(
        cls,
        thread: Optional[str],
        goal: Iterable[str],
        done: Iterable[str],
        next_: Iterable[str],
        blocked: Iterable[str],
        tried: Iterable[str],
        summary: Optional[str],
        writer: Writer,
        allow_secret: Optional[str] = None,
    ) -> CheckpointDraft:
        """The draft the faces build from their five section options (CLI flags, MCP arguments)."""
        sections = {"goal": goal, "done": done, "next": next_, "blocked": blocked, "tried": tried}
        return cls(thread, {name: list(items) for name, items in sections.items()}, summary, writer, allow_secret)


@dataclass(frozen=True)
class Draft:
    """An entry as asked for. `parents` are ids, unique prefixes or `line:prefix`;
    `ts` is ISO-8601 text (None: now, or a parent's when the clock is behind it);
    `allow_secret` records a reasoned override of the secret scan; `thread` (a name or
    an open item's id) chains the entry to that thread's head."""

    kind: str
    summary: str
    body: str = ""
    parents: tuple[str, ...] = ()
    author: Optional[str] = None
    agent: str = "human"
    provider: str = "none"
    model: str = "human"
    dedup_key: Optional[str] = None
    ts: Optional[str] = None
    allow_secret: Optional[str] = None
    headers: Headers = NO_HEADERS
    thread: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parents", _tuple(self.parents))

    def refuse_forged_arguments(self) -> None:
        """What no face may ask, checked first when the draft is planned: a line break in a
        single-line argument (it would add header lines to the body), an `allow-secret:`
        header typed into the body, an override asked for by an agent. The secret scan's
        override is honoured only where a human's `--allow-secret` wrote it."""
        from ..core.blocks import refuse_line_break
        from ..core.secrets import ALLOW_HEADER, HUMAN_AGENT, allowed

        for name, value in self.single_line_values():
            refuse_line_break(name, value)
        if allowed(self.body) is not None:
            raise InputError(f"the body's header has {ALLOW_HEADER}:, which a body cannot carry; nothing was written")
        if self.allow_secret is not None and self.agent != HUMAN_AGENT:
            raise InputError("an agent's write cannot override the secret scan; nothing was written")

    def single_line_values(self) -> list[tuple[str, Optional[str]]]:
        """(name, value) of every argument that must be one line, but the header options
        (`Headers`: checked with their own messages, and by `render_header` again)."""
        return [
            ("summary", self.summary),
            ("author", self.author),
            ("agent", self.agent),
            ("provider", self.provider),
            ("model", self.model),
            ("dedup key", self.dedup_key),
            ("ts", self.ts),
            ("thread", self.thread),
            *(("a parent", p) for p in self.parents),
        ]
