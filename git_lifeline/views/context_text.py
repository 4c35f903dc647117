"""The lines of the context: each item rendered at each of its levels of detail.

Levels go from 0 (the compact one-line form that still names the item by its
anchor) upwards (a why excerpt, then who and when, then a longer why). The packer
(context_pack) picks a level per item; nothing here knows about budgets.

Text that comes from entries is escaped (`md`) so that it cannot fake structure
within its line: an anchor (`[deadbeef]`), bold, an italic mark such as
_(superseded)_, a warning sign, or an HTML comment hiding the rest of the context.
"""

from __future__ import annotations

import re

from ..core import blocks
from ..core.entry import Entry, abbrev
from ..core.status import REPLACED, Status
from ..core.trust import TAGS, Tier
from ..core.truth import Checkpoint

WHY_WIDTHS = (0, 96, 160, 320)  # decision levels 0..3: the why excerpt's width
EXCERPT_WIDTHS = (0, 160, 320)  # relevant hits, requirements, debt, the identity
LESSON_WIDTHS = (160, 400)  # incidents: the lesson is always shown with its incident
NEXT_WIDTH = 100  # a compact checkpoint: its first next step
MARKER_IDS = 8
CONFLICT_NOTE_IDS = 3  # rivals a conflict note names before "and N more"

# Structural blocks (an origin anchor, labels...) are not the why: the excerpt stops there.
_STRUCTURE_BLOCK = re.compile(r"(?m)^(?:origin|labels|spec|status):[ \t]*$")
_MD_SPECIAL = re.compile(r"([\\`*\[\]<])")
_EDGE_UNDERSCORE = re.compile(r"_(?![^\W_])|(?<![^\W_])_")  # `_` that could open or close emphasis
_LESSON = re.compile(r"(?im)^[ \t>*_-]*(?:lessons?(?: learned)?|learned)[ \t*_]*:[ \t*_]*(\S.*(?:\n(?![ \t]*\n).+)*)")


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def md(text: str) -> str:
    """Entry text made inert inside one line of markdown (backslash escapes)."""
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _EDGE_UNDERSCORE.sub(r"\\_", text)
    return text.replace("⚠", "\\⚠")


def stale_note(mark: str) -> str:
    """A staleness mark (history.Staleness.mark) as one inert line: it names a directory
    of the repository, which a pusher can name with a line break and a heading of its own;
    our leading warning sign is kept."""
    sign = "⚠ "
    rest = mark[len(sign) :] if mark.startswith(sign) else mark
    return sign + md(one_line(rest))


def cut(text: str, width: int) -> str:
    """`text` within `width` characters, cut at a word boundary with an explicit ellipsis."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    if space > width // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


def excerpt(body: str, width: int) -> str:
    """The why as one line (header fields and structural blocks left out), escaped."""
    if width <= 0:
        return ""
    text = one_line(_STRUCTURE_BLOCK.split(blocks.strip_header(body), 1)[0])
    return md(cut(text, width))


def lesson(body: str, width: int) -> str:
    """An incident's lesson: the text after `Lesson:` (or `Lessons learned:`), else its why."""
    m = _LESSON.search(blocks.strip_header(body))
    if not m:
        return excerpt(body, width)
    return "Lesson: " + md(cut(one_line(m.group(1)), width))


# what `--provider`/`--model` hold when nobody said (the CLI's defaults): never shown
_UNSAID = ("", "none", "human")


def model_said(provider: str, model: str) -> str:
    """A writer's `provider/model`, leaving out what says nothing (`none`, `human`, empty):
    `openai/gpt-5`, `openai`, `gpt-5` or ``."""
    return "/".join(part for part in (provider, model) if part.strip() not in _UNSAID)


def agent_label(agent: str, provider: str, model: str) -> str:
    """An agent as a human reads it: `codex`, or `claude-code (anthropic/claude-opus-4)`."""
    said = model_said(provider, model)
    return f"{agent} ({said})" if said else agent


def who(e: Entry) -> str:
    """Author name (without the email), and the agent and its model when an agent wrote it."""
    name = md(e.author.split(" <", 1)[0])
    if e.agent == "human" and e.provider == "none":
        return name
    said = model_said(e.provider, e.model)
    return f"{name} ({md(e.agent)} via {md(said)})" if said else f"{name} ({md(e.agent)})"


def trust_tag(tier: Tier) -> str:
    """What follows an item's anchor to say where it came from (core/trust.py): nothing for a
    human's, else a word in backticks, which entry text cannot write (`md` escapes them)."""
    word = TAGS[tier]
    return f" `{word}`" if word else ""


# Said once, after the title, when an item carries a tag (views/context.py).
TRUST_LEGEND = (
    "_Untagged: a human's. `approved`: an agent's, approved by a human. `agent`: an agent's "
    "unreviewed claim, not the project's instruction. `imported`: from an import._\n"
)


def quote(text: str) -> str:
    return f"  > {text}\n" if text else ""


# ---- items --------------------------------------------------------------------------
def decision(e: Entry, level: int, pinned: bool, notes: tuple[str, ...], tag: str = "") -> str:
    pin = " (pinned)" if pinned else ""
    meta = f" — {who(e)}, {e.ts:%Y-%m-%d}" if level >= 2 else ""
    text = f"- **{md(e.summary)}** `[{e.short}]`{tag}{pin}{meta}\n" + quote(excerpt(e.body, WHY_WIDTHS[level]))
    for note in notes:  # warnings travel with their decision: never dropped apart from it
        text += f"  {note}\n"
    return text


def open_item(e: Entry, level: int, next_step: str, tag: str = "") -> str:
    nxt = f" — next: {md(cut(one_line(next_step), NEXT_WIDTH))}" if level >= 1 and next_step else ""
    return f"- `[{e.short}]`{tag} {md(e.summary)}{nxt}\n"


def checkpoint(cp: Checkpoint, name: str, level: int, tag: str = "") -> str:
    e = cp.entry
    if level == 0:
        steps = cp.sections.get("next") or cp.sections.get("goal") or [e.summary]
        return f"- **{md(name)}** `[{e.short}]`{tag} next: {md(cut(one_line(steps[0]), NEXT_WIDTH))}\n"
    text = f"- **{md(name)}** `[{e.short}]`{tag} — {who(e)}, {e.ts:%Y-%m-%d}: {md(e.summary)}\n"
    for section in blocks.CHECKPOINT_SECTIONS:
        for item in cp.sections.get(section, []):
            text += f"  - {section}: {md(one_line(item))}\n"
    return text


def replaced_mark(status: Status) -> str:
    """What follows an entry a correction replaced (core/status.py): ` _(withdrawn)_`."""
    return f" _({status})_" if status in REPLACED else ""


def hit(e: Entry, level: int, status: Status, tag: str = "") -> str:
    """A recall hit: kind and summary, then an excerpt of its body to act on."""
    mark = replaced_mark(status)
    return f"- `[{e.short}]`{tag} {e.kind}: {md(e.summary)}{mark}\n" + quote(excerpt(e.body, EXCERPT_WIDTHS[level]))


def incident(e: Entry, level: int, tag: str = "") -> str:
    return f"- `[{e.short}]`{tag} {md(e.summary)} ({e.ts:%Y-%m-%d})\n" + quote(lesson(e.body, LESSON_WIDTHS[level]))


def plain(e: Entry, level: int, tag: str = "") -> str:
    """A requirement or a debt: the summary, then its why."""
    return f"- `[{e.short}]`{tag} {md(e.summary)}\n" + quote(excerpt(e.body, EXCERPT_WIDTHS[level]))


def recent(e: Entry, mark: str, tag: str = "") -> str:
    return f"- `[{e.short}]`{tag} {e.kind}: {md(e.summary)}{mark}\n"


def identity(e: Entry, level: int, tag: str = "") -> str:
    why = excerpt(e.body, EXCERPT_WIDTHS[level])
    return f"**What:** {md(e.summary)} `[{e.short}]`{tag}\n" + (f"> {why}\n" if why else "")


def conflict_note(first: list[str], count: int, subject: str) -> str:
    """The warning under a decision in conflict: its first rivals, then how many more, like
    the omission marker, so a group of any size costs each of its decisions one short line."""
    ids = ", ".join(f"[{i[:8]}]" for i in first)
    more = f" and {count - len(first)} more" if count > len(first) else ""
    return f"⚠ conflicts with {ids}{more} on '{md(subject)}': both are in force; record a correction"


# ---- omissions ----------------------------------------------------------------------
def omission_marker(noun: str, ids: list[str]) -> str:
    return _marker(noun, len(ids), ids[:MARKER_IDS])


def worst_marker(noun: str, count: int) -> str:
    """The marker `count` omissions produce, with placeholder ids (ids have a fixed width);
    asked for at every step of the packing, so without a list of `count` placeholders."""
    return _marker(noun, count, ["0" * 8] * min(count, MARKER_IDS))


def _marker(noun: str, count: int, first: list[str]) -> str:
    shown = ", ".join(abbrev(i) for i in first)
    more = f" +{count - MARKER_IDS} more" if count > MARKER_IDS else ""
    return f"_[… {count} {noun} omitted for the budget: {shown}{more}; `git lifeline show <id>`]_\n"
