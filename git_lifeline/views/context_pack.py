"""Packing the context into a hard budget: a level of detail per item, chosen by priority.

Every item can be rendered at levels 0..top (0 is the compact line that names it).
A plan is an ordered list of steps "item X at level L" (grouped); the packer walks it
once and applies each step that fits, so the budget goes to the most useful detail first and
nothing is cut in the middle of a line. A section's cost always includes the marker
for its items not yet shown, so the running total is exact at every step and never
passes the room: the budget is a hard limit by construction, not by a final check.

Two rules keep detail from crowding out items:
* a step above level 0 is taken only when every essential item (decisions, open
  items, checkpoints, relevant hits) is named and the item's own section is whole;
* optional sections (requirements, incidents, debt, recent) open only with their
  first item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Protocol

from .context_text import omission_marker, worst_marker

Measure = Callable[[str], int]
MAX_MISSES = 4


class Items(Protocol):
    """A section's items: a list, or the decisions made when first asked for
    (context_sections._LazyItems)."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Item]: ...


Render = Callable[[int], str]
Made = tuple[Render, int, Optional[Render]]  # (render, top, estimate) of an item made late


class Item:
    """One entry's lines; `render(level)` gives complete, newline-terminated lines."""

    __slots__ = ("anchor", "render", "top", "estimate", "level", "_text", "_make")

    def __init__(self, anchor: str, render: Render, top: int, estimate: Optional[Render] = None):
        self.anchor = anchor
        self.render = render
        self.top = top
        # Text of the same shape as the item but independent of what changes often
        # (a checkpoint's steps, recent entries): planning the stable part with it keeps
        # that part byte-identical while only the volatile part's text changes.
        self.estimate = estimate
        self.level = -1
        self._text: dict[int, str] = {}
        self._make: Optional[Callable[[], Made]] = None

    @classmethod
    def deferred(cls, anchor: str, make: Callable[[], Made]) -> Item:
        """An item whose render, top and estimate are made when the packer first considers
        it: what they need (its entry, its thread's checkpoint) is read for the few items a
        budget can name, not for every one of thousands."""
        it = cls(anchor, _unready, 0)
        it._make = make
        return it

    def ready(self) -> Item:
        if self._make is not None:
            self.render, self.top, self.estimate = self._make()
            self._make = None
        return self

    def text(self, level: int) -> str:
        if level not in self._text:
            self._text[level] = self.ready().render(level)
        return self._text[level]


def _unready(level: int) -> str:
    raise AssertionError("a deferred item is rendered only once ready")


class Section:
    def __init__(
        self,
        key: str,
        title: str,
        noun: str,
        items: Items,
        stable: bool = False,
        essential: bool = False,
        header: bool = True,
    ) -> None:
        self.key, self.title, self.noun = key, title, noun
        self.items = items  # a list, or the lazily made decisions (len and iteration)
        self.stable, self.essential, self.header = stable, essential, header
        self.open = False
        self.cost = 0
        self.missing = len(items)

    def reset(self) -> None:
        for it in self.items:
            if it.level >= 0:
                it.level = -1
        self.open, self.cost, self.missing = False, 0, len(self.items)

    @property
    def whole(self) -> bool:
        return self.missing == 0

    def omitted(self) -> list[str]:
        return [it.anchor for it in self.items if it.level < 0]

    def render(self) -> str:
        if not self.open:
            return ""
        omitted = self.omitted()
        body, marked = "", False
        for it in self.items:
            if it.level >= 0:
                body += it.text(it.level)
            elif not marked:  # one marker, where the first omitted item would stand
                body += omission_marker(self.noun, omitted)
                marked = True
        return f"## {self.title}\n{body}\n" if self.header else body


@dataclass
class Group:
    """Steps "each of these items at `level`", in order; items are produced when walked."""

    section: Section
    items: Callable[[], Iterable[Item]]
    level: int
    cap: Optional[int] = None  # the section may not grow past this cost in this group
    # The order in which the stable part is planned, when the display order follows what
    # changes often (checkpoints are shown newest first): which of them fit a share must
    # not depend on which thread moved last.
    plan_items: Optional[Callable[[], Iterable[Item]]] = None


class Packer:
    def __init__(self, measure: Measure, room: int, exact: bool = True):
        self.measure = measure
        self.room = room
        self.used = 0
        self.exact = exact  # False: items with an estimate are costed by it

    def item_cost(self, it: Item, level: int) -> int:
        if level < 0:
            return 0
        estimate = it.ready().estimate
        if not self.exact and estimate is not None:
            return self.measure(estimate(level))
        return self.measure(it.text(level))

    def marker_cost(self, sec: Section, missing: int) -> int:
        return self.measure(worst_marker(sec.noun, missing)) if missing else 0

    def frame_cost(self, sec: Section) -> int:
        return self.measure(f"## {sec.title}\n") + self.measure("\n") if sec.header else 0

    def apply(self, sec: Section, it: Item, level: int, cap: Optional[int] = None) -> bool:
        level = min(level, it.ready().top)
        if it.level >= level:
            return True
        delta = self.item_cost(it, level) - self.item_cost(it, it.level)
        if it.level < 0:
            delta += self.marker_cost(sec, sec.missing - 1) - self.marker_cost(sec, sec.missing)
        if not sec.open:  # a section opens with its first item, never empty
            delta += self.frame_cost(sec) + self.marker_cost(sec, sec.missing)
        if self.used + delta > self.room:
            return False
        if cap is not None and sec.cost + delta > cap:
            return False
        self.used += delta
        sec.cost += delta
        sec.open = True
        if it.level < 0:
            sec.missing -= 1
        it.level = level
        return True


def run(
    packer: Packer, groups: list[Group], sections: list[Section], skip: Callable[[Section], bool] = lambda s: False
) -> None:
    """Walk the plan once. Detail waits until every essential item is named; a group stops
    after MAX_MISSES items in a row did not fit (the room is spent: the cost of walking the
    rest of a 30,000-decision list would follow the ledger, not the budget)."""
    essential = [s for s in sections if s.essential]
    for group in groups:
        sec = group.section
        if skip(sec):
            continue
        if group.level > 0 and not (sec.whole and all(s.whole for s in essential)):
            continue
        misses = 0
        walk = group.plan_items if group.plan_items is not None and not packer.exact else group.items
        for it in walk():
            if group.level > 0 and it.level < 0:
                continue
            if packer.apply(sec, it, group.level, group.cap):
                misses = 0
            else:
                misses += 1
                if misses >= MAX_MISSES:
                    break
