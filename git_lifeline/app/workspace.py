"""A repository's ledger as a whole: where the faces start.

A Workspace opens the repository once, hands out one Ledger per line, answers what
spans the lines (list, where, graph, verify) and holds the warning sink: what the user
should hear after an operation succeeded (a cache rebuilt because a line was rewound,
a projection file that could not be written). Every Ledger it hands out, and their
caches, report into that one list; every face prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from ..git.names import DEFAULT_LINE, chosen_line, validate_name
from ..git.repo import GitRepo, open_repo
from .empty_ledger import TWO_BOOTSTRAPS
from .ledger import Ledger
from .projection_file import projection_path

if TYPE_CHECKING:
    from ..core.entry import Entry
    from ..git.checks import Problem, Report
    from ..git.lines import LineRow

# Handed to the faces, which may import only app/ (tests/test_layers.py): cli/common.py checks --line
# with validate_name; cli/verify.py prints a VerifyRun's Problems (for annotations only).
__all__ = ["Problem", "validate_name"]

# git/lines.py, git/verify.py and git/trails.py are imported by the methods that need
# them, so `context` and `recall` start without them.


@dataclass
class LineCheck:
    """A line's verification: the report, signatures checked (None: not asked), and
    the conflicting decisions in force (asked with lint)."""

    name: str
    report: Report
    signatures: Optional[int] = None
    conflicts: list[tuple[str, Sequence[str]]] = field(default_factory=list)  # (label, decision ids)
    headers: list[tuple[str, str]] = field(
        default_factory=list
    )  # (entry id, what is wrong with its body header), with lint


@dataclass
class TrailCheck:
    name: str
    report: Report


@dataclass
class VerifyRun:
    lines: list[LineCheck]
    trails: list[TrailCheck]

    @property
    def ok(self) -> bool:
        return all(c.report.ok for c in self.lines) and all(c.report.ok for c in self.trails)


class Workspace:
    def __init__(self, gr: GitRepo, confined: bool = False):
        self.gr = gr
        self.confined = confined  # a long-running face: never write outside the git dir
        self.warnings: list[str] = []
        self._ledgers: dict[str, Ledger] = {}

    @classmethod
    def open(cls, start: Optional[str] = None, confined: bool = False) -> "Workspace":
        return cls(open_repo(start), confined)

    @property
    def default_line(self) -> str:
        return self.gr.config_get("lifeline.defaultLine") or DEFAULT_LINE

    @property
    def location(self) -> Path:
        """The git dir that holds the ledger (shared by every linked worktree)."""
        return self.gr.common_dir

    @property
    def workdir(self) -> Optional[Path]:
        return self.gr.workdir

    def ledger(self, line: Optional[str] = None) -> Ledger:
        """The Ledger of `line` (default: lifeline.defaultLine, else main), one per line.
        A name that differs only in case from a line name in use is refused (exit 2), for
        reading as for writing: where the file system ignores case, `Main` would read (and
        its projection and cache would be written from) the ref of `main`."""
        name = chosen_line(line, self.gr.config_get("lifeline.defaultLine"))
        if name not in self._ledgers:
            led = Ledger(self.gr, name, self.warnings, self.confined)
            led.store.refuse_clash()
            self._ledgers[name] = led
        return self._ledgers[name]

    def take_warnings(self) -> list[str]:
        """The warnings so far, emptying the sink (a face that serves many calls)."""
        taken = list(self.warnings)
        self.warnings.clear()
        return taken

    # ---- across lines ------------------------------------------------------------
    def line_names(self) -> list[str]:
        from ..git.namespaces import LEDGER

        return LEDGER.names(self.gr)

    def remotes(self) -> list[str]:
        """The names of the repository's git remotes."""
        from ..git.sync import remotes

        return remotes(self.gr)

    def lines(self) -> list[LineRow]:
        """One row per real line: {line, head, entries, ref, projection}. A stray or
        foreign ref under refs/lifeline/ is not a line (git.lines.LineIndex)."""
        from ..git.lines import describe_lines

        rows = describe_lines(self.gr)
        for row in rows:
            path = None if self.confined else projection_path(self.gr, row.line)
            row.projection = str(path) if path else None
        return rows

    def where(self, prefix: str) -> list[dict[str, str]]:
        """Every line holding an id that starts with `prefix`: [{line, id, kind, summary}]."""
        from ..git.lines import where

        return where(self.gr, prefix)

    def graph(self, only: Optional[str] = None, fmt: str = "mermaid") -> str:
        from ..errors import InputError
        from ..git.lines import build_graph, render_dot, render_mermaid

        if fmt not in ("mermaid", "dot"):
            raise InputError(f"unknown graph format {fmt!r}: use mermaid or dot")
        g = build_graph(self.gr, only)
        return render_mermaid(g) if fmt == "mermaid" else render_dot(g)

    def verify(self, only: Optional[str] = None, signatures: bool = False, lint: bool = False) -> VerifyRun:
        """Verify every line (or `only`) and its review trail."""
        from ..git.namespaces import REVIEW, names_in_use
        from ..git.verify import signature_problems, verify_log, verify_trail

        names = [only] if only else (self.line_names() or [DEFAULT_LINE])
        in_use = names_in_use(self.gr)  # a name equal to another by case is a problem of both
        checks = []
        for name in names:
            led = self.ledger(name)
            check = LineCheck(name, verify_log(led.store, in_use))
            if signatures:
                check.signatures, problems = signature_problems(led.store, check.report.head)
                check.report.problems.extend(problems)
            if lint and check.report.head:
                st = led.state()
                check.conflicts = list(st.conflicts)
                if len(st.identities) > 1:
                    check.conflicts.append((TWO_BOOTSTRAPS, tuple(st.identities)))
                check.headers = header_findings(led.entries())
            checks.append(check)
        trails = [
            TrailCheck(name, verify_trail(self.gr, name, in_use=in_use))
            for name in REVIEW.names(self.gr)
            if name in names or not only
        ]
        return VerifyRun(checks, trails)


def header_findings(entries: Iterable[Entry]) -> list[tuple[str, str]]:
    """(entry id, sentence) for each body line that looks like a header but is not read as
    one, and each header value the truth cannot read (core/blocks.py)."""
    from ..core import blocks

    out = []
    for e in entries:
        problems = [] if e.kind == "relation" else blocks.header_value_problems(blocks.header_fields(e.body))
        for why in problems + blocks.header_warnings(e.body, e.kind):
            out.append((e.id, why))
    return out
