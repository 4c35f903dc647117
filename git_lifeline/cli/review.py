"""The human side of the agents' door: propose, review, approve, reject, audit, policy."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional

import click

from ..app.visible import visible
from ..errors import LifelineError
from .common import (
    echo_json,
    entry_dict,
    entry_options,
    line_option,
    open_ledger,
    open_workspace,
    page,
    short,
)
from .terminal import say, say_failure, say_line

if TYPE_CHECKING:  # annotations only
    from ..app.agents import Agents, AgentWrite, Content, Proposal, ReviewOutcome
    from ..app.draft import CheckpointDraft, Draft
    from ..app.text import JSONObject


def _agents(ctx: click.Context, existing: bool = True) -> Agents:
    """The agents' door of the line; a mistyped --line (no ledger, no trail) is an error
    except for propose, which may start a line."""
    from ..app.agents import Agents

    return Agents(open_ledger(ctx, existing=existing))


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _who(content: Content) -> str:
    from ..app.text import agent_label

    if content.agent == "human" and content.provider == "none":
        return content.author.split(" <", 1)[0]
    return agent_label(content.agent, content.provider, content.model)


def _proposal_json(p: Proposal) -> JSONObject:
    from ..app.text import format_ts

    d = p.decision
    return {
        "id": p.id,
        "status": p.status,
        "ts": format_ts(p.record.ts),
        "by": p.record.by,
        "via": p.record.via,
        "content": p.content.to_doc(),
        "decision": None
        if d is None
        else {"type": d.type, "id": d.id, "by": d.by, "ts": format_ts(d.ts), "entry": d.entry, "why": d.why},
        "conflicts": [{"type": c.type, "id": c.id, "by": c.by, "ts": format_ts(c.ts)} for c in p.conflicts],
    }


@click.command()
@entry_options
@click.option("--thread", default=None, help="Record into a thread once approved (chains to its head now).")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal as JSON.")
@line_option
@click.pass_context
def propose(ctx: click.Context, draft: Draft, as_json: bool) -> None:
    """File a proposal: the entry waits in the review trail until someone approves it."""
    from ..app.text import format_ts

    rec = _agents(ctx, existing=False).propose(draft, via="cli")
    assert rec.content is not None, "a proposal carries its content"
    if as_json:
        echo_json({"proposal": rec.id, "content": rec.content.to_doc(), "ts": format_ts(rec.ts)})
        return
    say(f"proposal {rec.short} filed ({draft.kind}: {rec.content.summary})")
    say(f"approve it with: git lifeline approve {rec.short}")


@click.command()
@click.option("--all", "everything", is_flag=True, help="Every proposal with its status, not only pending ones.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def review(ctx: click.Context, everything: bool, as_json: bool) -> None:
    """List the proposals waiting for a human (oldest first)."""
    from ..app.agents import proposal_why
    from ..app.text import format_ts

    agents = _agents(ctx)
    props = agents.proposals(everything=everything)
    if as_json:
        echo_json([_proposal_json(p) for p in props])
        return
    page(ctx, colour=False)
    _other_lines_hint(ctx, agents.line)
    if not props:
        say(f"no pending proposals in line {agents.line}" if not everything else f"no proposals in line {agents.line}")
        return
    pending = sum(1 for p in props if p.status == "pending")
    say(
        f"{pending} pending proposal(s) in line {agents.line}:"
        if not everything
        else f"{len(props)} proposal(s) in line {agents.line} ({pending} pending):"
    )
    for p in props:
        c = p.content
        status = "" if p.status == "pending" else f"  [{p.status}]"
        say(f"\n  {p.short}  {c.kind}: {c.summary}{status}")
        say(f"            by {_who(c)}, {format_ts(p.record.ts)[:16].replace('T', ' ')} via {p.record.via}")
        _say_parents(agents, c)
        why = _one_line(proposal_why(c), 160)
        if why:
            say(f"            why: {visible(why)}")
        for conflict in p.conflicts:
            say(f"            conflict: also {conflict.type} by {conflict.by} (merged from another clone)")
    if pending:
        say("\napprove: git lifeline approve <id|all>    reject: git lifeline reject <id|all> --why TEXT")


def _other_lines_hint(ctx: click.Context, line: str) -> None:
    """Agents may write to any line (the MCP `line` argument): say where else work waits."""
    from ..app.agents import pending_elsewhere

    waiting = [f"{name} ({count})" for name, count in pending_elsewhere(open_workspace(ctx), line)]
    if waiting:
        say(f"also pending in other lines: {', '.join(waiting)} — git lifeline --line NAME review", err=True)


def _say_parents(agents: Agents, content: Content) -> None:
    """Each entry a proposal names, with what approving it does to that entry."""
    from ..app.agents import parent_effects

    for parent in parent_effects(agents.led, content):
        named = f"{parent.kind}: {visible(parent.summary)}" if parent.kind else ""
        say(f"            {parent.effect} {parent.id[:12]} {named}".rstrip())


def _report(results: list[ReviewOutcome], verb: str, agents: Optional[Agents] = None) -> None:
    failed = [r for r in results if not r.ok]
    for r in results:
        p, e = r.proposal, r.entry  # an outcome that is ok names its proposal; an approval, its entry
        if not r.ok or p is None:
            say_failure(r.failure or LifelineError(r.status))
        elif r.status == "approved" and e is not None:
            say(f"approved {p.short} -> entry {e.short} {e.kind}: {e.summary}")
            if agents is not None:
                _say_parents(agents, p.content)
        elif r.status == "duplicate" and e is not None:
            say(f"duplicate {p.short}: entry {e.short} was already in the line; closed as duplicate")
        else:
            say(f"rejected {p.short} {p.content.kind}: {p.content.summary}")
    if not results:
        say(f"nothing to {verb}: no pending proposals")
    if failed:
        names = ", ".join(r.proposal.short if r.proposal is not None else r.ref for r in failed)
        say(f"git-lifeline: {len(failed)} of {len(results)} not {verb.rstrip('e')}ed: {names}", err=True)
        sys.exit(2)


@click.command()
@click.argument("pids", nargs=-1, required=True, metavar="PID...|all")
@line_option
@click.pass_context
def approve(ctx: click.Context, pids: str) -> None:
    """Approve proposals: each becomes an entry of the line. Exit 2 if any of them fails."""
    agents = _agents(ctx)
    _report(agents.approve(list(pids)), "approve", agents)


@click.command()
@click.argument("pids", nargs=-1, required=True, metavar="PID...|all")
@click.option("--why", default="", help="Why it was rejected (kept in the review trail).")
@line_option
@click.pass_context
def reject(ctx: click.Context, pids: str, why: str) -> None:
    """Reject proposals (an approved one cannot be rejected). Exit 2 if any of them fails."""
    _report(_agents(ctx).reject(list(pids), why), "reject")


@click.command()
@click.option("--since", default=None, metavar="WHEN", help="30m, 24h, 7d, 2w, a date or an ISO timestamp.")
@click.option("--json", "as_json", is_flag=True)
@line_option
@click.pass_context
def audit(ctx: click.Context, since: Optional[str], as_json: bool) -> None:
    """Every direct agent write and every decision on a proposal, with who and when."""
    from ..app.agents import Content, audited_fields
    from ..app.text import agent_label, format_ts

    rows = _agents(ctx).audit(since)
    if as_json:
        out = []
        for r, p, counts in ((row.record, row.proposal, row.counts) for row in rows):
            item: JSONObject = {"id": r.id, "type": r.type, "ts": format_ts(r.ts), "by": r.by, "counts": counts}
            item.update(audited_fields(r))
            if p is not None:
                item["proposal"] = {
                    "id": p.id,
                    "ts": format_ts(p.record.ts),
                    "by": p.record.by,
                    "content": p.content.to_doc(),
                }
            out.append(item)
        echo_json(out)
        return
    page(ctx, colour=False)
    if not rows:
        say("no direct agent writes and no review decisions" + (f" since {since}" if since else ""))
        return
    unknown = Content("?", "?", "", "?", "?", (), "?", "?")
    for r, p, counts in ((row.record, row.proposal, row.counts) for row in rows):
        when = format_ts(r.ts)[:19].replace("T", " ")
        if r.type == "direct":
            say(
                f"{when}  direct     entry {short(r.entry or '')}  {r.kind}: {r.summary}  "
                f"— {agent_label(r.agent or '', r.provider or '', r.model or '')} for {r.by}, rule {r.rule}"
            )
            continue
        c = p.content if p is not None else unknown
        pid = short(r.proposal or "")
        target = f" -> entry {short(r.entry)}" if r.entry else ""
        why = f": {r.why}" if r.why else ""
        note = "" if counts else "  (overruled: an approval of the same proposal wins)"
        say(
            f"{when}  {r.type:<9}  proposal {pid}{target}  {c.kind}: {c.summary}  "
            f"— proposed by {_who(c)}; {r.type} by {r.by}{why}{note}"
        )


@click.command()
@click.option("--init", "init_", is_flag=True, help="Write a starter .lifeline/policy.json (never overwrites).")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="NAME",
    help="With --init: let this agent write checkpoints and notes directly (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the effective policy as JSON.")
@click.pass_context
def policy(ctx: click.Context, init_: bool, agents: tuple[str, ...], as_json: bool) -> None:
    """Show the write policy in effect for agents and where it comes from, or start one.

    The policy is .lifeline/policy.json as committed on a branch a checkout cannot change:
    git config lifeline.policyRef, else origin's default branch, else the local default branch."""
    from ..app.agents import MODES, POLICY_PATH, policy_report
    from ..app.setup import init_policy
    from ..errors import InputError

    if agents and not init_:
        raise InputError("--agent goes with --init")
    ws = open_workspace(ctx)
    if init_:
        path = init_policy(ws, tuple(agents))
        click.echo(f"wrote {path}")
        click.echo(
            f"it applies once committed on the branch the policy is read from (git lifeline policy): "
            f"git add {POLICY_PATH} && git commit -m 'lifeline: write policy'"
        )
        return
    report = policy_report(ws)
    pol = report.policy
    ref = report.ref
    if as_json:
        echo_json(
            {
                "source": pol.source,
                "builtin": pol.builtin,
                "ref": ref.ref if ref else None,
                "commit": ref.commit if ref else None,
                "chosen_by": ref.why if ref else None,
                "notes": report.notes,
                **pol.to_dict(),
            }
        )
        return
    # through say_line(): the ref is origin's default branch, named by the remote
    say_line(f"policy in effect: {pol.source}")
    if ref is not None:
        say_line(f"  read from: {ref.ref} at {short(ref.commit)} ({ref.why}); a checkout does not change it")
    say_line(f"  default: {pol.default}")
    for kind, mode in sorted(pol.kinds.items()):
        say_line(f"  kinds.{kind}: {mode}")
    for agent, rules in sorted(pol.agents.items()):
        for kind, mode in sorted(rules.items()):
            say_line(f"  agents.{agent}.{kind}: {mode}")
    say_line(
        f"modes: {', '.join(MODES)}; precedence: agents.<agent>.<kind> > agents.<agent>.* > kinds.<kind> > default"
    )
    for note in report.notes:
        say_line(f"note: {note}", err=True)


# ---- an agent writing through the command line: the MCP door's policy --------------------------
def _echo_agent_write(out: AgentWrite, as_json: bool) -> None:
    e = out.entry
    pid = out.proposal.short if out.proposal is not None else ""
    if as_json:
        echo_json(
            {
                "entry": entry_dict(e),
                "written": out.written,
                "mode": out.mode,
                "rule": out.rule or None,
                "already": out.already,
                "proposal": out.proposal.id if out.proposal is not None else None,
            }
        )
    elif out.mode == "unchanged":
        click.echo(f"unchanged: the live checkpoint {e.short} already says this; nothing written")
    elif out.already == "ledger":
        click.echo(f"already recorded {e.short} (same content); nothing written")
    elif out.mode == "propose" and out.already == "pending":
        click.echo(f"already proposed: proposal {pid} waits for review with exactly this content; nothing filed again")
    elif out.mode == "propose":
        click.echo(
            f"proposal {pid} filed ({e.kind}: {visible(e.summary)}): policy {out.rule} = propose for agent {e.agent}"
        )
        click.echo(f"it enters the line when approved: git lifeline approve {pid}")
    else:
        click.echo(
            f"recorded {e.short} {e.kind}: {visible(e.summary)} (agent {visible(e.agent)}: policy {out.rule} = direct, "
            f"audited as {out.audit.short if out.audit is not None else '-'})"
        )


def agent_log(ctx: click.Context, draft: Draft, as_json: bool) -> None:
    """`log --agent NAME`: the write goes through the write policy, as it would over MCP."""
    _echo_agent_write(_agents(ctx).write(draft, via="cli"), as_json)


def agent_checkpoint(ctx: click.Context, draft: CheckpointDraft) -> None:
    """`checkpoint --agent NAME`: routed by the write policy, as over MCP."""
    _echo_agent_write(_agents(ctx).checkpoint(draft, "cli"), False)
