"""The agents' door to a line: writes routed by the write policy, and the human review.

An agent's write is planned exactly like a human's (Ledger.plan_*: the same validation,
parents, thread and checkpoint rules), then the project's policy decides where it goes:
written with an audit record, filed as a proposal, or refused. The policy's rules:
core/policy.py; the ref it is read from, which a checkout cannot move: git/policy_ref.py;
review trail: git/trails.py and git/records.py; formats: docs/FORMAT.md, "Review trail".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from ..core.entry import KINDS, entry_order_key
from ..core.policy import MAX_POLICY_BYTES, MODES, POLICY_PATH, Policy, PolicyDenied, PolicyError, parse_policy
from ..errors import InputError, LifelineError
from ..git.namespaces import REVIEW
from ..git.policy_ref import CONFIG_KEY as POLICY_REF_KEY
from ..git.policy_ref import PolicyRef, find_policy_ref, read_file_at
from ..git.records import (
    DECISIONS,
    MAX_WHY_CHARS,
    Content,
    Proposal,
    Record,
    ReviewError,
    already_decided,
    build_proposals,
    entry_content,
    parse_since,
)
from ..git.repo import GitRepo
from ..git.trails import ReviewTrail
from .draft import CheckpointDraft, Draft
from .ledger import Ledger
from .workspace import Workspace

if TYPE_CHECKING:
    from ..core.entry import Entry

# Handed to the faces, which may import only app/ (tests/test_layers.py): what cli/review.py and mcp/schema.py show of a proposal and the policy.
__all__ = ["Content", "KINDS", "MODES", "POLICY_PATH", "Proposal"]


@dataclass
class AgentWrite:
    """What became of an agent's write."""

    mode: str  # direct | propose | unchanged (a checkpoint that says nothing new)
    rule: str  # the policy rule that decided ("" when unchanged)
    entry: Entry  # the entry written, found, or proposed
    written: bool  # True only when the line grew
    proposal: Optional[Record] = None  # review record of the proposal (mode propose)
    audit: Optional[Record] = None  # review record of the direct write (mode direct, written)
    replaced: Optional[str] = None  # the checkpoint a direct checkpoint replaced as where work stopped
    already: Optional[str] = None  # "pending": the same proposal waits already; "ledger": the line has it


@dataclass
class ParentEffect:
    """What a proposal does to one entry it names, shown before a human approves it."""

    id: str  # the parent as named (full id when it resolves)
    kind: str  # "" when the line does not hold it
    summary: str
    effect: str  # withdraws | replaces | builds on | (not in this line)


def proposal_why(content: Content) -> str:
    """A proposal's why without its header lines (`action: revert` is shown as what it
    does to each parent, never in place of the reasons)."""
    from ..core.blocks import strip_header

    return strip_header(content.body)


def parent_effects(led: Ledger, content: Content) -> list[ParentEffect]:
    """For every parent of a proposal: its kind, summary and what approving does to it (a
    correction with `action: revert` withdraws it, another correction replaces it)."""
    from ..core.truth import is_revert

    effect = "builds on"
    if content.kind == "correction":
        effect = "withdraws" if is_revert(content.body) else "replaces"
    out = []
    for pid in content.parents:
        e = led.store.read(pid) if len(pid) == 64 else None
        if e is None:
            out.append(ParentEffect(pid, "", "", "(not in this line)"))
        else:
            out.append(ParentEffect(e.id, e.kind, e.summary, effect))
    return out


@dataclass
class ReviewOutcome:
    """One proposal's result in an approve/reject batch."""

    ref: str  # what the user typed (or the short pid for `all`)
    proposal: Optional[Proposal]  # None when the ref did not resolve
    ok: bool
    status: str  # approved | duplicate | rejected, or the failure message
    entry: Optional[Entry] = None  # the entry an approval sealed (or found)
    failure: Optional[LifelineError] = None  # why it failed (its message line by line)

    @classmethod
    def failed(cls, ref: str, proposal: Optional[Proposal], failure: LifelineError) -> ReviewOutcome:
        return cls(ref, proposal, False, str(failure), failure=failure)


@dataclass
class AuditRow:
    """A direct agent write or a decision on a proposal."""

    record: Record  # the review record
    proposal: Optional[Proposal]  # the proposal it decides (None for a direct write)
    counts: bool  # False for a decision overruled by another on the same proposal


def audited_fields(r: Record) -> dict[str, str]:
    """What a record of the audit says beyond its id, type, ts and by (the fields its type has)."""
    values = {
        "entry": r.entry,
        "why": r.why,
        "rule": r.rule,
        "via": r.via,
        "kind": r.kind,
        "summary": r.summary,
        "agent": r.agent,
        "provider": r.provider,
        "model": r.model,
    }
    return {key: value for key, value in values.items() if value is not None}


@dataclass
class PolicyReport:
    policy: Policy
    ref: Optional[PolicyRef]  # the trusted ref the policy is read from (None: built-in, none found)
    notes: list[str]  # copies of the file that differ from it and do not apply, and why


# ---- the write policy (.lifeline/policy.json on a trusted ref) ------------------------
def _short_ref(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"policy {source}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def _trusted_policy(gr: GitRepo) -> tuple[Optional[str], str, Optional[PolicyRef]]:
    """(the policy file's text on the trusted ref or None, where the policy comes from, the PolicyRef)."""
    ref = find_policy_ref(gr)
    if ref is None:
        return (
            None,
            (
                "built-in default (no default branch to read the policy from; "
                f"set it with git config {POLICY_REF_KEY} <branch>)"
            ),
            None,
        )
    source = f"{_short_ref(ref.ref)}:{POLICY_PATH}"
    try:
        data = read_file_at(gr, ref.commit, POLICY_PATH)
    except IsADirectoryError:
        raise PolicyError(f"policy {source}: is not a file") from None
    if data is None:
        return None, f"built-in default (no {POLICY_PATH} on {_short_ref(ref.ref)}, {ref.why})", ref
    return _decode(data, source), source, ref


def policy_in_effect(gr: GitRepo) -> Policy:
    """The policy committed on the trusted ref (git/policy_ref.py), else the built-in one.
    Neither the work tree's copy nor the checked-out branch's counts: an agent that edits the
    file, or a branch that carries another one, changes no one's rights until the change is
    on the branch the team trusts."""
    text, source, _ref = _trusted_policy(gr)
    return Policy(source=source) if text is None else parse_policy(text, source)


def _worktree_policy(gr: GitRepo) -> Optional[str]:
    """The work tree's copy, for a note only: never through a symbolic link, never unbounded."""
    if gr.workdir is None:
        return None
    path = gr.workdir / POLICY_PATH
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_POLICY_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def policy_report(ws: Workspace) -> PolicyReport:
    """The policy in effect, where it comes from, and the copies that differ and do not apply
    (the checked-out branch's, the work tree's)."""
    gr = ws.gr
    trusted, _source, ref = _trusted_policy(gr)
    policy = policy_in_effect(gr)
    where = _short_ref(ref.ref) if ref is not None else "a trusted branch"
    notes = []
    head_text: Optional[str] = None
    head = gr.resolve_commit("HEAD")
    if head is not None and (ref is None or head != ref.commit):
        try:
            data = read_file_at(gr, head, POLICY_PATH)
            head_text = _decode(data, f"HEAD:{POLICY_PATH}") if data is not None else None
        except (IsADirectoryError, InputError):
            head_text = None
        if head_text is not None and ref is None:
            notes.append(
                f"HEAD's {POLICY_PATH} does not apply: no trusted branch was found to read the policy "
                f"from (git config {POLICY_REF_KEY} <branch> names one)"
            )
        elif head_text is not None and head_text != trusted:
            notes.append(
                f"HEAD's {POLICY_PATH} differs from {where}'s and does not apply: the policy is read "
                f"from {where} whatever branch is checked out"
            )
    else:
        head_text = trusted
    worktree = _worktree_policy(gr)
    if worktree is not None and worktree != trusted and worktree != head_text:
        note = f"{POLICY_PATH} in the work tree differs from {where}'s and applies only once committed on {where}"
        try:
            parse_policy(worktree, f"{POLICY_PATH} (work tree)")
        except InputError as exc:
            note += f"; as it stands it is invalid: {exc}"
        notes.append(note)
    return PolicyReport(policy, ref, notes)


def pending_elsewhere(ws: Workspace, line: str) -> list[tuple[str, int]]:
    """(line, pending proposals) for every other line with work waiting for review."""
    out = []
    for name in REVIEW.names(ws.gr):
        if name != line:
            count = len(Agents(ws.ledger(name)).proposals())
            if count:
                out.append((name, count))
    return out


# decide(trail, proposal, by) -> (status, the entry an approval sealed or found)
Decide = Callable[[ReviewTrail, Proposal, str], "tuple[str, Optional[Entry]]"]


class Agents:
    """One line's agents' door."""

    def __init__(self, led: Ledger):
        self.led = led
        self.gr = led.gr
        self.line = led.line

    def trail(self) -> ReviewTrail:
        return ReviewTrail(self.gr, self.line)

    def policy(self) -> Policy:
        return policy_in_effect(self.gr)

    # ---- writes ------------------------------------------------------------------
    def write(self, draft: Draft, via: str = "mcp", propose_only: bool = False) -> AgentWrite:
        """An agent's append, routed by the policy (direct | propose | deny); `propose_only`
        (a caller whose token may only propose) turns a direct write into a proposal."""
        return self.route(self.led.plan_entry(draft), via, propose_only)

    def checkpoint(self, draft: CheckpointDraft, via: str = "mcp", propose_only: bool = False) -> AgentWrite:
        """An agent's checkpoint: an unchanged one writes nothing; the rest are routed by the policy."""
        from ..core import blocks

        previous = {c.thread: c.entry.id for c in self.led.resume()}
        planned = self.led.plan_checkpoint(draft)
        if not planned.new:
            return AgentWrite("unchanged", "", planned.entry, written=False)
        out = self.route(planned.entry, via, propose_only)
        if out.mode == "direct" and out.written:
            thread_key = blocks.field(out.entry.body, "thread")
            out.replaced = previous.get(thread_key) if thread_key is not None else None
        return out

    def route(self, entry: Entry, via: str, propose_only: bool = False) -> AgentWrite:
        if entry.agent == "human":
            raise InputError(
                "agent 'human' is kept for people writing without an agent name; pass your agent's "
                "name (e.g. claude-code) as agent"
            )
        policy = self.policy()
        decision = policy.decide(entry.agent, entry.kind)
        if decision.mode == "deny":
            raise PolicyDenied(
                f"denied by policy: agent {entry.agent!r} may not write kind {entry.kind!r} "
                f"(rule {decision.rule} in {policy.source}); nothing was written"
            )
        if decision.mode == "propose":
            return self._propose_once(entry, decision.rule, via)
        if propose_only:
            return self._propose_once(entry, f"{decision.rule} (direct, but this caller may only propose)", via)
        result = self.led.append([entry])
        if not result.added:
            return AgentWrite("direct", decision.rule, result.existing[0], written=False, already="ledger")
        audit = self.trail().record_direct(entry, decision.rule, by=self.led.default_author(), via=via)
        return AgentWrite("direct", decision.rule, entry, written=True, audit=audit)

    def _propose_once(self, entry: Entry, rule: str, via: str) -> AgentWrite:
        """File a proposal, unless the line already holds the entry or the same proposal waits
        (an agent that retries, or two sessions that agree, file nothing twice)."""
        stored = self.led.store.read(entry.id)
        if stored is not None:
            return AgentWrite("propose", rule, stored, written=False, already="ledger")
        trail = self.trail()
        with trail.write_lock():  # deciders one at a time: an approval writes the ledger, then the trail
            waiting = self.pending_like(entry)
            if waiting is not None:
                return AgentWrite("propose", rule, entry, written=False, proposal=waiting.record, already="pending")
            rec = trail.propose(entry, by=self.led.default_author(), via=via)
        return AgentWrite("propose", rule, entry, written=False, proposal=rec)

    def pending_like(self, entry: Entry) -> Optional[Proposal]:
        """The pending proposal whose content is exactly this entry's, if one waits."""
        content = entry_content(entry)
        return next((p for p in self.proposals() if p.content == content), None)

    def propose(self, draft: Draft, via: str = "cli") -> Record:
        """File a proposal explicitly (whatever the policy says); returns its review record."""
        entry = self.led.plan_entry(draft)
        return self.trail().propose(entry, by=self.led.default_author(), via=via)

    # ---- review --------------------------------------------------------------------
    def proposals(self, everything: bool = False) -> list[Proposal]:
        """Pending proposals (or all of them), oldest first."""
        props = self.trail().proposals().values()
        return sorted(
            (p for p in props if everything or p.status == "pending"), key=lambda p: entry_order_key(p.record)
        )

    def _targets(
        self, trail: ReviewTrail, refs: list[str], props: dict[str, Proposal]
    ) -> list[tuple[str, Optional[Proposal], Optional[ReviewError]]]:
        """(ref, Proposal or None, ReviewError or None) for each requested pid; `all` = every pending one."""
        refs = [r.strip() for r in refs if r.strip()]
        if not refs:
            raise InputError("name at least one proposal id, or all")
        if "all" in refs:
            if len(refs) > 1:
                raise InputError("give proposal ids or all, not both")
            pending = sorted(
                (p for p in props.values() if p.status == "pending"), key=lambda p: entry_order_key(p.record)
            )
            return [(p.short, p, None) for p in pending]
        out: list[tuple[str, Optional[Proposal], Optional[ReviewError]]] = []
        seen = set()
        for ref in refs:
            try:
                p = trail.resolve(ref, props)
            except ReviewError as exc:
                out.append((ref, None, exc))
                continue
            if p.id not in seen:
                seen.add(p.id)
                out.append((ref, p, None))
        return out

    def _decide_each(self, refs: list[str], decide: Decide) -> list[ReviewOutcome]:
        """Run `decide(trail, proposal, by) -> (status, entry)` on each targeted pending
        proposal, under the trail's lock. Each is independent: a failure is reported
        for that proposal and the others go on."""
        trail = self.trail()
        by = self.led.default_author()
        results = []
        with trail.write_lock():  # deciders one at a time: an approval writes the ledger, then the trail
            props = trail.proposals()
            for ref, p, error in self._targets(trail, refs, props):
                if p is None:
                    assert error is not None, "a ref that names no proposal carries why"
                    results.append(ReviewOutcome.failed(ref, None, error))
                elif p.decision is not None:
                    results.append(ReviewOutcome.failed(ref, p, ReviewError(already_decided(p))))
                else:
                    try:
                        status, entry = decide(trail, p, by)
                    except LifelineError as exc:
                        results.append(ReviewOutcome.failed(ref, p, exc))
                    else:
                        results.append(ReviewOutcome(ref, p, True, status, entry=entry))
        return results

    def approve(self, refs: list[str]) -> list[ReviewOutcome]:
        """Seal proposals into the line. Each is independent: one failure does not stop the others."""

        def seal(trail: ReviewTrail, p: Proposal, by: str) -> tuple[str, Optional[Entry]]:
            c = p.content
            try:
                entry = self.led.plan_entry(
                    Draft(
                        kind=c.kind,
                        summary=c.summary,
                        body=c.body,
                        parents=c.parents,
                        author=c.author,
                        agent=c.agent,
                        provider=c.provider,
                        model=c.model,
                    )
                )
                result = self.led.append([entry])
                stored = (result.added or result.existing)[0]
                status = "approved" if result.added else "duplicate"
                trail.decide(p.id, status, by, entry=stored.id)
            except LifelineError as exc:
                raise LifelineError(*exc.lines_after(f"proposal {p.short} not approved: ")) from None
            return status, stored

        return self._decide_each(refs, seal)

    def reject(self, refs: list[str], why: str = "") -> list[ReviewOutcome]:
        """Close proposals without writing to the line; an approved one can never be rejected."""
        why = (why or "").strip()
        if len(why) > MAX_WHY_CHARS:
            raise InputError(f"--why is longer than {MAX_WHY_CHARS} characters")

        def close(trail: ReviewTrail, p: Proposal, by: str) -> tuple[str, Optional[Entry]]:
            trail.decide(p.id, "rejected", by, why=why)
            return "rejected", None

        return self._decide_each(refs, close)

    def audit(self, since: Optional[str] = None) -> list[AuditRow]:
        """Every direct agent write and every decision on a proposal, oldest first."""
        limit = parse_since(since) if since else None
        records = self.trail().load().records
        props = build_proposals(records)
        out = []
        for r in sorted(records.values(), key=entry_order_key):
            if r.type == "proposed" or (limit is not None and r.ts < limit):
                continue
            p = props.get(r.proposal) if r.type in DECISIONS and r.proposal is not None else None
            out.append(AuditRow(r, p, p is None or p.decision is r))
        return out
