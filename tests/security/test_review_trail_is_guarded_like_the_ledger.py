"""The review trails (refs/lifeline-review/*) pass the same gates as the lines: a server
with the pre-receive hook refuses deleting, rewinding or spoiling a trail, the pre-push
hook and `git lifeline push` refuse to send a spoiled one, `git lifeline pull` refuses
to take one (and then moves nothing, not even the lines), and `git lifeline verify`
reports it. A record whose JSON holds a lone surrogate is a bad record everywhere,
never a crash.

One client, one bare server with the hooks, one bare mirror without them (to serve
spoiled trails to a pull). Each case spoils the trail of a line of its own (`t-<case>`)
after its clean trail was accepted by the server.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from kit.home import dispatching
from kit.repos import bare, git_push, init_repo, open_ledger, ref
from kit.run import cli, git
from kit.tamper import add_commit

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import Draft
from git_lifeline.app.hook_files import install
from git_lifeline.git.records import make_decision
from git_lifeline.git.repo import open_repo

REVIEWER = "Rita Reviewer <rita@example.com>"


def record_path(rid: str) -> str:
    return f"records/{rid[:2]}/{rid[2:4]}/{rid[4:]}"


def record_blob(doc: dict, ascii_only: bool = False) -> tuple:
    """(id, bytes) of a record document written the canonical way (or, with `ascii_only`,
    with every non-ASCII character escaped: the only way JSON can carry a lone surrogate)."""
    data = (json.dumps(doc, ensure_ascii=ascii_only, sort_keys=True, separators=(",", ":")) + "\n").encode()
    return hashlib.sha256(data).hexdigest(), data


def trail_ref(line: str) -> str:
    return f"refs/lifeline-review/{line}"


def with_record(repo, line: str, doc: dict, ascii_only: bool = False) -> None:
    rid, data = record_blob(doc, ascii_only)
    add_commit(repo, lambda files: {**files, record_path(rid): data}, ref=trail_ref(line))


# Each case spoils a trail holding proposal p1 (approved) and proposal p2 (pending).
def tampered_record(repo, line, p1, p2):
    doc = dict(p2.doc, content=dict(p2.doc["content"], summary="Something it never said"))
    _rid, data = record_blob(doc)
    add_commit(repo, lambda files: {**files, record_path(p2.id): data}, ref=trail_ref(line))


def record_of_another_line(repo, line, p1, p2):
    with_record(repo, line, make_decision("rejected", "ops", REVIEWER, p2.id, why="wrong trail").doc)


def decided_twice(repo, line, p1, p2):
    with_record(repo, line, make_decision("rejected", line, REVIEWER, p1.id, why="changed my mind").doc)


def orphan_decision(repo, line, p1, p2):
    with_record(repo, line, make_decision("rejected", line, REVIEWER, "ab" * 32, why="no such proposal").doc)


def foreign_file(repo, line, p1, p2):
    add_commit(repo, lambda files: {**files, "README": b"not a record\n"}, ref=trail_ref(line))


def lone_surrogate(repo, line, p1, p2):
    doc = make_decision("rejected", line, REVIEWER, p2.id, why="x").doc
    with_record(repo, line, dict(doc, by="\ud800"), ascii_only=True)


CASES = [
    ("tampered-record", tampered_record, "bad-record", "tampered"),
    ("record-of-another-line", record_of_another_line, "bad-record", "record of line 'ops'"),
    ("decided-twice", decided_twice, "decided-twice", "already decided"),
    ("orphan-decision", orphan_decision, "orphan-decision", "does not hold"),
    ("foreign-file", foreign_file, "foreign-file", "README"),
    ("lone-surrogate", lone_surrogate, "bad-record", "surrogate"),
]
IDS = [c[0] for c in CASES]


def push(repo, remote: str, *specs: str, flags: tuple = ()) -> tuple:
    return git_push(repo, *specs, flags=flags, remote=remote, timeout=300)


def propose_and_approve(repo, line: str) -> tuple:
    review = Agents(open_ledger(repo, line))
    p1 = review.propose(
        Draft(kind="decision", summary=f"{line}: use a queue", body="Bursts overflow the API."), via="cli"
    )
    p2 = review.propose(
        Draft(kind="note", summary=f"{line}: the queue needs a dead-letter box", body="Seen twice."), via="cli"
    )
    assert [o.ok for o in review.approve([p1.short])] == [True]
    return p1, p2


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, dispatch_bin):
    with dispatching(dispatch_bin):
        base = tmp_path_factory.mktemp("trails")
        server, mirror = bare(base, "server.git", hook=True), bare(base, "mirror.git")
        client = init_repo(base / "client")
        git(client, "remote", "add", "origin", str(server))
        git(client, "remote", "add", "mirror", str(mirror))
        records = {name: propose_and_approve(client, f"t-{name}") for name, *_ in CASES}
        refs = [r for name, *_ in CASES for r in (f"refs/lifeline/t-{name}", trail_ref(f"t-{name}"))]
        code, err = push(client, "origin", *refs)
        assert code == 0, f"the clean trails were refused: {err}"
        clean = {r: ref(server, r) for r in refs}
        install(open_repo(str(client)), ["pre-push"])
        for name, spoil, *_ in CASES:
            spoil(client, f"t-{name}", *records[name])
        trails = [f"+{trail_ref(f't-{name}')}:{trail_ref(f't-{name}')}" for name, *_ in CASES]
        out = {
            "verify": cli(client, "verify"),
            "pre-push": push(client, "origin", *trails),
            "pre-receive": push(client, "origin", *trails, flags=("--no-verify",)),
            "push": {name: cli(client, "--line", f"t-{name}", "push", "mirror") for name, *_ in CASES},
            "review": {name: cli(client, "--line", f"t-{name}", "review", "--all") for name, *_ in CASES},
            "audit": {name: cli(client, "--line", f"t-{name}", "audit") for name, *_ in CASES},
        }
        # the mirror has no hook: it takes the spoiled trails, and a pull must refuse them
        code, err = push(client, "mirror", *(f"+{r}:{r}" for r in refs), flags=("--no-verify",))
        assert code == 0, err
        puller = init_repo(base / "puller")
        git(puller, "remote", "add", "mirror", str(mirror))
        out["pull"] = {name: cli(puller, "--line", f"t-{name}", "pull", "mirror") for name, *_ in CASES}
        out["pulled-refs"] = git(puller, "for-each-ref", "refs/lifeline", "refs/lifeline-review")
        out["clean"] = clean
        out["after"] = {r: ref(server, r) for r in refs}
        return out


def block_of(out: str, line: str) -> str:
    """The verify lines about the review trail of `line`."""
    start = out.index(f"review trail {line}:")
    rest = out[start:].split("\n", 1)[1] if "\n" in out[start:] else ""
    lines = []
    for text in rest.splitlines():
        if not text.startswith("  "):
            break
        lines.append(text)
    return out[start - len("FAILED: ") : start] + "\n".join(lines)


def test_no_verdict_crashed(verdicts):
    texts = [verdicts["verify"].err, verdicts["pre-push"][1], verdicts["pre-receive"][1]]
    for kind in ("push", "review", "audit", "pull"):
        texts += [r.err for r in verdicts[kind].values()]
    assert not any("Traceback" in t or "internal error" in t for t in texts), texts


@pytest.mark.parametrize("name,spoil,code,fragment", CASES, ids=IDS)
def test_verify_reports_a_spoiled_trail(verdicts, name, spoil, code, fragment):
    res = verdicts["verify"]
    assert res.code == 1, res
    block = block_of(res.out, f"t-{name}")
    assert block.startswith("FAILED: ") and f"  {code}: " in block and fragment in block, block


@pytest.mark.parametrize("name,spoil,code,fragment", CASES, ids=IDS)
def test_pre_push_refuses_a_spoiled_trail(verdicts, name, spoil, code, fragment):
    rc, err = verdicts["pre-push"]
    assert rc != 0 and "push refused" in err, err
    assert any(f"review trail t-{name}: {code}: " in t for t in err.splitlines()), (name, err)


@pytest.mark.parametrize("name,spoil,code,fragment", CASES, ids=IDS)
def test_pre_receive_refuses_a_spoiled_trail(verdicts, name, spoil, code, fragment):
    rc, err = verdicts["pre-receive"]
    assert rc != 0 and "ledger update refused" in err, err
    assert any(f"review trail t-{name}: {code}: " in t for t in err.splitlines()), (name, err)
    ref_name = trail_ref(f"t-{name}")
    assert verdicts["after"][ref_name] == verdicts["clean"][ref_name], "the server took the spoiled trail"


@pytest.mark.parametrize("name,spoil,code,fragment", CASES, ids=IDS)
def test_git_lifeline_push_refuses_to_send_a_spoiled_trail(verdicts, name, spoil, code, fragment):
    res = verdicts["push"][name]
    assert res.code == 1, res
    assert f"review trail t-{name} fails verification" in res.err and f"{code}: " in res.err, res


@pytest.mark.parametrize("name,spoil,code,fragment", CASES, ids=IDS)
def test_pull_refuses_a_spoiled_trail_and_moves_nothing(verdicts, name, spoil, code, fragment):
    res = verdicts["pull"][name]
    assert res.code == 1, res
    assert f"review trail t-{name} from mirror failed verification" in res.err and f"{code}: " in res.err, res
    assert verdicts["pulled-refs"] == "", "a refused pull moved a line or a trail"


@pytest.mark.parametrize("kind", ["review", "audit"])
def test_review_and_audit_read_past_a_bad_record(verdicts, kind):
    for name, *_ in CASES:
        res = verdicts[kind][name]
        assert res.code == 0, (name, res)


# ---- deleting and rewinding ----------------------------------------------------------------
@pytest.fixture
def hooked(tmp_path, git_dispatch):
    """A client whose trail of line main (two proposals) was accepted by a hooked server."""
    server = bare(tmp_path, "server.git", hook=True)
    client = init_repo(tmp_path / "client")
    git(client, "remote", "add", "origin", str(server))
    propose_and_approve(client, "main")
    code, err = push(client, "origin", "refs/lifeline/main", trail_ref("main"))
    assert code == 0, err
    return client, server


def test_pre_receive_refuses_deleting_a_review_trail(hooked):
    client, server = hooked
    before = ref(server, trail_ref("main"))
    code, err = push(client, "origin", f":{trail_ref('main')}", flags=("--no-verify",))
    assert code != 0, err
    assert "review trail main: deleting a review trail on this server is refused" in err, err
    assert ref(server, trail_ref("main")) == before


def test_pre_receive_and_pre_push_refuse_a_rewound_review_trail(hooked, git_dispatch):
    client, server = hooked
    before = ref(server, trail_ref("main"))
    older = ref(client, trail_ref("main") + "~1")
    code, err = push(client, "origin", f"{older}:{trail_ref('main')}", flags=("--no-verify", "--force"))
    assert code != 0 and "review trail main: not a fast-forward" in err and "records would be lost" in err, err
    assert ref(server, trail_ref("main")) == before
    install(open_repo(str(client)), ["pre-push"])
    code, err = push(client, "origin", f"{older}:{trail_ref('main')}", flags=("--force",))
    assert code != 0 and "push refused" in err and "not a fast-forward" in err, err
    assert ref(server, trail_ref("main")) == before


def test_every_namespace_has_its_checks_and_its_log_class():
    from git_lifeline.git import checks, sync
    from git_lifeline.git.namespaces import NAMESPACES

    for ns in NAMESPACES:
        assert ns.name in checks.CHECKS and ns.name in sync._LOGS, ns.name
    specs = [ns.fetch_refspec("origin") for ns in NAMESPACES]
    assert "+refs/lifeline/*:refs/remotes/origin/lifeline/*" in specs
    assert "+refs/lifeline-review/*:refs/remotes/origin/lifeline-review/*" in specs


def test_a_rejection_whose_why_is_not_unicode_is_refused_and_writes_nothing(tmp_path):
    repo = init_repo(tmp_path / "repo")
    rec = Agents(open_ledger(repo)).propose(Draft(kind="note", summary="A note", body="Why not."), via="cli")
    before = ref(repo, trail_ref("main"))
    res = cli(repo, "reject", rec.short, "--why", b"\xff")  # arrives as a lone surrogate
    assert res.code == 2 and "not valid Unicode" in res.err and "Traceback" not in res.err, res
    assert ref(repo, trail_ref("main")) == before
