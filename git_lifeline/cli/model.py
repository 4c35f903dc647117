"""CLI: `git lifeline model fetch|status|remove`, the semantic model on this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click


@click.group()
def model() -> None:
    """The sentence model semantic recall uses (the `[semantic]` extra).

    Recall never downloads: `model fetch` is the one command that does, each file checked
    against a pinned sha256. Then `git config lifeline.semantic.model DIR` names it.
    """


@model.command()
@click.option(
    "--dir",
    "dest",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to put it (default: the user's cache directory).",
)
@click.option(
    "--configure/--no-configure",
    default=True,
    show_default=True,
    help="Set lifeline.semantic.model in this repository's config afterwards.",
)
def fetch(dest: Optional[str], configure: bool) -> None:
    """Download all-MiniLM-L6-v2 (90 MB) from the model hub, checked against pinned sha256."""
    from ..app import models

    shown: dict[str, int] = {}

    def progress(name: str, done: int, total: int) -> None:
        tenth = (10 * done // total) if total else 0
        if shown.get(name) != tenth:  # a line per tenth: readable in a log as on a terminal
            shown[name] = tenth
            size = f"{done / 1e6:.1f}/{total / 1e6:.1f} MB" if total else f"{done / 1e6:.1f} MB"
            click.echo(f"  {name}: {size}", err=True)

    where = models.fetch(Path(dest) if dest else None, progress=progress)
    click.echo(f"model ready in {where}")
    if configure:
        configured = models.configure(where)
        click.echo(configured)


@model.command()
def status() -> None:
    """Where the model is and whether every file matches its pinned sha256."""
    from ..app import models

    click.echo(models.describe())
