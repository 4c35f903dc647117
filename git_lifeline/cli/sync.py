"""Commands that exchange the ledger with remotes: fetch, pull, push, sync, clone,
remote-setup (docs/SYNC.md). `--line NAME` limits each to one line."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable, Optional

import click

from .common import Command, chosen_lines, line_option, open_workspace, plural, print_warnings, quiet_option, short
from .terminal import info, say, say_line

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from contextlib import AbstractContextManager

    from ..app.exchange import Progress, PullLine, PushResult, SyncReport


def _exchange_command(name: Optional[str] = None) -> Callable[[Command], click.Command]:
    """A command that exchanges the ledger with REMOTE (default: the one git's configuration names)."""

    def made(func: Command) -> click.Command:
        for option in (line_option, quiet_option, click.argument("remote", required=False)):
            func = option(click.pass_context(func) if option is line_option else func)
        return click.command(name)(func)

    return made


def _progress() -> Optional[Progress]:
    """A click progress bar on stderr when it is a terminal and the work is long."""
    if not sys.stderr.isatty():
        return None

    def factory(label: str, total: int) -> AbstractContextManager[object]:
        if total < 50:
            from ..app.exchange import no_progress

            return no_progress(label, total)
        return click.progressbar(length=total, label=label, file=sys.stderr)

    return factory


def _echo_pulls(remote: str, pulls: list[PullLine]) -> None:
    if not pulls:
        info(f"{remote} has no ledger lines yet")
    for p in pulls:
        if p.action == "created":
            info(f"line {p.line}: created from {remote} ({plural(len(p.incoming))}, head {short(p.after)})")
        elif p.action == "fast-forward":
            info(
                f"line {p.line}: fast-forward {short(p.before)}..{short(p.after)} "
                f"({plural(len(p.incoming))} from {remote})"
            )
        elif p.action == "merged":
            extra = f", {plural(len(p.rewritten))} kept at the earliest timestamp" if p.rewritten else ""
            info(
                f"line {p.line}: merged {plural(len(p.incoming))} from {remote} with {p.local_only} "
                f"local (merge {short(p.after)}){extra}"
            )
        elif p.action == "ahead":
            info(f"line {p.line}: ahead of {remote}; push with: git lifeline push {remote}")
        elif p.action == "local-only":
            info(f"line {p.line}: not on {remote} yet; push with: git lifeline push {remote}")
        else:
            info(f"line {p.line}: up to date")
    from ..app.exchange import overrides_brought

    for line, entry_id, reason in overrides_brought(pulls):
        say_line(
            f"warning: line {line}: entry {entry_id[:12]} overrides the secret scan ({reason!r}); "
            "git config lifeline.allowSecretOverride false refuses such entries",
            err=True,
        )


def _echo_push(result: PushResult) -> bool:
    """Print a push result; True when every line went through."""
    for msg in result.remote_messages:
        say(f"remote: {msg}", err=True)
    if not result.lines:
        info("nothing to push: this repository has no ledger lines")
        return True
    for p in result.lines:
        if p.flag == "=":
            info(f"line {p.line}: up to date on {result.remote}")
        elif p.flag == "*":
            info(f"line {p.line}: pushed (new on {result.remote}, head {short(p.sha)})")
        elif p.ok:
            info(f"line {p.line}: pushed {p.summary} to {result.remote}")
        else:
            say(f"line {p.line}: REJECTED by {result.remote}: {p.summary}", err=True)
    rejected = result.rejected
    if not rejected:
        return True
    names = ", ".join(p.line for p in rejected)
    if any(p.needs_sync for p in rejected):
        say(
            f"git-lifeline: {result.remote} has ledger entries this clone has not pulled yet "
            f"(line {names}); nothing was overwritten. Run: git lifeline sync {result.remote}",
            err=True,
        )
    else:
        say(
            f"git-lifeline: {result.remote} refused line {names} (see the remote's message above); "
            "run git lifeline verify, then git lifeline sync",
            err=True,
        )
    return False


@_exchange_command()
def fetch(ctx: click.Context, remote: Optional[str]) -> None:
    """Fetch the remote's ledger into refs/remotes/REMOTE/lifeline/* (changes no line)."""
    from ..app import exchange

    report = exchange.fetch(open_workspace(ctx), remote, chosen_lines(ctx))
    name = report.remote
    if not report.lines:
        info(f"{name} has no ledger lines, and neither has this repository")
    words = {
        "same": "up to date",
        "new": f"new on {name}: git lifeline pull {name}",
        "behind": f"behind {name}: git lifeline pull {name}",
        "ahead": f"ahead of {name}: git lifeline push {name}",
        "diverged": f"diverged from {name}: git lifeline sync {name}",
        "local-only": f"not on {name}: git lifeline push {name}",
        "unknown": "unknown state: fetch again",
    }
    for r in report.lines:
        moved = f" ({short(r.before)}..{short(r.after)})" if r.before != r.after else ""
        info(f"line {r.line}: {words.get(r.state, r.state)}{moved}")


@_exchange_command()
def pull(ctx: click.Context, remote: Optional[str]) -> None:
    """Fetch the remote's ledger and bring it in: create, fast-forward or merge each line."""
    from ..app import exchange

    try:
        report = exchange.pull(open_workspace(ctx), remote, chosen_lines(ctx), _progress())
    except exchange.PartlyPulled as exc:  # what did come in is shown before the error
        if exc.report.lines:
            _echo_pulls(exc.report.remote, exc.report.lines)
        raise
    _echo_pulls(report.remote, report.lines)


@_exchange_command()
def push(ctx: click.Context, remote: Optional[str]) -> None:
    """Push every line to the remote (never forced). Exit 1 when the remote refuses."""
    from ..app import exchange

    result = exchange.push(open_workspace(ctx), remote, chosen_lines(ctx), _progress())
    if not _echo_push(result):
        sys.exit(1)


@_exchange_command("sync")
def sync_cmd(ctx: click.Context, remote: Optional[str]) -> None:
    """Pull then push (again, a bounded number of times, if someone pushed in between)."""
    from ..app import exchange

    try:
        report = exchange.sync_with(open_workspace(ctx), remote, chosen_lines(ctx), _progress())
    except exchange.PartlyPulled as exc:  # what did come in and go out is shown before the error
        _echo_sync(exc.report)
        raise
    if not _echo_sync(report):
        sys.exit(1)


def _echo_sync(report: SyncReport) -> bool:
    """Print what a sync pulled and pushed; True when every line went through."""
    if report.pulls:
        _echo_pulls(report.remote, report.pulls)
    return _echo_push(report.push)


@click.command()
@click.argument("url")
@click.argument("directory", required=False)
def clone(url: str, directory: Optional[str]) -> None:
    """git clone URL [DIRECTORY], then pull the ledger into the new clone."""
    from ..app import exchange

    report = exchange.clone(url, directory, _progress())
    info(f"cloned into {report.directory}")
    _echo_pulls(report.remote, report.pulls)
    print_warnings(report.workspace.take_warnings())
    info("hint: git lifeline hooks install   (verify before push, remind after commits)")


@click.command("remote-setup")
@click.argument("remote", required=False)
@click.pass_context
def remote_setup(ctx: click.Context, remote: Optional[str]) -> None:
    """Make a plain `git fetch REMOTE` bring the remote's ledger too (adds a fetch refspec)."""
    from ..app import exchange

    report = exchange.remote_setup(open_workspace(ctx), remote)
    name, spec = report.remote, report.refspec
    if report.added:
        info(f"added remote.{name}.fetch {spec}")
    else:
        info(f"remote.{name}.fetch already has {spec}")
    info(
        f"`git fetch {name}` now updates refs/remotes/{name}/lifeline/*; bring it into your lines "
        f"with `git lifeline pull {name}`. No push refspec was added: it would change what a plain "
        "`git push` pushes; share the ledger with `git lifeline push`."
    )
