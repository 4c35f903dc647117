"""The state of the ledger at a glance (`status`) and a check of the setup (`doctor`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional

import click

from ..app.visible import visible
from .common import echo_json, open_workspace, plural, short
from .terminal import say_line

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..app.status import LineStatus


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
@click.option("--quick", is_flag=True, help="Skip what reads code history (stale decisions) and the fold (conflicts).")
@click.pass_context
def status(ctx: click.Context, as_json: bool, quick: bool) -> None:
    """The ledger at a glance: each line against its remote, pending proposals, stale and
    conflicting decisions; hooks, what the agents are told, projections, the semantic model."""
    from ..app.status import status as read_status

    st = read_status(open_workspace(ctx), deep=not quick)
    if as_json:
        echo_json(st.to_json())
        return
    # every line through say_line(): the policy names origin's default branch, which the
    # remote chose; paths and names may hold what a terminal would act on
    where = f" (work tree {st.workdir})" if st.workdir else " (bare)"
    say_line(f"repository: {st.repository}{where}" + ("; shallow history" if st.shallow else ""))
    if st.remote is None:
        say_line("remote: none (the ledger stays here until one is added)")
    else:
        plain = "yes" if st.refspecs.get("ledger") else f"no (git lifeline remote-setup {st.remote})"
        say_line(f"remote: {st.remote}; a plain git fetch brings the ledger: {plain}")
    for row in st.lines:
        _echo_line(row, st.remote)
    states = ", ".join(f"{name} {state}" for name, state in st.hooks.states.items() if state != "absent")
    say_line(f"hooks: {states or 'none installed (git lifeline hooks install)'} in {st.hooks.dir}")
    agents = st.agents
    say_line(f"agents: mcp: {agents.mcp}")
    rules = ", ".join(f"{name} {state}" for name, state in agents.rules.items() if state != "absent")
    say_line(f"agents: rules: {rules or 'none (git lifeline init)'}")
    hooks = agents.claude_hooks
    if "invalid" in hooks:
        say_line(f"agents: Claude Code hooks: {hooks['invalid']}")
    elif hooks:
        set_ = [event for event, command in hooks.items() if command]
        say_line(f"agents: Claude Code hooks: {', '.join(set_) if set_ else 'none (git lifeline init)'}")
    for client, client_state in agents.clients.items():
        say_line(f"agents: {client}: session-start hook {client_state.hook}; mcp server {client_state.mcp}")
    for override in agents.env_overrides:
        say_line(f"agents: warning: {override}")
    say_line(f"policy: {st.policy}")
    say_line(f"semantic model: {st.semantic.configured + ' — ' if st.semantic.configured else ''}{st.semantic.state}")


def _echo_line(row: LineStatus, remote: Optional[str]) -> None:
    if row.clash is not None:
        say_line(
            f"line {row.line}: name-clash: differs only in case from line {row.clash}, so it is not read here "
            "(docs/FORMAT.md §4)"
        )
        return
    head = f"head {short(row.head)}, {plural(row.entries)}" if row.head else "no entries here"
    say_line(f"line {row.line}: {head}")
    if remote is not None:
        if row.remote_head is None and row.remote_known == "unknown":
            say_line(f"  {remote}: never fetched: it may hold the ledger (git lifeline pull {remote})")
        elif row.remote_head is None:
            where = "not on the remote as last fetched" + (f" (git lifeline push {remote})" if row.head else "")
            say_line(f"  {remote}: {where}")
        elif row.head is None:
            say_line(f"  {remote}: has {plural(row.incoming)} this clone lacks (git lifeline pull {remote})")
        else:
            parts = [f"{row.ahead} ahead, {row.behind} behind"] if row.ahead is not None else []
            if row.unpushed:
                parts.append(f"{plural(row.unpushed)} to push (git lifeline push {remote})")
            if row.incoming:
                parts.append(f"{plural(row.incoming)} to pull (git lifeline pull {remote})")
            say_line(f"  {remote}: {'; '.join(parts) if parts else 'up to date'} (as last fetched)")
    if row.pending:
        say_line(f"  review: {row.pending} proposal(s) pending (git lifeline review)")
    if row.head:
        say_line(
            f"  decisions: {row.stale} stale, {row.conflicts} in conflict"
            + (" (git lifeline stale / conflicts)" if row.stale or row.conflicts else "")
        )
    p = row.projection
    if p is not None:
        detail = f" — {p.detail}" if p.detail and p.state not in ("current", "disabled") else ""
        say_line(f"  projection: {p.path + ' ' if p.path else ''}{p.state}{detail}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the setup (identity, history, remote, hooks, MCP server, agents' hooks, policy) and
    print the fix for each problem. Exit 1 when a problem is found."""
    from ..app.doctor import doctor as run_doctor
    from ..app.doctor import problems

    checks = run_doctor(open_workspace(ctx))
    bad = problems(checks)
    if as_json:
        echo_json({"ok": not bad, "checks": [c.to_json() for c in checks]})
    else:
        for c in checks:
            # details quote the work tree's files (.mcp.json, agent settings) and a probe's output
            click.echo(f"{c.level:<8} {c.name}: {visible(c.detail)}")
            if c.fix and c.level != "ok":
                click.echo(f"{'':<8} fix: {visible(c.fix)}")
        click.echo(f"git-lifeline doctor: {len(bad)} problem(s)" if bad else "git-lifeline doctor: no problem found")
    if bad:
        sys.exit(1)
