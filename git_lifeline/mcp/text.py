"""What the MCP door says to the agent: each tool's answer as text, and as data where the
answer is data (an entry, a list of proposals, a write's outcome). Presentation only: every
fact comes from app/.

Some clients hand the model only the structured part of a result when there is one, so each
structured answer carries its text too (`text`), and the call's warnings (`warnings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..app.text import (
    JSON,
    TRUST_WORDS,
    JSONObject,
    abbrev,
    fence_for,
    format_ts,
    md,
    one_line,
    trust_tag,
    waiting_tier,
    who,
)
from ..errors import InputError

if TYPE_CHECKING:  # annotations only
    from ..app.agents import Agents, AgentWrite
    from ..app.entry_view import EntryView, Link, Related
    from ..app.ledger import Ledger
    from ..app.recall import Found

PENDING_SHOWN = 20


def needs_scope(tool: str, missing: str, resource: bool = False) -> str:
    """What a token without the scope `tool` needs is told: by the tool's MCP error, the
    resource's, and the HTTP 403 of the scope challenge (http_scope.py) alike."""
    if resource:
        return f"reading the context needs the scope {missing}, which this token does not have"
    return f"{tool} needs the scope {missing}, which this token does not have; nothing was done"


def write_message(out: AgentWrite, replaced: Optional[str] = None) -> str:
    e = out.entry
    pid = out.proposal.short if out.proposal is not None else ""
    if out.mode == "unchanged":
        return (
            f"unchanged: the live checkpoint {abbrev(e.id)} of this thread already says exactly this; nothing recorded"
        )
    if out.already == "ledger":
        return f"already in the ledger: {e.kind} {abbrev(e.id)} has exactly this content and parents; nothing written"
    if out.mode == "propose":
        if out.already == "pending":
            return (
                f"already proposed: proposal {pid} ({e.kind}: {md(e.summary)}) waits for a human with exactly this "
                "content; nothing filed again (lifeline_pending lists what waits)."
            )
        extra = f" It supersedes {abbrev(e.parents[0])} once approved." if e.kind == "correction" and e.parents else ""
        return (
            f"proposal {pid} filed ({e.kind}: {md(e.summary)}). It enters the ledger when a human approves it "
            f"(git lifeline review; git lifeline approve {pid}).{extra} Policy: {out.rule} = propose."
        )
    text = (
        f"{e.kind} recorded directly: id={abbrev(e.id)} (policy: {out.rule} = direct; audited in the review "
        f"trail as {out.audit.short if out.audit is not None else '-'})."
    )
    if e.kind == "correction" and e.parents:
        text += f" It supersedes {', '.join(abbrev(p) for p in e.parents)}."
    if replaced:
        text += f" It replaces checkpoint {abbrev(replaced)} as where work stopped on this thread."
    return text


def write_data(out: AgentWrite, text: str) -> JSONObject:
    proposal = out.proposal.id if out.proposal is not None else None
    return {
        "mode": out.mode,
        "written": out.written,
        "already": out.already,
        "id": out.entry.id,
        "kind": out.entry.kind,
        "proposal": proposal,
        "rule": out.rule or None,
        "text": text,
    }


def resume_text(ledger: Ledger, thread: str) -> str:
    cps = ledger.resume(thread or None)
    if not cps:
        return (
            "No checkpoint recorded yet: nothing to resume. When you stop, record where you are with "
            "lifeline_checkpoint."
        )
    from ..app.provenance import provenance_of

    provenance = provenance_of(ledger)
    lines = ["## Resume (where work stopped)"]
    for cp in cps:
        name = ledger.thread_name(cp.thread)
        lines.append(
            f"- **{md(name)}** `[{cp.entry.short}]`{trust_tag(provenance.tier(cp.entry))} — {who(cp.entry)}, {cp.entry.ts:%Y-%m-%d %H:%M}: "
            f"{md(cp.entry.summary)}"
        )
        for section, items in cp.sections.items():
            lines.extend(f"  - {section}: {md(one_line(item))}" for item in items)
    return "\n".join(lines) + "\n"


def recall_answer(ledger: Ledger, query: str, k: int) -> tuple[str, JSONObject]:
    """lifeline_recall's text and structured content (app/recall_json.py's answer_json; its schema is
    mcp/recall_schema.py). An abstention's nearest entries are listed as not answering."""
    from ..app.recall import ask, strength_words
    from ..app.recall_json import HitJSON, answer_json, hit_json

    if k < 1:
        raise InputError("k must be at least 1")
    recalled = ask(ledger, query, k)
    data = answer_json(recalled, ledger.recall_mode).as_json()

    def row(f: Found, hit: HitJSON) -> str:
        mark = "" if f.in_force else f" [{f.status.upper()}]"
        similarity = f", similarity={hit.similarity:.2f}" if hit.similarity is not None else ""
        return (
            f"- [{hit.kind}]{mark} {md(f.entry.summary)} (id={abbrev(f.entry.id)}, trust={f.trust}, {strength_words(f)}, "
            f"coverage={hit.coverage:.2f}{similarity})"
        )

    rows = [row(f, hit_json(f)) for f in recalled.hits]
    if recalled.abstained:
        rows = [f"Nothing in the ledger answers that (recall abstained: {md(recalled.reason)})."]
        if recalled.nearest:
            rows.append("Nearest entries, which do NOT answer it (do not act on them as decisions):")
            rows += [row(f, hit_json(f)) for f in recalled.nearest]
    text = "\n".join(rows) + "\n"
    return text, {**data, "text": text}


def pending_answer(agents: Agents) -> tuple[str, JSONObject]:
    pending = agents.proposals()
    items: list[JSON] = [
        {
            "proposal": p.id,
            "kind": p.content.kind,
            "summary": p.content.summary,
            "agent": p.content.agent,
            "ts": format_ts(p.record.ts),
            "parents": list(p.content.parents),
            "trust": waiting_tier(p.content.agent),
        }
        for p in pending
    ]
    if not items:
        text = (
            f"No proposal waits for review in line {agents.line}. What you propose appears here until a "
            "human approves or rejects it."
        )
    else:
        rows = [
            f"- `[{p.short}]`{trust_tag(waiting_tier(p.content.agent))} {p.content.kind}: "
            f"{md(one_line(p.content.summary))} — by "
            f"{md(p.content.agent)}, {format_ts(p.record.ts)[:16].replace('T', ' ')}"
            for p in pending[:PENDING_SHOWN]
        ]
        more = (
            [f"- … and {len(pending) - PENDING_SHOWN} more (git lifeline review)"]
            if len(pending) > PENDING_SHOWN
            else []
        )
        text = (
            f"{len(pending)} proposal(s) wait for a human in line {agents.line} (they enter the ledger when "
            "approved: git lifeline approve <id>). Do not file them again.\n" + "\n".join(rows + more) + "\n"
        )
    return text, {"line": agents.line, "pending": items, "text": text}


def _entry_row(r: Related | Link, note: str = "") -> str:
    if r.entry is None:
        return f"`[{abbrev(r.id)}]` (not in this line)"
    return f"`[{abbrev(r.id)}]` {r.entry.kind}: {md(one_line(r.entry.summary))}" + note


def show_answer(view: EntryView) -> tuple[str, JSONObject]:
    e = view.entry
    lines = [
        f"## {e.kind} `[{abbrev(e.id)}]` {md(one_line(e.summary))}",
        f"- id: {e.id}",
        f"- recorded: {e.ts:%Y-%m-%d %H:%M} UTC by {who(e)}",
        f"- status: {view.status}",
        f"- trust: {TRUST_WORDS[view.trust]}",
    ]
    if view.parents:
        lines.append(
            "- parents: " + "; ".join(_entry_row(r, f" ({r.status})" if r.replaced else "") for r in view.parents)
        )
    if view.supersedes:
        verb = "withdraws" if view.revert else "supersedes"
        lines.append(
            f"- {verb}: "
            + "; ".join(
                _entry_row(x, "" if x.acts else " (no longer: this correction was reverted)") for x in view.supersedes
            )
        )
    if view.superseded_by:
        lines.append(
            "- superseded by: "
            + "; ".join(
                _entry_row(x, "" if x.acts else " (itself reverted: it does not act)") for x in view.superseded_by
            )
        )
    for again in view.reaffirmed_by:
        lines.append(
            f"- re-affirmed: {format_ts(again.ts)} by {md(one_line(again.author))} `[{abbrev(again.id)}]`"
            f" {md(one_line(again.summary))}"
        )
    # The body is fenced, as in LIFELINE.md: raw, a body line like '- status: a decision in
    # force' or 'warning: ...' would pass for this answer's own lines.
    body = e.body.strip()
    fence = fence_for(body)
    text = "\n".join(lines) + (f"\n\n### Why\n{fence}text\n{body}\n{fence}\n" if body else "\n\n(no body)\n")

    def row(r: Related | Link, acting: bool) -> JSON:
        kind, summary = (r.entry.kind, r.entry.summary) if r.entry is not None else (None, None)
        return {"id": r.id, "kind": kind, "summary": summary, "acting": acting}

    parents = [row(r, not r.replaced) for r in view.parents]

    data: JSONObject = {
        "id": e.id,
        "kind": e.kind,
        "summary": e.summary,
        "body": e.body,
        "ts": format_ts(e.ts),
        "author": e.author,
        "agent": e.agent,
        "provider": e.provider,
        "model": e.model,
        "status": view.status,
        "trust": view.trust,
        "parents": parents,
        "supersedes": [row(x, x.acts) for x in view.supersedes],
        "superseded_by": [row(x, x.acts) for x in view.superseded_by],
        "superseded": view.replaced,
        "reaffirmed_by": [{"id": x.id, "ts": format_ts(x.ts), "author": x.author} for x in view.reaffirmed_by],
        "decision_in_force": True if view.status == "in force" else (False if e.kind == "decision" else None),
        "text": text,
    }
    return text, data


def with_warnings(text: str, warnings: list[str]) -> str:
    """`text` followed by one `warning:` line per warning."""
    lines = [text] if text else []
    lines.extend(f"warning: {w}" for w in warnings)
    return "\n".join(lines)
