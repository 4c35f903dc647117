"""CLI commands for sync and hooks, registered on `cli.main`. Printing only; the
work is in the service (Ledger) and below. Heavy modules are imported inside the
commands so that `git lifeline --help` and the hooks start fast.
"""

from __future__ import annotations

import sys
from typing import Optional

import click

from .main import _echo_json, _ledger, main


def _lines(ctx: click.Context) -> Optional[list]:
    """The line the user chose with --line, or None for every line."""
    line = ctx.obj.get("line") if ctx.obj else None
    return [line] if line else None


def _progress():
    """A click progress bar on stderr when it is a terminal and the work is long."""
    if not sys.stderr.isatty():
        return None

    def factory(label: str, total: int):
        if total < 50:
            from ..git.sync import no_progress
            return no_progress(label, total)
        return click.progressbar(length=total, label=label, file=sys.stderr)
    return factory


def _short(sha: Optional[str]) -> str:
    return sha[:12] if sha else "-"


def _n(k: int, one: str = "entry", many: str = "entries") -> str:
    return f"{k} {one if k == 1 else many}"


def _echo_pulls(remote: str, pulls: list) -> None:
    if not pulls:
        click.echo(f"{remote} has no ledger lines yet")
    for p in pulls:
        if p.action == "created":
            click.echo(f"line {p.line}: created from {remote} ({_n(len(p.incoming))}, head {_short(p.after)})")
        elif p.action == "fast-forward":
            click.echo(f"line {p.line}: fast-forward {_short(p.before)}..{_short(p.after)} "
                       f"({_n(len(p.incoming))} from {remote})")
        elif p.action == "merged":
            extra = f", {_n(len(p.rewritten))} kept at the earliest timestamp" if p.rewritten else ""
            click.echo(f"line {p.line}: merged {_n(len(p.incoming))} from {remote} with {p.local_only} "
                       f"local (merge {_short(p.after)}){extra}")
        elif p.action == "ahead":
            click.echo(f"line {p.line}: ahead of {remote}; push with: git lifeline push {remote}")
        elif p.action == "local-only":
            click.echo(f"line {p.line}: not on {remote} yet; push with: git lifeline push {remote}")
        else:
            click.echo(f"line {p.line}: up to date")


def _echo_push(result) -> bool:
    """Print a push result; True when every line went through."""
    for msg in result.remote_messages:
        click.echo(f"remote: {msg}", err=True)
    if not result.lines:
        click.echo("nothing to push: this repository has no ledger lines")
        return True
    for p in result.lines:
        if p.flag == "=":
            click.echo(f"line {p.line}: up to date on {result.remote}")
        elif p.flag == "*":
            click.echo(f"line {p.line}: pushed (new on {result.remote}, head {_short(p.sha)})")
        elif p.ok:
            click.echo(f"line {p.line}: pushed {p.summary} to {result.remote}")
        else:
            click.echo(f"line {p.line}: REJECTED by {result.remote}: {p.summary}", err=True)
    rejected = result.rejected
    if not rejected:
        return True
    names = ", ".join(p.line for p in rejected)
    if any(p.needs_sync for p in rejected):
        click.echo(f"git-lifeline: {result.remote} has ledger entries this clone has not pulled yet "
                   f"(line {names}); nothing was overwritten. Run: git lifeline sync {result.remote}", err=True)
    else:
        click.echo(f"git-lifeline: {result.remote} refused line {names} (see the remote's message above); "
                   "run git lifeline verify, then git lifeline sync", err=True)
    return False


@main.command()
@click.argument("remote", required=False)
@click.pass_context
def fetch(ctx, remote):
    """Fetch the remote's ledger into refs/remotes/REMOTE/lifeline/* (changes no line)."""
    name, rows = _ledger(ctx).fetch(remote, _lines(ctx))
    if not rows:
        click.echo(f"{name} has no ledger lines, and neither has this repository")
    words = {"same": "up to date", "new": f"new on {name}: git lifeline pull {name}",
             "behind": f"behind {name}: git lifeline pull {name}",
             "ahead": f"ahead of {name}: git lifeline push {name}",
             "diverged": f"diverged from {name}: git lifeline sync {name}",
             "local-only": f"not on {name}: git lifeline push {name}",
             "unknown": "unknown state: fetch again"}
    for r in rows:
        moved = f" ({_short(r.before)}..{_short(r.after)})" if r.before != r.after else ""
        click.echo(f"line {r.line}: {words.get(r.state, r.state)}{moved}")


@main.command()
@click.argument("remote", required=False)
@click.pass_context
def pull(ctx, remote):
    """Fetch the remote's ledger and bring it in: create, fast-forward or merge each line."""
    name, pulls = _ledger(ctx).pull(remote, _lines(ctx), _progress())
    _echo_pulls(name, pulls)


@main.command()
@click.argument("remote", required=False)
@click.pass_context
def push(ctx, remote):
    """Push every line to the remote (never forced). Exit 1 when the remote refuses."""
    result = _ledger(ctx).push(remote, _lines(ctx), _progress())
    if not _echo_push(result):
        sys.exit(1)


@main.command("sync")
@click.argument("remote", required=False)
@click.pass_context
def sync_cmd(ctx, remote):
    """Pull then push (again, a bounded number of times, if someone pushed in between)."""
    name, pulls, result = _ledger(ctx).sync(remote, _lines(ctx), _progress())
    if pulls:
        _echo_pulls(name, pulls)
    if not _echo_push(result):
        sys.exit(1)


@main.command()
@click.argument("url")
@click.argument("directory", required=False)
def clone(url, directory):
    """git clone URL [DIRECTORY], then pull the ledger into the new clone."""
    from ..app.service import Ledger
    _led, dest, remote, pulls = Ledger.clone(url, directory, _progress())
    click.echo(f"cloned into {dest}")
    _echo_pulls(remote, pulls)
    click.echo("hint: git lifeline hooks install   (verify before push, remind after commits)")


@main.command("remote-setup")
@click.argument("remote", required=False)
@click.pass_context
def remote_setup(ctx, remote):
    """Make a plain `git fetch REMOTE` bring the remote's ledger too (adds a fetch refspec)."""
    name, added, spec = _ledger(ctx).remote_setup(remote)
    if added:
        click.echo(f"added remote.{name}.fetch {spec}")
    else:
        click.echo(f"remote.{name}.fetch already has {spec}")
    click.echo(f"`git fetch {name}` now updates refs/remotes/{name}/lifeline/*; bring it into your lines "
               f"with `git lifeline pull {name}`. No push refspec was added: it would change what a plain "
               "`git push` pushes; share the ledger with `git lifeline push`.")


# ---- hooks ------------------------------------------------------------------------
@main.group()
def hooks():
    """Install, remove or inspect the git hooks (pre-push, post-commit, commit-msg, pre-receive)."""


def _echo_changes(changes, led) -> None:
    click.echo(f"hooks directory: {led.hooks_dir()}")
    for c in changes:
        chained = f" (runs your previous hook first: {c.chained.name})" if c.chained else ""
        if c.action in ("installed", "updated"):
            click.echo(f"{c.action} {c.name}{chained}")
        elif c.action == "unchanged":
            click.echo(f"{c.name} already installed{chained}")
        elif c.action == "restored":
            click.echo(f"removed {c.name}; restored your previous hook")
        elif c.action == "removed":
            click.echo(f"removed {c.name}")
        elif c.action == "left":
            click.echo(f"{c.name} is not git-lifeline's; left alone")
        else:
            click.echo(f"{c.name} was not installed")


@hooks.command("install")
@click.argument("names", nargs=-1, metavar="[HOOK]...")
@click.pass_context
def hooks_install(ctx, names):
    """Install hooks (default: pre-push and post-commit; in a bare repo: pre-receive).

    commit-msg is opt-in: git lifeline hooks install commit-msg. An existing hook is
    never overwritten: it is kept as <hook>.lifeline-chained and run first."""
    led = _ledger(ctx)
    _echo_changes(led.hooks_install(list(names) or None), led)


@hooks.command("uninstall")
@click.argument("names", nargs=-1, metavar="[HOOK]...")
@click.pass_context
def hooks_uninstall(ctx, names):
    """Remove git-lifeline's hooks (default: all), restoring any chained hook."""
    led = _ledger(ctx)
    _echo_changes(led.hooks_uninstall(list(names) or None), led)


@hooks.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def hooks_status(ctx, as_json):
    """Show which hooks are installed and what they chain to."""
    led = _ledger(ctx)
    rows = led.hooks_status()
    if as_json:
        _echo_json([{"hook": r.name, "path": str(r.path), "state": r.state,
                     "chained": str(r.chained) if r.chained else None} for r in rows])
        return
    click.echo(f"hooks directory: {led.hooks_dir()}")
    for r in rows:
        state = {"installed": "installed", "absent": "not installed",
                 "foreign": "not installed (another hook is there)"}[r.state]
        chained = f", chains to {r.chained.name}" if r.chained and r.state == "installed" else ""
        click.echo(f"{r.name:<12} {state}{chained}")


@main.command("hook", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook(ctx, name, args):
    """Entry point of the installed hook scripts (not for direct use)."""
    from ..errors import LifelineError
    stdin = b""
    if name in ("pre-push", "pre-receive") and sys.stdin is not None and not sys.stdin.isatty():
        stdin = sys.stdin.buffer.read()
    try:
        outcome = _ledger(ctx).run_hook(name, list(args), stdin)
    except LifelineError as exc:
        if name == "post-commit":  # never blocks a commit, never fails it
            click.echo(f"git-lifeline: post-commit: {exc}", err=True)
            sys.exit(0)
        raise
    except Exception as exc:  # noqa: BLE001 - a hook must fail with a message, never a traceback
        if name == "post-commit":
            sys.exit(0)
        click.echo(f"git-lifeline: {name} hook: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(3)
    for msg in outcome.messages:
        click.echo(msg, err=True)
    sys.exit(outcome.code)


@main.command()
@click.argument("target", metavar="PATH|COMMIT")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def why(ctx, target, as_json):
    """The entries linked (Lifeline: trailers) to the commits that touched PATH, newest first."""
    rows = _ledger(ctx).why(target)
    if as_json:
        _echo_json([{"entry": None if e is None else {"id": e.id, "kind": e.kind, "summary": e.summary,
                                                      "ts": f"{e.ts:%Y-%m-%dT%H:%M:%S.%fZ}"},
                     "trailer": link.value, "line": link.line, "commit": link.commit, "subject": link.subject}
                    for e, link in rows])
        return
    if not rows:
        click.echo(f"no commit touching {target} links to a ledger entry (add a 'Lifeline: <id>' trailer)")
        return
    for e, link in rows:
        where = f"(commit {link.commit[:10]} {link.subject})"
        if e is None:
            click.echo(f"{link.value[:12]:<8}  unknown entry: not in this clone's ledger (git lifeline pull?)  "
                       f"{where}")
        else:
            click.echo(f"{e.short}  {e.ts:%Y-%m-%d}  {e.kind}: {e.summary}  {where}")


# ---- init offers the hooks -------------------------------------------------------
def _extend_init() -> None:
    """Give `init` a --hooks/--no-hooks choice (asked on a terminal) and report what it installed."""
    base = main.commands["init"]
    original = base.callback

    @click.pass_context
    def callback(ctx, install_hooks=None, **kwargs):
        ctx.invoke(original, **kwargs)
        led = _ledger(ctx)
        present = [r.name for r in led.hooks_status() if r.state == "installed"]
        if install_hooks is None and present:
            click.echo(f"hooks: {', '.join(present)} installed ({led.hooks_dir()})")
            return
        if install_hooks is None:
            if sys.stdin.isatty() and sys.stdout.isatty():
                install_hooks = click.confirm("install the git hooks (pre-push verify, post-commit reminder)?",
                                              default=True)
            else:
                click.echo("hooks: not installed; install them with: git lifeline hooks install")
                return
        if install_hooks:
            _echo_changes(led.hooks_install(None), led)
        else:
            click.echo("hooks: not installed; install them later with: git lifeline hooks install")

    base.params.append(click.Option(["--hooks/--no-hooks", "install_hooks"], default=None,
                                    help="Install the git hooks (asked when on a terminal)."))
    base.callback = callback


_extend_init()
