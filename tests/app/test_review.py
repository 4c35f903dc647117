"""The review trail and the write policy: decisions are final, the trail is tamper-evident,
it travels between clones, and a broken policy never lets an agent write directly."""

from __future__ import annotations

import json

import pygit2
import pytest
from kit.home import EMAIL, NAME, hermetic, installed_on_path  # noqa: F401
from kit.repos import commit_policy, make_repo, project_on_remote, ref, repo_with_a_commit  # noqa: F401
from kit.run import Via, cli, git

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import CheckpointDraft, Draft, Writer
from git_lifeline.app.ledger import Ledger
from git_lifeline.app.workspace import Workspace
from git_lifeline.core.policy import ANY_KIND, Policy, PolicyDenied, PolicyError, parse_policy
from git_lifeline.git.verify import verify_trail

TRAIL = "refs/lifeline-review/main"
LINE = "refs/lifeline/main"


def ledger(path, line=None) -> Ledger:
    return Workspace.open(str(path)).ledger(line)


def agents(path, line=None) -> Agents:
    """The agents' door of a line: writes routed by the policy, proposals, decisions."""
    return Agents(ledger(path, line))


def agent_proposal(path, summary="Cache: Redis", kind="decision", agent="codex"):
    out = agents(path).write(
        Draft(kind, summary, "Sessions must survive a restart.", agent=agent, provider="openai", model="gpt-5")
    )
    assert out.mode == "propose", out
    return out.proposal


# ---- decisions are final ------------------------------------------------------------
def test_reject_after_approve_is_refused_and_the_approval_stands(repo):
    pid = agent_proposal(repo).short
    assert cli(repo, "approve", pid, via=Via.THIS_PROCESS).code == 0
    before = ref(repo, TRAIL)
    r = cli(repo, "reject", pid, "--why", "changed my mind", via=Via.THIS_PROCESS)
    assert r.code == 2, r
    assert "already approved" in r.err and pid in r.err
    assert ref(repo, TRAIL) == before, "a refused reject must write nothing"
    (p,) = agents(repo).proposals(everything=True)
    assert p.status == "approved" and len(p.decisions) == 1
    assert p.decision.doc["entry"] in {e.id for e in ledger(repo).entries()}


def test_a_second_decision_is_refused_even_through_the_trail_api(repo):
    """The check runs inside the compare-and-swap loop, not only in the CLI."""
    rec = agent_proposal(repo)
    review = agents(repo)
    review.approve([rec.short])
    with pytest.raises(Exception, match="already approved"):
        review.trail().decide(rec.id, "rejected", f"{NAME} <{EMAIL}>", why="late")


def test_approve_of_an_approved_proposal_fails_and_writes_nothing(repo):
    pid = agent_proposal(repo).short
    assert cli(repo, "approve", pid, via=Via.THIS_PROCESS).code == 0
    trail, line = ref(repo, TRAIL), ref(repo, LINE)
    r = cli(repo, "approve", pid, via=Via.THIS_PROCESS)
    assert r.code == 2 and "already approved" in r.err and pid in r.err, r
    assert (ref(repo, TRAIL), ref(repo, LINE)) == (trail, line)


def test_approve_all_exits_nonzero_naming_the_failed_proposal_and_approves_the_rest(repo):
    good1 = agent_proposal(repo, "Queue: SQS").short
    # A proposal whose parent is only in another clone's ledger (never pulled here).
    led = ledger(repo)
    from git_lifeline.core.entry import new_entry

    orphan = new_entry(
        kind="fix",
        summary="Retry the webhook",
        body="Timeouts lost events.",
        agent="codex",
        author=led.default_author(),
        parents=["ab" * 32],
    )
    bad = Agents(led).trail().propose(orphan, by=f"{NAME} <{EMAIL}>", via="mcp").short
    good2 = agent_proposal(repo, "Logs: JSON lines").short
    r = cli(repo, "approve", "all")
    assert r.code == 2, r
    assert bad in r.err and "not approved" in r.err
    assert good1 in r.out and good2 in r.out
    statuses = {p.short: p.status for p in agents(repo).proposals(everything=True)}
    assert statuses == {good1: "approved", good2: "approved", bad: "pending"}


def test_approving_content_already_in_the_line_closes_it_as_duplicate(repo):
    led = ledger(repo)
    rec = Agents(led).propose(Draft(kind="note", summary="Same note", body="Said twice."), via="cli")
    c = rec.doc["content"]
    led.log(Draft(kind="note", summary=c["summary"], body=c["body"], author=c["author"]))
    r = cli(repo, "approve", rec.short, via=Via.THIS_PROCESS)
    assert r.code == 0 and "duplicate" in r.out, r
    assert agents(repo).proposals(everything=True)[0].status == "duplicate"


def test_unknown_or_ambiguous_pid_exits_2_naming_it_and_writes_nothing(repo):
    agent_proposal(repo)
    before = ref(repo, TRAIL)
    r = cli(repo, "reject", "ffff0000", via=Via.THIS_PROCESS)
    assert r.code == 2 and "ffff0000" in r.err, r
    r = cli(repo, "approve", "zz", via=Via.THIS_PROCESS)
    assert r.code == 2 and "zz" in r.err, r
    assert ref(repo, TRAIL) == before
    assert "Traceback" not in r.err


# ---- the trail travels and merges ---------------------------------------------------------
def _clone(remote, path):
    git(path.parent, "clone", "-q", str(remote), path.name)
    return path


def _fetch_review(repo_path):
    git(
        repo_path,
        "fetch",
        "-q",
        "origin",
        "+refs/lifeline-review/*:refs/lifeline-review/*",
        "+refs/lifeline/*:refs/lifeline/*",
    )


def test_review_trail_survives_push_and_pull_between_clones(tmp_path):
    remote, a = project_on_remote(tmp_path, "a")
    pid = agent_proposal(a).short  # an agent on machine A proposes
    git(a, "push", "-q", "origin", "refs/lifeline-review/*:refs/lifeline-review/*")

    b = _clone(remote.as_uri(), tmp_path / "b")
    git(b, "config", "user.name", "Bo Approver")
    git(b, "config", "user.email", "bo@example.com")
    _fetch_review(b)
    r = cli(b, "review", via=Via.THIS_PROCESS)
    assert pid in r.out and "Cache: Redis" in r.out, r
    assert cli(b, "approve", pid, via=Via.THIS_PROCESS).code == 0  # a teammate on machine B approves
    git(b, "push", "-q", "origin", "refs/lifeline/*:refs/lifeline/*", "refs/lifeline-review/*:refs/lifeline-review/*")

    _fetch_review(a)
    (p,) = agents(a).proposals(everything=True)
    assert p.status == "approved" and p.decision.by == "Bo Approver <bo@example.com>"
    assert "Cache: Redis" in {e.summary for e in ledger(a).entries()}
    audit = cli(a, "audit", via=Via.THIS_PROCESS)
    assert "approved by Bo Approver" in audit.out, audit
    assert cli(a, "verify", via=Via.THIS_PROCESS).code == 0


def test_concurrent_decisions_from_two_clones_merge_and_the_approval_wins(tmp_path):
    remote, a = project_on_remote(tmp_path, "a")
    pid = agent_proposal(a).short
    git(a, "push", "-q", "origin", "refs/lifeline-review/*:refs/lifeline-review/*")
    b = _clone(remote.as_uri(), tmp_path / "b")
    _fetch_review(b)
    assert cli(b, "reject", pid, "--why", "not now", via=Via.THIS_PROCESS).code == 0  # B rejects...
    git(b, "push", "-q", "origin", "refs/lifeline-review/*:refs/lifeline-review/*")
    assert cli(a, "approve", pid, via=Via.THIS_PROCESS).code == 0  # ...while A approves
    theirs = ref(b, "refs/lifeline-review/main")
    assert cli(a, "pull", "origin", via=Via.THIS_PROCESS).code == 0
    merge = git(a, "rev-list", "--parents", "-n", "1", "refs/lifeline-review/main").split()
    assert len(merge) == 3 and theirs in merge[1:], "the two trails were not merged"
    (p,) = agents(a).proposals(everything=True)
    assert p.status == "approved"
    assert [c.type for c in p.conflicts] == ["rejected"]
    assert verify_trail(ledger(a).gr, "main").ok
    assert "overruled" in cli(a, "audit", via=Via.THIS_PROCESS).out


_WRITER = """
import sys
from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
review = Agents(Workspace.open(sys.argv[1]).ledger())
for i in range(int(sys.argv[3])):
    review.propose(Draft(kind="note", summary=f"note {sys.argv[2]}-{i}", body="Written at the same time."), via="cli")
"""


def test_concurrent_proposals_from_several_processes_are_all_kept(repo):
    import subprocess
    import sys

    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(repo), str(w), "5"], stderr=subprocess.PIPE)
        for w in range(4)
    ]
    results = [(w.wait(timeout=120), w.stderr.read().decode()) for w in writers]
    assert all(code == 0 for code, _ in results), results
    summaries = {p.content.summary for p in agents(repo).proposals()}
    assert summaries == {f"note {w}-{i}" for w in range(4) for i in range(5)}
    assert verify_trail(ledger(repo).gr, "main").ok


# ---- tamper evidence ------------------------------------------------------------------------
def test_a_tampered_review_record_fails_verify(repo):
    agent_proposal(repo)
    repo_obj = pygit2.Repository(str(repo))
    head = repo_obj.lookup_reference(TRAIL).peel(pygit2.Commit)
    # Rewrite the proposal's summary in place, keeping its path, and move the ref.
    records = repo_obj[head.tree["records"].id]
    (a,) = list(records)
    (b,) = list(repo_obj[a.id])
    (leaf,) = list(repo_obj[b.id])
    doc = json.loads(repo_obj[leaf.id].data)
    doc["content"]["summary"] = "Cache: Memcached"
    forged = repo_obj.create_blob(
        (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()
    )
    tb_b = repo_obj.TreeBuilder(repo_obj[b.id])
    tb_b.insert(leaf.name, forged, pygit2.GIT_FILEMODE_BLOB)
    tb_a = repo_obj.TreeBuilder(repo_obj[a.id])
    tb_a.insert(b.name, tb_b.write(), pygit2.GIT_FILEMODE_TREE)
    tb_r = repo_obj.TreeBuilder(records)
    tb_r.insert(a.name, tb_a.write(), pygit2.GIT_FILEMODE_TREE)
    root = repo_obj.TreeBuilder()
    root.insert("records", tb_r.write(), pygit2.GIT_FILEMODE_TREE)
    sig = pygit2.Signature("Mallory", "m@example.com")
    new = repo_obj.create_commit(None, sig, sig, "forged", root.write(), [head.id])
    repo_obj.lookup_reference(TRAIL).set_target(new)
    r = cli(repo, "verify", via=Via.THIS_PROCESS)
    assert r.code == 1, r
    assert "review trail main" in r.out and ("rewritten" in r.out or "tampered" in r.out)


def test_a_rewound_review_ref_is_detected(repo):
    first = agent_proposal(repo, "A").short
    agent_proposal(repo, "B")
    assert first
    repo_obj = pygit2.Repository(str(repo))
    head = repo_obj.lookup_reference(TRAIL).peel(pygit2.Commit)
    repo_obj.lookup_reference(TRAIL).set_target(head.parents[0].id, "rewind")
    r = cli(repo, "verify", via=Via.THIS_PROCESS)
    assert r.code == 1 and "rewound" in r.out, r


# ---- the policy -------------------------------------------------------------------------------
def test_policy_precedence_is_agent_kind_then_agent_star_then_kind_then_default():
    pol = parse_policy(
        json.dumps(
            {
                "default": "propose",
                "kinds": {"note": "deny"},
                "agents": {"claude-code": {"note": "direct"}, "bot": {ANY_KIND: "deny", "checkpoint": "direct"}},
            }
        ),
        "t",
    )
    assert pol.decide("mcp-agent", "note").mode == "deny"
    assert pol.decide("claude-code", "note").mode == "direct"
    assert pol.decide("claude-code", "decision").mode == "propose"
    assert pol.decide("bot", "feature").mode == "deny"
    assert pol.decide("bot", "checkpoint").mode == "direct"
    assert pol.decide("bot", "feature").rule == "agents.bot.*"
    builtin = Policy()
    assert builtin.decide("x", "checkpoint").mode == "direct" and builtin.decide("x", "decision").mode == "propose"


@pytest.mark.parametrize(
    "doc,key",
    [
        ({"default": "yolo"}, "default"),
        ({"kinds": {"note": "allow"}}, "kinds.note"),
        ({"kinds": {"notes": "direct"}}, "kinds.notes"),
        ({"agents": {"bot": {"note": "sure"}}}, "agents.bot.note"),
        ({"agents": {"bot": "direct"}}, "agents.bot"),
        ({"defualt": "direct"}, "defualt"),
    ],
)
def test_invalid_policy_fails_loudly_naming_the_offending_key(repo, doc, key):
    with pytest.raises(PolicyError, match=key.replace(".", r"\.").replace("*", r"\*")):
        parse_policy(json.dumps(doc), "p")
    commit_policy(repo, doc)
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code == 2 and key in r.err, r
    with pytest.raises(PolicyError, match=key):
        agents(repo).write(Draft("checkpoint", "s", "", agent="bot"))
    assert ref(repo, LINE) is None and ref(repo, TRAIL) is None, "nothing may be written"


@pytest.mark.parametrize(
    "text,problem",
    [
        ('{"default": "direct",', "not valid JSON"),
        (b'{"default": "direct", "agents": {"b\xff": {"*": "direct"}}}', "not valid UTF-8"),
    ],
)
def test_policy_that_is_not_json_is_an_error_never_direct(repo, text, problem):
    if isinstance(text, bytes):
        (repo / ".lifeline").mkdir()
        (repo / ".lifeline" / "policy.json").write_bytes(text)
        git(repo, "add", ".lifeline/policy.json")
        git(repo, "commit", "-q", "-m", "policy")
    else:
        commit_policy(repo, text)
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code == 2 and problem in r.err and "main:.lifeline/policy.json" in r.err, r
    with pytest.raises(PolicyError, match=problem):
        agents(repo).write(Draft("note", "s", "why", agent="bot"))
    assert ref(repo, LINE) is None and ref(repo, TRAIL) is None, "nothing may be written"


def test_an_uncommitted_policy_edit_does_not_change_an_agents_rights(repo):
    (repo / ".lifeline").mkdir()
    (repo / ".lifeline" / "policy.json").write_text(json.dumps({"default": "direct"}))
    out = agents(repo).write(Draft("decision", "Use Go", "Static binaries.", agent="sneaky"))
    assert out.mode == "propose"
    r = cli(repo, "policy", via=Via.THIS_PROCESS)
    assert r.code == 0 and "applies only once committed" in r.err, r


def test_a_work_tree_copy_that_differs_from_the_committed_policy_is_reported_but_never_applies(repo):
    commit_policy(repo, {"default": "deny"})
    (repo / ".lifeline" / "policy.json").write_text(json.dumps({"default": "direct"}))
    r = cli(repo, "policy", "--json", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    report = json.loads(r.out)
    assert report["default"] == "deny" and report["source"] == "main:.lifeline/policy.json", report
    assert any("in the work tree differs" in note for note in report["notes"]), report
    with pytest.raises(PolicyDenied, match="denied by policy"):
        agents(repo).write(Draft("note", "s", "why", agent="bot"))
    assert ref(repo, LINE) is None and ref(repo, TRAIL) is None


def test_cli_log_is_direct_and_cli_propose_always_proposes(repo):
    commit_policy(repo, {"default": "deny"})
    r = cli(repo, "log", "--kind", "decision", "--summary", "Use Rust", "--body", "Speed.", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    r = cli(repo, "propose", "--kind", "decision", "--summary", "Use Zig", "--body", "Curiosity.", via=Via.THIS_PROCESS)
    assert r.code == 0 and "proposal" in r.out, r
    assert [p.content.summary for p in agents(repo).proposals()] == ["Use Zig"]


def test_propose_with_bad_input_exits_2_and_writes_nothing(repo):
    for args in (
        ["--kind", "bogus", "--summary", "s", "--body", "b"],
        ["--kind", "note", "--summary", "s", "--body", "   "],
        ["--kind", "note", "--summary", "s", "--body", "b", "--parents", "deadbeef"],
    ):
        r = cli(repo, "propose", *args)
        assert r.code == 2 and "Traceback" not in r.err, r
    assert ref(repo, TRAIL) is None


def test_audit_lists_direct_writes_and_decisions_with_who_and_when(repo):
    cp = agents(repo).checkpoint(
        CheckpointDraft(
            "main", {"next": ["write the tests"]}, None, Writer(agent="claude-code", provider="anthropic", model="opus")
        )
    )
    assert cp.mode == "direct" and cp.written
    pid = agent_proposal(repo).short
    assert cli(repo, "reject", pid, "--why", "we use Postgres", via=Via.THIS_PROCESS).code == 0
    r = cli(repo, "audit", via=Via.THIS_PROCESS)
    lines = r.out.splitlines()
    assert len(lines) == 2, r
    assert "direct" in lines[0] and "claude-code (anthropic/opus)" in lines[0] and NAME in lines[0]
    assert "rejected" in lines[1] and "we use Postgres" in lines[1] and f"rejected by {NAME}" in lines[1]
    data = json.loads(cli(repo, "audit", "--json", via=Via.THIS_PROCESS).out)
    assert [d["type"] for d in data] == ["direct", "rejected"] and all(d["ts"] for d in data)
    assert cli(repo, "audit", "--since", "1h", via=Via.THIS_PROCESS).out.count("\n") == 2
    assert "no direct agent writes" in cli(repo, "audit", "--since", "2999-01-01", via=Via.THIS_PROCESS).out
    assert cli(repo, "audit", "--since", "yesterday-ish", via=Via.THIS_PROCESS).code == 2


def test_init_writes_mcp_json_and_never_overwrites_an_existing_server(repo, monkeypatch):
    # git-lifeline on PATH (as an installed package puts it): the portable entry
    installed_on_path(monkeypatch)
    r = cli(repo, "init", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    doc = json.loads((repo / ".mcp.json").read_text())
    assert doc["mcpServers"]["lifeline"] == {"command": "git", "args": ["lifeline", "mcp"]}
    assert "Claude Desktop" in r.out and "Cursor" in r.out and "Gemini CLI" in r.out
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"lifeline": {"command": "lifeline-mcp"}, "other": {"command": "x"}}})
    )
    r = cli(repo, "init", via=Via.THIS_PROCESS)
    assert r.code == 0 and "left it as it is" in r.out, r
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["lifeline"] == {"command": "lifeline-mcp"}


def test_review_points_at_proposals_waiting_in_other_lines(repo):
    agents(repo, "ops").write(Draft("incident", "Disk full", "Logs not rotated.", agent="codex"))
    r = cli(repo, "review", via=Via.THIS_PROCESS)
    assert r.code == 0 and "no pending proposals in line main" in r.out
    assert "ops (1)" in r.err, r
    assert "Disk full" in cli(repo, "--line", "ops", "review", via=Via.THIS_PROCESS).out


def test_git_lifeline_push_and_pull_carry_the_review_trail_and_merge_concurrent_decisions(tmp_path):
    """The trail travels through `git lifeline push/pull/sync` like the ledger (no raw refspecs)."""
    remote, a = project_on_remote(tmp_path, "a")
    first = agent_proposal(a, "Cache: Redis").short
    second = agent_proposal(a, "Queue: SQS").short
    assert cli(a, "push").code == 0

    b = _clone(remote.as_uri(), tmp_path / "b")
    git(b, "config", "user.name", "Bo Approver")
    git(b, "config", "user.email", "bo@example.com")
    assert cli(b, "pull").code == 0
    assert {p.short for p in agents(b).proposals()} == {first, second}
    assert cli(b, "approve", first, via=Via.THIS_PROCESS).code == 0
    assert cli(a, "reject", second, "--why", "not now", via=Via.THIS_PROCESS).code == 0  # decided on A meanwhile
    assert cli(b, "sync").code == 0
    assert cli(a, "sync").code == 0
    assert cli(b, "pull").code == 0
    for clone in (a, b):
        statuses = {p.short: p.status for p in agents(clone).proposals(everything=True)}
        assert statuses == {first: "approved", second: "rejected"}, clone
        assert "Cache: Redis" in {e.summary for e in ledger(clone).entries()}
        assert cli(clone, "verify", via=Via.THIS_PROCESS).code == 0
