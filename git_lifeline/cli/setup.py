"""Setting a repository up: `init` (MCP configuration, hooks) and `mcp`, which starts the
MCP face."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from .. import __version__
from .common import chosen_line, line_option, open_ledger, open_workspace
from .hooks import echo_changes


@click.command()
@click.option("--no-mcp", is_flag=True, help="Do not add the MCP server to .mcp.json.")
@click.option("--hooks/--no-hooks", "install_hooks", default=None,
              help="Install the git hooks (asked when on a terminal).")
@line_option
@click.pass_context
def init(ctx: click.Context, no_mcp: bool, install_hooks) -> None:
    """Check the repository, register the MCP server in .mcp.json, and show how to start."""
    from ..app import setup
    ws = open_workspace(ctx)
    led = open_ledger(ctx)
    head = led.head()
    state = "exists" if head else "is empty (its ref is created by the first entry)"
    click.echo(f"git-lifeline {__version__}: line '{led.line}' {state} in {ws.location}")
    click.echo(f"projection: {led.projection.settle()}")
    if not no_mcp:
        _echo_mcp_setup(setup.setup_mcp(ws))
    if not head:
        click.echo("start with:\n  git lifeline log --kind bootstrap --summary \"What this project is\" "
                   "--body \"Why it exists\"")
    present = setup.installed_hooks(ws)
    if install_hooks is None and present:
        click.echo(f"hooks: {', '.join(present)} installed ({setup.hooks_dir(ws)})")
        return
    if install_hooks is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            install_hooks = click.confirm("install the git hooks (pre-push verify, post-commit reminder)?",
                                          default=True)
        else:
            click.echo("hooks: not installed; install them with: git lifeline hooks install")
            return
    if install_hooks:
        echo_changes(setup.install_hooks(ws, None), setup.hooks_dir(ws))
    else:
        click.echo("hooks: not installed; install them later with: git lifeline hooks install")


def _echo_mcp_setup(report) -> None:
    """What `init` says about MCP: .mcp.json for Claude Code, snippets for the other clients."""
    if report.status in ("created", "added"):
        click.echo(f"mcp: {report.status} {report.detail} (server 'lifeline': git lifeline mcp) — "
                   "Claude Code picks it up here")
    else:
        click.echo(f"mcp: {report.detail}")
    if not report.snippets:
        return
    click.echo("other MCP clients: add under \"mcpServers\" (details in docs/INTEGRATION.md):")
    for client, where, entry in report.snippets:
        click.echo(f"  {client}, {where}:")
        click.echo(f"    \"lifeline\": {json.dumps(entry, ensure_ascii=False)}")


@click.command()
@line_option
@click.option("--repo", type=click.Path(file_okay=False), default=None,
              help="The repository (default: the one containing the working directory).")
@click.pass_context
def mcp(ctx, repo):
    """Run the MCP server on stdio, for AI agents (needs the [mcp] extra).

    --line names the line served by default; every tool also takes a `line` argument."""
    from ..app.workspace import Workspace
    line = chosen_line(ctx)
    Workspace.open(repo).ledger(line)  # a bad repository or line fails here, with the CLI's message
    argv = [sys.executable, "-m", "git_lifeline.mcp"]
    argv += ["--repo", repo] if repo else []
    argv += ["--line", line] if line else []
    # The MCP face is its own program: this process becomes it (same stdio, cwd, environment),
    # and finds this very package even when it was put on sys.path by hand.
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), package_root) if p)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
