"""CLI face of the agent's door: propose, review, approve, reject, audit, policy, mcp.

Registered on `cli.main` (cli.py imports this module at its end). Imports stay inside
the functions: `git lifeline` must start fast, and only `mcp` needs the MCP SDK.
"""

from __future__ import annotations

import sys

import click

from .main import _echo_json, _ledger, entry_fields, entry_options, main


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _who(content: dict) -> str:
    agent, provider, model = content["agent"], content["provider"], content["model"]
    if agent == "human" and provider == "none":
        return content["author"].split(" <", 1)[0]
    return f"{agent} ({provider}/{model})"


def _proposal_json(p) -> dict:
    d = p.decision
    return {"id": p.id, "status": p.status, "ts": p.record.doc["ts"], "by": p.record.by,
            "via": p.record.doc["via"], "content": p.content,
            "decision": None if d is None else {"type": d.type, "id": d.id, "by": d.by, "ts": d.doc["ts"],
                                                "entry": d.get("entry"), "why": d.get("why")},
            "conflicts": [{"type": c.type, "id": c.id, "by": c.by, "ts": c.doc["ts"]} for c in p.conflicts]}


@main.command()
@entry_options
@click.option("--thread", default=None, help="Record into a thread once approved (chains to its head now).")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal as JSON.")
@click.pass_context
def propose(ctx, kind, summary, body, body_file, parents, thread, author, agent, provider, model, as_json):
    """File a proposal: the entry waits in the review trail until someone approves it."""
    fields = entry_fields(kind, summary, body, body_file, parents, author, agent, provider, model)
    led = _ledger(ctx)
    rec = led.propose(fields, thread=thread, via="cli")
    if as_json:
        _echo_json({"proposal": rec.id, "content": rec.doc["content"], "ts": rec.doc["ts"]})
        return
    click.echo(f"proposal {rec.short} filed ({kind}: {rec.doc['content']['summary']})")
    click.echo(f"approve it with: git lifeline approve {rec.short}")


@main.command()
@click.option("--all", "everything", is_flag=True, help="Every proposal with its status, not only pending ones.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def review(ctx, everything, as_json):
    """List the proposals waiting for a human (oldest first)."""
    led = _ledger(ctx)
    props = led.proposals(everything=everything)
    if as_json:
        _echo_json([_proposal_json(p) for p in props])
        return
    _other_lines_hint(led)
    if not props:
        click.echo(f"no pending proposals in line {led.line}" if not everything else f"no proposals in line {led.line}")
        return
    pending = sum(1 for p in props if p.status == "pending")
    click.echo(f"{pending} pending proposal(s) in line {led.line}:" if not everything
               else f"{len(props)} proposal(s) in line {led.line} ({pending} pending):")
    for p in props:
        c = p.content
        status = "" if p.status == "pending" else f"  [{p.status}]"
        click.echo(f"\n  {p.short}  {c['kind']}: {c['summary']}{status}")
        click.echo(f"            by {_who(c)}, {p.record.doc['ts'][:16].replace('T', ' ')} via {p.record.doc['via']}")
        why = _one_line(c["body"], 160)
        if why:
            click.echo(f"            why: {why}")
        if c["parents"]:
            click.echo(f"            parents: {', '.join(x[:12] for x in c['parents'])}")
        for conflict in p.conflicts:
            click.echo(f"            conflict: also {conflict.type} by {conflict.by} (merged from another clone)")
    if pending:
        click.echo("\napprove: git lifeline approve <id|all>    reject: git lifeline reject <id|all> --why TEXT")


def _other_lines_hint(led) -> None:
    """Agents may write to any line (the MCP `line` argument): say where else work waits."""
    from ..app.service import Ledger
    from ..git.review import list_trails
    waiting = []
    for name in list_trails(led.gr):
        if name != led.line:
            count = len(Ledger(led.gr, name).proposals())
            if count:
                waiting.append(f"{name} ({count})")
    if waiting:
        click.echo(f"also pending in other lines: {', '.join(waiting)} — git lifeline --line NAME review", err=True)


def _report(results: list, verb: str) -> None:
    failed = [r for r in results if not r.ok]
    for r in results:
        if r.ok and r.status == "approved":
            click.echo(f"approved {r.proposal.short} -> entry {r.entry.short} "
                       f"{r.entry.kind}: {r.entry.summary}")
        elif r.ok and r.status == "duplicate":
            click.echo(f"duplicate {r.proposal.short}: entry {r.entry.short} was already in the line; "
                       "closed as duplicate")
        elif r.ok:
            click.echo(f"rejected {r.proposal.short} {r.proposal.content['kind']}: {r.proposal.content['summary']}")
        else:
            click.echo(f"git-lifeline: {r.status}", err=True)
    if not results:
        click.echo(f"nothing to {verb}: no pending proposals")
    if failed:
        names = ", ".join(r.proposal.short if r.proposal is not None else r.ref for r in failed)
        click.echo(f"git-lifeline: {len(failed)} of {len(results)} not {verb.rstrip('e')}ed: {names}", err=True)
        sys.exit(2)


@main.command()
@click.argument("pids", nargs=-1, required=True, metavar="PID...|all")
@click.pass_context
def approve(ctx, pids):
    """Approve proposals: each becomes an entry of the line. Exit 2 if any of them fails."""
    _report(_ledger(ctx).approve(list(pids)), "approve")


@main.command()
@click.argument("pids", nargs=-1, required=True, metavar="PID...|all")
@click.option("--why", default="", help="Why it was rejected (kept in the review trail).")
@click.pass_context
def reject(ctx, pids, why):
    """Reject proposals (an approved one cannot be rejected). Exit 2 if any of them fails."""
    _report(_ledger(ctx).reject(list(pids), why), "reject")


@main.command()
@click.option("--since", default=None, metavar="WHEN", help="30m, 24h, 7d, 2w, a date or an ISO timestamp.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def audit(ctx, since, as_json):
    """Every direct agent write and every decision on a proposal, with who and when."""
    led = _ledger(ctx)
    rows = led.audit(since)
    if as_json:
        out = []
        for r, p, counts in rows:
            item = {"id": r.id, "type": r.type, "ts": r.doc["ts"], "by": r.by, "counts": counts}
            for key in ("entry", "why", "rule", "via", "kind", "summary", "agent", "provider", "model"):
                if key in r.doc:
                    item[key] = r.doc[key]
            if p is not None:
                item["proposal"] = {"id": p.id, "ts": p.record.doc["ts"], "by": p.record.by,
                                    "content": p.content}
            out.append(item)
        _echo_json(out)
        return
    if not rows:
        click.echo("no direct agent writes and no review decisions" + (f" since {since}" if since else ""))
        return
    for r, p, counts in rows:
        when = r.doc["ts"][:19].replace("T", " ")
        if r.type == "direct":
            d = r.doc
            click.echo(f"{when}  direct     entry {d['entry'][:8]}  {d['kind']}: {d['summary']}  "
                       f"— {d['agent']} ({d['provider']}/{d['model']}) for {r.by}, rule {d['rule']}")
            continue
        c = p.content if p is not None else {"kind": "?", "summary": "?", "agent": "?", "provider": "?",
                                             "model": "?", "author": "?"}
        pid = r.doc["proposal"][:8]
        target = f" -> entry {r.doc['entry'][:8]}" if r.doc.get("entry") else ""
        why = f": {r.doc['why']}" if r.doc.get("why") else ""
        note = "" if counts else "  (overruled: an approval of the same proposal wins)"
        click.echo(f"{when}  {r.type:<9}  proposal {pid}{target}  {c['kind']}: {c['summary']}  "
                   f"— proposed by {_who(c)}; {r.type} by {r.by}{why}{note}")


@main.command()
@click.option("--init", "init_", is_flag=True, help="Write a starter .lifeline/policy.json (never overwrites).")
@click.option("--agent", "agents", multiple=True, metavar="NAME",
              help="With --init: let this agent write checkpoints and notes directly (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the effective policy as JSON.")
@click.pass_context
def policy(ctx, init_, agents, as_json):
    """Show the write policy in effect for agents (HEAD's .lifeline/policy.json), or start one."""
    from ..core.policy import MODES, POLICY_PATH, inspect_policy, parse_policy, render_policy, starter_policy
    from ..errors import InputError
    from ..git.repo import open_repo
    gr = open_repo()
    if agents and not init_:
        raise InputError("--agent goes with --init")
    if init_:
        if gr.workdir is None:
            raise InputError("a bare repository has no work tree to write .lifeline/policy.json into")
        path = gr.workdir / POLICY_PATH
        if path.exists():
            raise InputError(f"{path} already exists; edit it instead (nothing was written)")
        from ..app.integration import write_shared_file
        write_shared_file(path, render_policy(starter_policy(tuple(agents))))
        click.echo(f"wrote {path}")
        click.echo(f"it applies once committed: git add {POLICY_PATH} && git commit -m 'lifeline: write policy'")
        return
    info = inspect_policy(gr)
    pol = info.policy
    if as_json:
        _echo_json({"source": pol.source, "builtin": pol.builtin, **pol.to_dict()})
        return
    click.echo(f"policy in effect: {pol.source}")
    click.echo(f"  default: {pol.default}")
    for kind, mode in sorted(pol.kinds.items()):
        click.echo(f"  kinds.{kind}: {mode}")
    for agent, rules in sorted(pol.agents.items()):
        for kind, mode in sorted(rules.items()):
            click.echo(f"  agents.{agent}.{kind}: {mode}")
    click.echo(f"modes: {', '.join(MODES)}; precedence: agents.<agent>.<kind> > agents.<agent>.* > "
               "kinds.<kind> > default")
    if info.worktree_differs:
        note = "differs from HEAD's and applies only once committed"
        try:
            parse_policy(info.worktree_text, f"{POLICY_PATH} (work tree)")
        except InputError as exc:
            note += f"; as it stands it is invalid: {exc}"
        click.echo(f"note: {POLICY_PATH} in the work tree {note}", err=True)


@main.command()
@click.option("--line", "line", metavar="NAME", default=None,
              help="The line served by default (every tool also takes a `line` argument).")
@click.option("--repo", type=click.Path(file_okay=False), default=None,
              help="The repository (default: the one containing the working directory).")
@click.pass_context
def mcp(ctx, line, repo):
    """Run the MCP server on stdio, for AI agents (needs the [mcp] extra)."""
    from ..mcp.server import serve
    serve(repo, line or ctx.obj.get("line"))


def print_mcp_setup(led) -> None:
    """What `git lifeline init` says about MCP: .mcp.json for Claude Code, snippets for the rest."""
    from ..app.integration import snippets
    status, detail = led.install_mcp_config()
    if status in ("created", "added"):
        click.echo(f"mcp: {status} {detail} (server 'lifeline': git lifeline mcp) — Claude Code picks it up here")
    else:
        click.echo(f"mcp: {detail}")
    if led.gr.workdir is None:
        return
    import json
    click.echo("other MCP clients: add under \"mcpServers\" (details in docs/INTEGRATION.md):")
    for client, where, entry in snippets(led.gr.workdir):
        click.echo(f"  {client}, {where}:")
        click.echo(f"    \"lifeline\": {json.dumps(entry, ensure_ascii=False)}")
