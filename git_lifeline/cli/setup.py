"""Setting a repository up: `init` (the remote's ledger, MCP configuration, the agents' files,
hooks), `mcp`, which starts the MCP face, and `agent-hook`, what an agent's session hooks run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from .. import __version__
from ..errors import install_hint
from .common import chosen_line, line_option, open_ledger, open_workspace, plural, short
from .hooks import echo_changes
from .terminal import say, say_failure

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.agent_files import FileChange
    from ..app.integration import ServerEntry
    from ..app.setup import McpSetup, RemoteReport
    from ..app.workspace import Workspace

AGENT_CLIENTS_HELP = (
    "claude (CLAUDE.md and Claude Code's hooks), codex (AGENTS.md and Codex's hook and MCP entry), "
    "cursor, gemini (their rules, hook and MCP entry), copilot, all"
)


@click.command()
@click.option("--no-mcp", is_flag=True, help="Do not add the MCP server to .mcp.json.")
@click.option("--no-agents", is_flag=True, help="Do not write the agents' rules files nor Claude Code's hooks.")
@click.option(
    "--agents",
    "agent_clients",
    multiple=True,
    metavar="LIST",
    help=f"The agents to set up, comma-separated (default: claude,codex): {AGENT_CLIENTS_HELP}.",
)
@click.option("--no-pull", is_flag=True, help="Do not pull the remote's ledger (the fetch refspecs are still set).")
@click.option(
    "--hooks/--no-hooks", "install_hooks", default=None, help="Install the git hooks (asked when on a terminal)."
)
@click.option("--verbose", is_flag=True, help="Also print the other MCP clients' entries on a re-run.")
@line_option
@click.pass_context
def init(
    ctx: click.Context,
    no_mcp: bool,
    no_agents: bool,
    agent_clients: tuple[str, ...],
    no_pull: bool,
    install_hooks: Optional[bool],
    verbose: bool,
) -> None:
    """Set the repository up: bring the remote's ledger in, register the MCP server, tell the
    coding agents when to read and write the ledger, offer the hooks."""
    from ..app import setup
    from ..app.agent_files import DEFAULT_CLIENTS, parse_clients
    from ..errors import InputError

    if no_agents and agent_clients:
        raise InputError("give --agents or --no-agents, not both")
    clients = [] if no_agents else (parse_clients(agent_clients) if agent_clients else list(DEFAULT_CLIENTS))
    ws = open_workspace(ctx)
    remote = setup.connect_remote(ws, pull=not no_pull)
    led = open_ledger(ctx)
    head = led.head()
    state = f"has {plural(led.state().count)}" if head else "is empty (its ref is created by the first entry)"
    click.echo(f"git-lifeline {__version__}: line '{led.line}' {state} in {ws.location}")
    _echo_remote(remote)
    click.echo(f"projection: {led.projection.settle()}")
    mcp_setup = None
    if not no_mcp:
        mcp_setup = setup.setup_mcp(ws)
        _echo_mcp_setup(mcp_setup)
    if clients and ws.workdir is not None:
        launcher = setup.agent_launcher(ws, mcp_setup)
        for change in setup.setup_agents(ws, clients, launcher, mcp=not no_mcp):
            _echo_agent_file(change, ws.workdir)
    left = setup.snippets_left(mcp_setup, clients) if mcp_setup is not None else []
    if mcp_setup is not None and left:
        if verbose or mcp_setup.status in ("created", "added", "updated"):
            _echo_snippets(left)
        else:  # a re-run: the block was printed when .mcp.json got its entry
            click.echo("other MCP clients: git lifeline init --verbose prints their entries (docs/INTEGRATION.md)")
    if not head:
        hint = _empty_hint(remote)
        click.echo(
            hint
            or 'start with:\n  git lifeline log --kind bootstrap --summary "What this project is" '
            '--body "Why it exists"'
        )
    _offer_hooks(ws, install_hooks)


def _empty_hint(remote: RemoteReport) -> str:
    if remote.remote is not None and remote.error:
        return f"the ledger may be on {remote.remote}: once it can be reached, run git lifeline pull {remote.remote}"
    return ""


def _echo_remote(report: RemoteReport) -> None:
    if report.remote is None:
        return
    if report.added:
        click.echo(f"remote: {report.remote}: a plain `git fetch` now brings the ledger and its review trails")
    if report.error:
        say_failure(report.error, f"remote: could not pull from {report.remote}: ")  # a remote's names, shown
        return
    for p in report.pulls:
        if p.action == "created":
            click.echo(
                f"remote: line {p.line}: created from {report.remote} ({plural(len(p.incoming))}, "
                f"head {short(p.after)})"
            )
        elif p.action in ("fast-forward", "merged"):
            click.echo(f"remote: line {p.line}: {p.action}, {plural(len(p.incoming))} from {report.remote}")
        elif p.action in ("ahead", "local-only"):
            click.echo(f"remote: line {p.line}: not all on {report.remote} yet (git lifeline push {report.remote})")


def _offer_hooks(ws: Workspace, install_hooks: Optional[bool]) -> None:
    from ..app import setup

    present = setup.installed_hooks(ws)
    if install_hooks is None and present:
        click.echo(f"hooks: {', '.join(present)} installed ({setup.hooks_dir(ws)})")
        return
    if install_hooks is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            install_hooks = click.confirm(
                "install the git hooks (pre-push verify, post-commit reminder)?", default=True
            )
        else:
            click.echo("hooks: not installed; install them with: git lifeline hooks install")
            return
    if install_hooks:
        echo_changes(setup.install_hooks(ws, None), setup.hooks_dir(ws))
    else:
        click.echo("hooks: not installed; install them later with: git lifeline hooks install")


def _command_of(entry: Optional[ServerEntry]) -> str:
    from ..app.integration import entry_argv

    return " ".join(entry_argv(entry)) if entry else ""


def _echo_mcp_setup(report: McpSetup) -> None:
    """What `init` says about MCP: .mcp.json for Claude Code, and whether its command starts."""
    if report.status in ("created", "added", "updated"):
        click.echo(
            f"mcp: {report.status} {report.detail} (server 'lifeline': {_command_of(report.entry)}) — "
            "Claude Code picks it up here"
        )
    else:
        click.echo(f"mcp: {report.detail}")
    check = report.check
    if check is not None and check.ok:
        click.echo("mcp: checked: the server starts from this repository")
    elif check is not None:
        say(f"mcp: the server does not start yet: {check.output or 'no output'}", err=True)  # its words, shown
        click.echo(f"mcp: fix it, then check with: git lifeline doctor (the MCP SDK: {install_hint('mcp')})", err=True)
    launcher = report.launcher
    if report.status in ("created", "added", "updated") and launcher is not None and not launcher.portable:
        click.echo(
            "mcp: note: git-lifeline is not on PATH: .mcp.json "
            f"{report.local or 'names this machine’s interpreter: keep it out of commits'}; to share it with the "
            f"team, put git-lifeline on PATH ({install_hint('mcp')}) and run init again"
        )


def _echo_snippets(snippets: list[tuple[str, str, ServerEntry]]) -> None:
    click.echo('other MCP clients: add under "mcpServers" (details in docs/INTEGRATION.md):')
    for client, where, entry in snippets:
        click.echo(f"  {client}, {where}:")
        if client == "Codex":  # TOML: strings and arrays of strings are written as JSON writes them
            click.echo(f"    command = {json.dumps(entry['command'], ensure_ascii=False)}")
            click.echo(f"    args = {json.dumps(entry['args'], ensure_ascii=False)}")
        else:
            click.echo(f'    "lifeline": {json.dumps(entry, ensure_ascii=False)}')


def _echo_agent_file(change: FileChange, workdir: Path) -> None:
    try:
        rel = change.path.relative_to(workdir)
    except ValueError:
        rel = change.path
    note = f"; {change.detail}" if change.detail else ""
    if (
        change.status in ("invalid", "skipped")
        and change.what != "claude-hooks"
        and change.what.endswith(("-hooks", "-mcp"))
    ):
        click.echo(f"agents: {rel}: {change.detail}", err=True)
        return
    if change.what == "claude-hooks":
        what = {"created": "created", "updated": "added the hooks to", "kept": "already has the hooks in"}.get(
            change.status, change.status
        )
        if change.status == "invalid":
            click.echo(f"agents: {change.detail}", err=True)
        else:
            click.echo(f"agents: {what} {rel} (SessionStart prints the context; Stop asks for a checkpoint){note}")
        return
    if change.what.endswith("-hooks"):
        what = {"created": "created", "updated": "added the hook to", "kept": "already has the hook in"}[change.status]
        click.echo(f"agents: {what} {rel} (session start prints the context){note}")
        return
    if change.what.endswith("-mcp"):
        verb = {"created": "created", "updated": "added the lifeline server to", "kept": "keeps its server in"}
        click.echo(f"agents: {verb[change.status]} {rel} (the lifeline MCP server){note}")
        return
    words = {
        "created": "created with the git-lifeline section",
        "added": "added the git-lifeline section",
        "updated": "updated the git-lifeline section",
        "kept": "the git-lifeline section is current",
    }
    if change.status == "invalid":
        click.echo(f"agents: {rel}: {change.detail}", err=True)
    else:
        click.echo(f"agents: {rel}: {words[change.status]}")


# The MCP face's program, started without the current directory on sys.path ('' is what
# -c puts there; PYTHONSAFEPATH leaves it out already).
MCP_BOOT = (
    "import sys\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"
    "from git_lifeline.mcp.__main__ import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@click.group(invoke_without_command=True)
@line_option
@click.option(
    "--repo",
    type=click.Path(file_okay=False),
    default=None,
    help="The repository (default: the one containing the working directory).",
)
@click.option("--check", is_flag=True, help="Check that the server could serve (repository, line, MCP SDK), then exit.")
@click.option("--http", "http", metavar="[HOST:]PORT", default=None, help="Serve Streamable HTTP at /mcp, not stdio.")
@click.option("--token-file", metavar="FILE", default=None, help="HTTP: the bearer tokens (mcp token add).")
@click.option("--issuer", metavar="URL", default=None, help="HTTP, OAuth: the authorization server (token iss).")
@click.option("--audience", metavar="URL", default=None, help="HTTP, OAuth: this server's URL (token aud).")
@click.option("--jwks", metavar="URL|FILE", default=None, help="HTTP, OAuth: the issuer's signing keys.")
@click.option("--allow-origin", metavar="ORIGIN", multiple=True, help="HTTP: another Origin to accept; repeatable.")
@click.option("--allow-host", metavar="HOST", multiple=True, help="HTTP: another Host header to accept; repeatable.")
@click.option("--remote", metavar="NAME", default=None, help="HTTP: refresh from and publish to it (default origin).")
@click.option("--refresh", metavar="SECONDS", type=float, default=None, help="HTTP: pull at most every N s (5).")
@click.option("--rate-limit", metavar="N", type=int, default=None, help="HTTP: calls a minute per token (600; 0 none).")
@click.pass_context
def mcp(
    ctx: click.Context,
    repo: Optional[str],
    check: bool,
    http: Optional[str],
    token_file: Optional[str],
    issuer: Optional[str],
    audience: Optional[str],
    jwks: Optional[str],
    allow_origin: tuple[str, ...],
    allow_host: tuple[str, ...],
    remote: Optional[str],
    refresh: Optional[float],
    rate_limit: Optional[int],
) -> None:
    """Run the MCP server on stdio, or over HTTP with --http, for AI agents (needs the [mcp] extra).

    --line names the line served by default; every tool also takes a `line` argument.
    `git lifeline mcp token add|list|revoke` manage the HTTP server's bearer tokens."""
    if ctx.invoked_subcommand is not None:
        return
    from ..app.workspace import Workspace

    line = chosen_line(ctx)
    Workspace.open(repo).ledger(line)  # a bad repository or line fails here, with the CLI's message
    # Not `-m git_lifeline.mcp`: -m puts the current directory (the repository) first on
    # sys.path, so a work tree holding a git_lifeline/ package would run as the server.
    argv = [sys.executable, "-c", MCP_BOOT]
    argv += ["--repo", repo] if repo else []
    argv += ["--line", line] if line else []
    argv += ["--check"] if check else []
    for flag, value in (
        ("--http", http),
        ("--token-file", token_file),
        ("--issuer", issuer),
        ("--audience", audience),
        ("--jwks", jwks),
        ("--remote", remote),
        ("--refresh", None if refresh is None else str(refresh)),
        ("--rate-limit", None if rate_limit is None else str(rate_limit)),
    ):
        argv += [flag, value] if value is not None else []
    for origin in allow_origin:
        argv += ["--allow-origin", origin]
    for host in allow_host:
        argv += ["--allow-host", host]
    # The MCP face is its own program: this process becomes it (same stdio, cwd, environment),
    # and finds this very package even when it was put on sys.path by hand.
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), package_root) if p)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)


@mcp.group("token")
def token() -> None:
    """The HTTP server's bearer tokens: one per agent or person, stored as hashes."""


def _token_path(ctx: click.Context, token_file: Optional[str]) -> Path:
    from ..app.tokens import default_path
    from ..app.workspace import Workspace

    if token_file:
        return Path(token_file)
    mcp_ctx = ctx.parent.parent if ctx.parent is not None else None  # token <verb> under `mcp --repo`
    return default_path(Workspace.open(mcp_ctx.params.get("repo") if mcp_ctx is not None else None).location)


TOKEN_FILE = click.option(
    "--token-file", metavar="FILE", default=None, help="The token file (default: lifeline-mcp-tokens in the git dir)."
)


@token.command("add")
@click.argument("name")
@TOKEN_FILE
@click.pass_context
def token_add(ctx: click.Context, name: str, token_file: Optional[str]) -> None:
    """Make a token for NAME (the agent name of its writes) and print it, once, on the last line."""
    from ..app.tokens import add_token

    made = add_token(_token_path(ctx, token_file), name)
    click.echo(f"token for {made.name} added to {made.path.name} (only its hash is stored; it is shown once):")
    click.echo(made.token)


@token.command("list")
@TOKEN_FILE
@click.pass_context
def token_list(ctx: click.Context, token_file: Optional[str]) -> None:
    """The names that hold a token (never the tokens: only hashes are kept)."""
    from ..app.tokens import read_tokens

    for t in read_tokens(_token_path(ctx, token_file)):
        click.echo(f"{t.name} {t.digest[:19]}…")


@token.command("revoke")
@click.argument("name")
@TOKEN_FILE
@click.pass_context
def token_revoke(ctx: click.Context, name: str, token_file: Optional[str]) -> None:
    """Revoke NAME's token: a running server refuses it from its next request."""
    from ..app.tokens import revoke_token

    path = _token_path(ctx, token_file)
    revoke_token(path, name)
    click.echo(f"revoked the token of {name} in {path.name}")


@click.command("agent-hook", hidden=True)
@click.argument("event", type=click.Choice(["session-start", "stop"]))
@click.option(
    "--budget",
    type=int,
    default=None,
    metavar="CHARS",
    help="session-start: hard limit on what it prints (default 9000 characters).",
)
@click.option(
    "--client",
    type=click.Choice(["claude", "cursor", "codex", "gemini"]),
    default="claude",
    help="The client, whose documented channel the answer goes out in (default claude: plain text at "
    "session-start, Claude Code's Stop answer at stop).",
)
@click.pass_context
def agent_hook(ctx: click.Context, event: str, budget: Optional[int], client: str) -> None:
    """What a coding agent's session hooks run (Claude Code's SessionStart and Stop).

    session-start prints the context, bounded; stop answers with a request for a checkpoint
    when the session changed code and recorded none. Both read the client's JSON on stdin,
    and say nothing outside a repository."""
    from ..app import agent_hooks
    from ..errors import describe_failure

    data = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read(agent_hooks.MAX_PAYLOAD + 1)
    payload = agent_hooks.parse_payload(data)
    line = chosen_line(ctx)
    try:
        if event == "session-start":
            text = agent_hooks.session_start(payload, line, budget if budget is not None else agent_hooks.HOOK_BUDGET)
            click.echo(agent_hooks.for_client(client, text), nl=False)
        else:
            answer = agent_hooks.stop(payload, line, client)
            if answer:
                click.echo(answer)
    except Exception as exc:  # a hook never fails the agent's session
        if event == "session-start":
            failure = f"git-lifeline: the ledger could not be read: {describe_failure(exc)[0]}\n"
            click.echo(agent_hooks.for_client(client, failure), nl=False)
