"""CLI: the HTML and ADR forms of `export` and `import` (cli/lines.py hands them over here).

Takes the Ledger from the command, so it imports no other CLI module. Faces hold no logic:
each function calls app/ and prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..app.visible import visible
from .common import short, write_output

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.ledger import Ledger


def export_other(led: Ledger, fmt: str, output: str) -> None:
    """`export --format html|adr [-o FILE|DIR]`."""
    from ..errors import InputError

    if fmt == "adr":
        if output == "-":
            raise InputError("--format adr writes one file per decision: give a directory with -o DIR")
        from ..app.adr import export_madr

        paths = export_madr(led, Path(output))
        click.echo(
            f"wrote {len(paths)} MADR file{'' if len(paths) == 1 else 's'} (the decisions in force) to {output}",
            err=True,
        )
        return
    if output != "-" and Path(output).is_dir():
        raise InputError(f"{output}: is a directory; give a file name")
    from ..app.html_export import export_html

    write_output(output, export_html(led))


def import_adr_dir(led: Ledger, source: str, as_json: bool) -> None:
    """`import --from DIR`: a directory of ADRs (adr-tools, log4brains, MADR)."""
    from ..app.adr import import_adrs

    out = import_adrs(led, Path(source))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "format": "adr",
                    "line": out.line,
                    "read": out.read,
                    "added": len(out.added),
                    "existing": out.existing,
                    "commit": out.commit,
                    "warnings": out.warnings,
                    "entries": [{"id": e.id, "kind": e.kind, "summary": e.summary} for e in out.added],
                },
                ensure_ascii=False,
                indent=2,
                sort_keys=True,
            )
        )
        return
    commit = f" (commit {short(out.commit)})" if out.commit else ""
    click.echo(f"read {out.read} ADRs into line {out.line}: {len(out.added)} entries added{commit}")
    for e in out.added:
        click.echo(f"  {e.short}  {e.kind:<11} {visible(e.summary)}")
    for w in out.warnings:  # they name files of the directory read
        click.echo(f"git-lifeline: warning: {visible(str(w))}", err=True)
