"""Commands across lines and with lifeline-context: lines, where, graph, promote, import,
export."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from .common import (
    chosen_line,
    echo_json,
    line_option,
    open_ledger,
    open_workspace,
    page,
    quiet_option,
    short,
    split_ids,
    write_output,
)
from .terminal import info, say

if TYPE_CHECKING:
    from ..app.interop import ProposalsImport


class _Progress:
    """A progress bar per stage on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.bar: Any = None  # a click progress bar while a stage runs
        self.stage: Optional[str] = None
        self.done = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.bar = click.progressbar(length=total, label=f"{stage:<8}", file=sys.stderr)
            self.bar.__enter__()
            self.stage, self.done = stage, 0
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def lines(ctx: click.Context, as_json: bool) -> None:
    """List the repository's lines with entry counts and heads."""
    rows = open_workspace(ctx).lines()
    if as_json:
        echo_json([r.to_json() for r in rows])
        return
    page(ctx, colour=False)
    for r in rows:
        say(f"{r.line:<20} {r.entries:>7} entries  head {short(r.head)}")


@click.command("import")
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(),
    help="A lifeline-context LIFELINE.md (current or legacy format) or .lifeline/<line>.db; "
    "or a directory of ADRs (adr-tools, log4brains, MADR).",
)
@click.option("--strict", is_flag=True, help="Abort, writing nothing, if any recorded id does not match.")
@click.option("--assume-utc", is_flag=True, help="Read timestamps without a UTC offset as UTC.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@quiet_option
@line_option
@click.pass_context
def import_cmd(ctx: click.Context, source: str, strict: bool, assume_utc: bool, as_json: bool) -> None:
    """Import a lifeline-context ledger with every id, parent and timestamp intact.

    Ids are recomputed and compared with the recorded ones: a mismatch is listed and
    skipped (exit 1), or with --strict aborts before anything is written. Entries the
    seed itself cannot round-trip are refused by name and nothing is written (exit 2).
    Importing twice adds nothing.
    """
    from ..app.interop import import_from

    led = open_ledger(ctx)
    if Path(source).is_dir():
        from .formats import import_adr_dir

        return import_adr_dir(led, source, as_json)
    bars = _Progress() if sys.stderr.isatty() and not as_json else None
    try:
        out = import_from(led, Path(source), strict=strict, assume_utc=assume_utc, progress=bars)
    finally:
        if bars is not None:
            bars.close()
    if as_json:
        echo_json(out.to_json())
    else:
        commit = f" (commit {short(out.commit)})" if out.commit else ""
        info(
            f"read {out.read} entries ({out.format}) into line {out.line}: "
            f"{out.added} added, {out.existing} already present{commit}"
        )
        if out.external:
            names = sorted({line for _, _, line in out.external})
            info(f"{len(out.external)} parent(s) anchored in other lines: {', '.join(names)}")
        if out.reordered:
            info(
                f"note: {out.reordered} entries were recorded out of time order in the source; "
                "git-lifeline lists every line by (ts, id)"
            )
        if out.unrecorded:
            info(f"note: {out.unrecorded} entries had no recorded id to compare")
        for m in out.mismatched:
            say(
                f"skipped {m.where} '{m.summary[:50]}': recorded id {short(m.recorded)} but the "
                f"content hashes to {short(m.computed)}",
                err=True,
            )
        for e, why in out.skipped:
            say(f"skipped {short(e.id)} '{e.summary[:50]}': {why}", err=True)
        _say_proposals(out.proposals)
    if out.mismatched or (out.proposals is not None and out.proposals.left_out):
        sys.exit(1)


def _say_proposals(found: Optional[ProposalsImport]) -> None:
    """What became of a lifeline-context ledger's pending proposals (its review queue)."""
    if found is None:
        return
    for db, waiting in found.elsewhere:
        info(
            f"note: {waiting} pending proposal(s) wait in {db}, which a LIFELINE.md does not hold: "
            f"git lifeline import --from {db} files them in the review trail"
        )
    if found.filed:
        info(
            f"{len(found.filed)} pending proposal(s) filed in the review trail "
            "(git lifeline review; approve or reject them there)"
        )
    if found.already:
        info(f"{found.already} pending proposal(s) already in the line or its review trail")
    if found.left_out:
        say(f"{len(found.left_out)} pending proposal(s) left out (nothing of them was written):", err=True)
        for where, why in found.left_out:
            say(f"  {where}: {why}", err=True)


@click.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["lifeline-md", "html", "adr"]),
    default="lifeline-md",
    show_default=True,
    help="lifeline-md: lifeline-context's LIFELINE.md, read back by its `migrate`; "
    "html: one self-contained page; adr: the decisions in force as MADR files.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(allow_dash=True),
    default="-",
    help="Write to FILE (a DIR for adr) instead of standard output.",
)
@line_option
@click.pass_context
def export_cmd(ctx: click.Context, fmt: str, output: str) -> None:
    """Write the line in lifeline-context's format, with identical ids (no lock-in); or as a page or ADRs."""
    if fmt != "lifeline-md" or (output != "-" and Path(output).is_dir()):
        from .formats import export_other

        return export_other(open_ledger(ctx), fmt, output)
    from ..app.interop import export_seed

    write_output(output, export_seed(open_ledger(ctx, existing=True)))


@click.command()
@click.option("--from", "src", required=True, metavar="LINE", help="The line to copy from.")
@click.option("--to", "dst", required=True, metavar="LINE", help="The line to copy into.")
@click.option(
    "--id",
    "ids",
    multiple=True,
    required=True,
    metavar="ID[,ID]",
    help="Entries to copy: full ids or unique prefixes in the source line; repeatable.",
)
@click.option(
    "--parents",
    multiple=True,
    metavar="REF[,REF]",
    help="Parents of the copies: ids in the destination or LINE:PREFIX in another line.",
)
@click.option("--json", "as_json", is_flag=True)
@quiet_option
@click.pass_context
def promote(
    ctx: click.Context, src: str, dst: str, ids: tuple[str, ...], parents: tuple[str, ...], as_json: bool
) -> None:
    """Copy entries from one line into another, each with an origin block (line + full id)."""
    from ..app.interop import promote as promote_entries

    out = promote_entries(open_ledger(ctx, dst), src, split_ids(ids), split_ids(parents))
    if as_json:
        echo_json(
            {
                "promoted": [e.id for e in out.promoted],
                "commit": out.commit,
                "already": [{"source": s, "copy": c} for s, c in out.already],
            }
        )
        return
    for e in out.promoted:
        info(f"promoted {e.short} {e.kind}: {e.summary} -> {dst}")
    for source, copy in out.already:
        info(f"already in {dst}: {short(copy)}" + (f" (copy of {src}:{short(source)})" if source else ""))


@click.command()
@click.argument("prefix")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def where(ctx: click.Context, prefix: str, as_json: bool) -> None:
    """Which lines hold an id (full id or prefix of >= 6 hex). Exit 1 when none does."""
    hits = open_workspace(ctx).where(prefix)
    if as_json:
        echo_json(hits)
    else:
        for h in hits:
            say(f"{h['line']:<20} {short(h['id'])}  {h['kind']:<11} {h['summary']}")
        if not hits:
            say(f"git-lifeline: no line holds an entry {prefix!r}", err=True)
    if not hits:
        sys.exit(1)


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot"]),
    default="mermaid",
    show_default=True,
    help="mermaid: a ```mermaid block that git hosts draw in markdown; dot: Graphviz.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Write to FILE instead of standard output.",
)
@line_option
@click.pass_context
def graph(ctx: click.Context, fmt: str, output: str) -> None:
    """Supersession, thread, relation and cross-line links as a picture (all lines, or --line)."""
    if chosen_line(ctx):
        open_ledger(ctx, existing=True)  # a mistyped --line is an error, not an empty graph
    write_output(output, open_workspace(ctx).graph(chosen_line(ctx), fmt))


@click.command()
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False), help="A LIFELINE.md projection.")
@click.option("--strict", is_flag=True, help="Abort, writing nothing, if any recorded id does not match.")
@quiet_option
@line_option
@click.pass_context
def migrate(ctx: click.Context, source: str, strict: bool) -> None:
    """Rebuild the line from a LIFELINE.md projection (ids are checked)."""
    from ..app.interop import migrate as migrate_file

    report = migrate_file(open_ledger(ctx), Path(source), strict=strict)
    info(f"read {report.read} entries: {report.added} added, {report.existing} already present")
    for m in report.mismatched:
        click.echo(f"skipped {short(m)}: content does not match its recorded id", err=True)
