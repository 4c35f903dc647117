"""CLI: `git lifeline view`, the line as one HTML page opened in the browser.

Registered by cli/__init__.py. Faces hold no logic: it calls app/, writes, prints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import line_option, open_reading, say_behind


def _has_display() -> bool:
    """Whether a graphical browser can be expected (a console browser would take the terminal)."""
    if sys.platform in ("darwin", "win32") or os.environ.get("BROWSER"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@click.command()
@click.option("--no-open", is_flag=True, help="Only write the page and print its path.")
@line_option
@click.pass_context
def view(ctx: click.Context, no_open: bool) -> None:
    """Write the line as one HTML page to a temporary file and open it in the browser.

    The page works offline: decisions in force with their why, open items, where each
    thread stands, the supersession and thread graph, and a searchable timeline. Without a
    browser (no display), the path is printed.
    """
    import tempfile
    import webbrowser

    from ..app.html_export import export_html

    led, caught = open_reading(ctx)
    say_behind(caught)
    text = export_html(led)
    fd, name = tempfile.mkstemp(prefix=f"lifeline-{led.line}-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    path = Path(name)
    opened = False
    if not no_open and _has_display():
        try:
            opened = webbrowser.open(path.as_uri())
        except webbrowser.Error:
            opened = False
    click.echo(f"{'opened' if opened else 'wrote'} {path}")
