"""Every kind of tampering is detected by `verify`, refused by the pre-push hook and
rejected by the pre-receive hook of a server, and a corrupt entry is reported, never a
crash.

One client and one bare server with the hooks installed. Each case works on a line of
its own (`t-<case>`): the clean line is pushed first, then tampered with locally. The
verdicts are taken through the real faces: `git lifeline verify`, a real `git push`
running the client's pre-push hook, and a real `git push --no-verify` that the server's
pre-receive hook must reject; every line of every verdict is checked for its case.
"""

from __future__ import annotations

import json

import pygit2
import pytest
from kit.entries import make_entry, path_of, stored_entry, ts_at
from kit.home import dispatching
from kit.repos import bare, git_push, init_repo, open_ledger
from kit.run import cli, git
from kit.secrets import expand
from kit.tamper import add_commit, rewrite_line

from git_lifeline.app.hook_files import install
from git_lifeline.git.repo import open_repo


def _edited(repo, oid, **changes) -> bytes:
    doc = json.loads(pygit2.Repository(str(repo))[oid].data)
    doc.update(changes)
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()


def _blob(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()


# Each case: (name, tamper(repo, ref, entries) -> None, verify code, hook fragment, needs --force)
# `entries` are the line's clean entries, oldest first: e0 decision, e1 note, e2 child of e0, e3.
def edited_blob(repo, ref, es):
    victim = es[1]
    add_commit(
        repo, lambda f: {**f, path_of(victim.id): _edited(repo, f[path_of(victim.id)][0], summary="Edited")}, ref=ref
    )


def renamed_blob(repo, ref, es):
    victim = es[3]
    fake = "d" * 64

    def move(f):
        f = dict(f)
        f[path_of(fake)] = f.pop(path_of(victim.id))
        return f

    add_commit(repo, move, ref=ref)


def dropped_entry(repo, ref, es):
    add_commit(repo, lambda f: {p: v for p, v in f.items() if p != path_of(es[1].id)}, ref=ref)


def rewritten_history(repo, ref, es):
    victim, forged = es[1], make_entry(1, kind="note", summary="A forged note", body="never written")

    def swap(n, f):
        if path_of(victim.id) in f:
            f.pop(path_of(victim.id))
            f[path_of(forged.id)] = forged.to_json()
        return f

    rewrite_line(repo, swap, ref=ref)


def rewound_ref(repo, ref, es):
    git(repo, "update-ref", "-m", "test: rewind", ref, f"{ref}~2")


def foreign_file(repo, ref, es):
    add_commit(repo, lambda f: {**f, "README.md": b"not an entry\n"}, ref=ref)


def invalid_json(repo, ref, es):
    add_commit(repo, lambda f: {**f, path_of("a" * 64): b'{"kind": "decision", "summary": '}, ref=ref)


def invalid_kind(repo, ref, es):
    doc = json.loads(es[1].to_json())
    doc["kind"] = "gossip"  # not one of the 17 kinds; id left as it was
    add_commit(repo, lambda f: {**f, path_of("b" * 64): _blob(doc)}, ref=ref)


def parents_removed(repo, ref, es):
    add_commit(repo, lambda f: {p: v for p, v in f.items() if p != path_of(es[0].id)}, ref=ref)


def credential_added(repo, ref, es):
    leaked = stored_entry(summary="Deploy notes", body="token " + expand("ghp_{{a:36}}", "tamper"), ts=ts_at(50))
    add_commit(repo, lambda f: {**f, path_of(leaked.id): leaked.to_json()}, ref=ref)


CASES = [
    ("edited-blob", edited_blob, "bad-entry", "content does not match its id", False),
    ("renamed-blob", renamed_blob, "bad-entry", "stored under another id's path", False),
    ("dropped-entry", dropped_entry, "removed", "was removed", False),
    ("rewritten-history", rewritten_history, "rewound", "not a fast-forward", True),
    ("rewound-ref", rewound_ref, "rewound", "not a fast-forward", True),
    ("foreign-file", foreign_file, "foreign-file", "foreign-file", False),
    ("invalid-json", invalid_json, "bad-entry", "not valid JSON", False),
    ("invalid-kind", invalid_kind, "bad-entry", "unknown kind 'gossip'", False),
    # a child whose parent entry was removed: verify names both the removal and the orphan;
    # the hooks check the range, where the removal is what is refused
    ("parents-removed", parents_removed, "missing-parent", "removed", False),
    ("credential-added", credential_added, "secret", "secret", False),
]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, dispatch_bin):
    """Set every case up and take the three verdicts once (pushes batch all lines)."""
    with dispatching(dispatch_bin):
        base = tmp_path_factory.mktemp("tamper")
        server = bare(base, "server.git", hook=True)
        client = init_repo(base / "client")
        git(client, "remote", "add", "origin", str(server))
        lines = {}
        for name, *_ in CASES:
            led = open_ledger(client, f"t-{name}")
            e0 = make_entry(0, summary=f"{name}: decision 0")
            e1 = make_entry(1, kind="note", summary=f"{name}: note 1")
            e2 = make_entry(2, summary=f"{name}: decision 2", parents=[e0.id])
            e3 = make_entry(3, kind="note", summary=f"{name}: note 3")
            for e in (e0, e1, e2, e3):
                led.append([e])
            lines[name] = [e0, e1, e2, e3]
        refs = [f"refs/lifeline/t-{name}" for name, *_ in CASES]
        git(client, "push", "-q", "origin", *refs)  # the clean lines, accepted by pre-receive
        clean = {r: git(server, "rev-parse", r) for r in refs}
        install(open_repo(str(client)), ["pre-push"])
        for name, tamper, *_ in CASES:
            tamper(client, f"refs/lifeline/t-{name}", lines[name])
        specs = [f"+{r}:{r}" for r in refs]  # forced where a case needs it; the hooks still judge
        verify = cli(client, "verify")
        pre_push = git_push(client, *specs, timeout=300)
        pre_receive = git_push(client, *specs, flags=("--no-verify",), timeout=300)
        after = {r: git(server, "rev-parse", r) for r in refs}
        return {"verify": verify, "pre-push": pre_push, "pre-receive": pre_receive, "clean": clean, "after": after}


def lines_about(text: str, line: str) -> list:
    return [t for t in text.splitlines() if f"t-{line}" in t]


def test_no_verdict_crashed(verdicts):
    assert "Traceback" not in verdicts["verify"].err + verdicts["pre-push"][1] + verdicts["pre-receive"][1]
    assert "internal error" not in verdicts["verify"].err + verdicts["pre-push"][1] + verdicts["pre-receive"][1]


@pytest.mark.parametrize("name,tamper,code,fragment,forced", CASES, ids=[c[0] for c in CASES])
def test_detected_by_verify(verdicts, name, tamper, code, fragment, forced):
    res = verdicts["verify"]
    assert res.code == 1, res
    out = res.out
    start = out.index(f"line t-{name}:")
    block = out[start:].split("\n", 1)[1]
    block = block[: block.find("\nok: line") if "\nok: line" in block else len(block)]
    block = block.split("\nFAILED: line")[0]
    assert out[start - len("FAILED: ") : start] == "FAILED: ", out
    assert f"  {code}: " in block, (name, block)


@pytest.mark.parametrize("name,tamper,code,fragment,forced", CASES, ids=[c[0] for c in CASES])
def test_refused_by_pre_push(verdicts, name, tamper, code, fragment, forced):
    rc, err = verdicts["pre-push"]
    assert rc != 0 and "push refused" in err, err
    about = lines_about(err, name)
    assert about and any(fragment in t for t in about), (name, about)


@pytest.mark.parametrize("name,tamper,code,fragment,forced", CASES, ids=[c[0] for c in CASES])
def test_rejected_by_pre_receive(verdicts, name, tamper, code, fragment, forced, record_counts):
    rc, err = verdicts["pre-receive"]
    assert rc != 0 and "ledger update refused" in err, err
    about = lines_about(err, name)
    assert about and any(fragment in t for t in about), (name, about)
    ref = f"refs/lifeline/t-{name}"
    assert verdicts["after"][ref] == verdicts["clean"][ref], "the server took the tampered line"


def test_counts(verdicts, record_counts):
    held = sum(
        1
        for name, *_ in CASES
        if verdicts["after"][f"refs/lifeline/t-{name}"] == verdicts["clean"][f"refs/lifeline/t-{name}"]
    )
    record_counts(
        "tampering",
        tried=len(CASES) * 3,
        held=len(CASES) * 3 if held == len(CASES) else 0,
        lost=len(CASES) - held,
        cases=len(CASES),
        detectors=3,
    )
