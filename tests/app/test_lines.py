"""Several lines in one repository and the links between them (issue 6)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pygit2
import pytest
from kit.home import git_env  # noqa: F401
from kit.repos import (
    line_ids,  # noqa: F401
    open_ledger,
    open_workspace,
    ref,
)
from kit.run import cli, git
from kit.seed import SEED, imp, repo, seed_ids  # noqa: F401

from git_lifeline.app import interop
from git_lifeline.app.draft import Draft


def log(repo, line="main", **fields):
    fields.setdefault("body", "because")
    return open_ledger(repo, line).log(Draft(**fields)).entry


@pytest.fixture
def two_lines(repo):
    """research: a paper note and a decision; main: a decision, its correction, an open, a
    checkpoint on the open's thread, and a note whose parent is in research."""
    paper = log(repo, "research", kind="note", summary="Paper: Merkle DAGs")
    hashdec = log(repo, "research", kind="decision", summary="Hash: sha256", body="Injective form.")
    mongo = log(repo, kind="decision", summary="Database: MongoDB", body="Prototype.")
    pg = log(repo, kind="correction", summary="Database: PostgreSQL", body="ACID.", parents=[mongo.id[:10]])
    queue = log(repo, kind="open", summary='Pick a "queue" <broker>', body="Kafka or RabbitMQ.")
    cp = log(
        repo,
        kind="checkpoint",
        summary="queue: next",
        body=f"thread: {queue.id}\nnext:\n  - benchmark",
        parents=[queue.id],
    )
    cross = log(repo, kind="note", summary="Follows the paper", parents=[f"research:{paper.id[:8]}"])
    return dict(paper=paper, hashdec=hashdec, mongo=mongo, pg=pg, queue=queue, cp=cp, cross=cross)


# ---- lines -----------------------------------------------------------------------------------
def test_lines_lists_each_real_line_with_count_head_and_projection(repo, two_lines):
    out = cli(repo, "lines", "--json")
    assert out.code == 0, out.err
    rows = {r["line"]: r for r in json.loads(out.out)}
    assert set(rows) == {"main", "research"}
    assert rows["main"]["entries"] == 5 and rows["research"]["entries"] == 2
    assert rows["research"]["head"] == ref(repo, "refs/lifeline/research")
    assert rows["research"]["projection"].endswith("LIFELINE.research.md")
    assert (repo / "LIFELINE.research.md").exists() and (repo / "LIFELINE.md").exists()


def test_line_option_is_accepted_after_every_command_name(repo):
    out = cli(repo, "log", "--line", "ops", "--kind", "note", "--summary", "After the name", "--body", "b")
    assert out.code == 0, out.err
    assert ref(repo, "refs/lifeline/ops") and not ref(repo, "refs/lifeline/main")
    listed = cli(repo, "list", "--line", "ops", "--json")
    assert [e["summary"] for e in json.loads(listed.out)] == ["After the name"]
    bad = cli(repo, "list", "--line", "no/such")
    assert bad.code == 2 and "invalid line name" in bad.err


# ---- cross-line parents and verify -----------------------------------------------------------
def test_parent_in_another_line_is_an_external_anchor(repo, two_lines):
    assert two_lines["cross"].parents == [two_lines["paper"].id]
    out = cli(repo, "verify")
    assert out.code == 0, out.out
    assert "ok: line main: 5 entries" in out.out and "1 external anchor(s)" in out.out


def test_a_parent_in_an_unknown_line_is_refused(repo, two_lines):
    out = cli(repo, "log", "--kind", "note", "--summary", "x", "--body", "y", "--parents", "nowhere:abcdef12")
    assert out.code == 2 and "no line 'nowhere'" in out.err


def _commit_tree(repo_path, files: dict, parent=None) -> str:
    """A commit whose tree holds `files` {path: bytes} (nested paths allowed)."""
    r = pygit2.Repository(str(repo_path))

    def build(items):
        tb = r.TreeBuilder()
        dirs = {}
        for path, data in items.items():
            head, _, rest = path.partition("/")
            if rest:
                dirs.setdefault(head, {})[rest] = data
            else:
                tb.insert(head, r.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        for name, sub in dirs.items():
            tb.insert(name, build(sub), pygit2.GIT_FILEMODE_TREE)
        return tb.write()

    sig = pygit2.Signature("T", "t@example.com", 0, 0)
    return str(r.create_commit(None, sig, sig, "forged", build(files), [parent] if parent else []))


def test_stray_files_and_unrelated_refs_never_count_as_lines(repo, two_lines):
    paper = two_lines["paper"]
    blob = open_ledger(repo, "research").store.read(paper.id).to_json()
    path = f"entries/{paper.id[:2]}/{paper.id[2:4]}/{paper.id[4:]}"
    # the parent's line disappears; copies of its blob appear everywhere but in a line
    git(repo, "update-ref", "-d", "refs/lifeline/research")
    (repo / "LIFELINE.research.md").write_text("stray\n")
    (repo / ".git" / "lifeline").mkdir(exist_ok=True)
    (repo / ".git" / "lifeline" / "research.db").write_bytes(b"SQLite format 3\x00")
    branch = _commit_tree(repo, {path: blob})
    git(repo, "update-ref", "refs/heads/research", branch)
    git(repo, "update-ref", "refs/remotes/origin/lifeline/research", branch)
    foreign = _commit_tree(repo, {path: blob, "README.md": b"project file\n"})
    git(repo, "update-ref", "refs/lifeline/proj", foreign)
    blob_oid = git(repo, "hash-object", "-w", "--stdin", input=blob)
    git(repo, "update-ref", "refs/lifeline/blobref", blob_oid)
    assert [r.line for r in open_workspace(repo).lines()] == ["main"]
    out = cli(repo, "verify", "--line", "main")
    assert out.code == 1 and "missing-parent" in out.out and paper.id[:8] in out.out
    assert open_workspace(repo).where(paper.id[:10]) == []


def test_a_blob_under_another_entrys_name_does_not_excuse_a_missing_parent(repo, two_lines):
    paper = two_lines["paper"]
    other = open_ledger(repo, "research").store.read(two_lines["hashdec"].id).to_json()
    git(repo, "update-ref", "-d", "refs/lifeline/research")
    forged = _commit_tree(repo, {f"entries/{paper.id[:2]}/{paper.id[2:4]}/{paper.id[4:]}": other})
    git(repo, "update-ref", "refs/lifeline/research", forged)
    out = cli(repo, "verify", "--line", "main")
    assert out.code == 1 and "missing-parent" in out.out


# ---- promote ---------------------------------------------------------------------------------
def test_promote_copies_with_an_origin_block_and_twice_adds_nothing(repo, two_lines):
    src = two_lines["hashdec"]
    out = cli(repo, "promote", "--from", "research", "--to", "main", "--id", src.id[:8])
    assert out.code == 0, out.err
    copy = next(e for e in open_ledger(repo).entries() if e.summary == "Hash: sha256")
    assert copy.body == f"Injective form.\n\norigin:\n  line: research\n  id: {src.id}"
    assert (copy.kind, copy.author, copy.ts, copy.parents) == (src.kind, src.author, src.ts, [])
    head = ref(repo, "refs/lifeline/main")
    again = interop.promote(open_ledger(repo), "research", [src.id])
    assert again.promoted == [] and [c for _, c in again.already] == [copy.id]
    assert ref(repo, "refs/lifeline/main") == head
    from git_lifeline.git.verify import verify_log

    report = verify_log(open_ledger(repo).store)
    assert report.ok and (copy.id, src.id, "research") in report.origins


def test_promoted_copy_may_name_parents_in_other_lines(repo, two_lines):
    src, paper = two_lines["hashdec"], two_lines["paper"]
    out = cli(
        repo,
        "promote",
        "--from",
        "research",
        "--to",
        "ops",
        "--id",
        src.id[:8],
        "--parents",
        f"research:{paper.id[:8]}",
    )
    assert out.code == 0, out.err
    (copy,) = open_ledger(repo, "ops").entries()
    assert copy.parents == [paper.id]
    assert cli(repo, "verify", "--line", "ops").code == 0


def test_promote_refuses_a_correction(repo, two_lines):
    out = cli(repo, "promote", "--from", "main", "--to", "research", "--id", two_lines["pg"].id[:8])
    assert out.code == 2 and "is a correction" in out.err


def test_our_promote_gives_the_id_the_seed_gave_its_promoted_copy(repo):
    imp(repo, SEED / "research.db", "research")
    ids = seed_ids()
    source = next(r for r in ids["research"] if r["summary"].startswith("Hash:"))
    seed_copy = next(r for r in ids["ledger"] if r["summary"] == source["summary"])
    promoted = interop.promote(open_ledger(repo, "ops"), "research", [source["id"][:8]]).promoted
    assert [e.id for e in promoted] == [seed_copy["id"]]


def test_a_copy_that_disagrees_with_its_origin_fails_verify(repo, two_lines):
    src = two_lines["hashdec"]
    log(repo, "ops", kind="decision", summary="Hash: md5", body=f"Faster.\n\norigin:\n  line: research\n  id: {src.id}")
    out = cli(repo, "verify", "--line", "ops")
    assert out.code == 1 and "bad-origin" in out.out


# ---- where -----------------------------------------------------------------------------------
def test_where_finds_an_id_in_every_line_that_holds_it(repo, two_lines):
    cp = two_lines["cp"]
    open_ledger(repo, "ops").append([cp])  # the same entry in two lines
    out = cli(repo, "where", cp.id[:9], "--json")
    assert out.code == 0
    assert sorted(h["line"] for h in json.loads(out.out)) == ["main", "ops"]
    missing = cli(repo, "where", "0000000")
    assert missing.code == 1 and "no line holds" in missing.err
    from git_lifeline.errors import InputError

    with pytest.raises(InputError):
        open_workspace(repo).where("xyz")


# ---- graph -----------------------------------------------------------------------------------
def test_graph_mermaid_shows_supersession_thread_and_cross_line_links(repo, two_lines):
    interop.promote(open_ledger(repo), "research", [two_lines["hashdec"].id[:8]])
    out = cli(repo, "graph", "--format", "mermaid")
    assert out.code == 0, out.err
    text = out.out
    assert text.startswith("```mermaid\nflowchart LR\n") and text.endswith("```\n")
    t = two_lines
    key = lambda line, e: f"e_{line}_{e.id[:16]}"  # noqa: E731
    assert f"{key('main', t['pg'])} -->|supersedes| {key('main', t['mongo'])}" in text
    assert f"{key('main', t['cp'])} -.->|thread| {key('main', t['queue'])}" in text
    assert f"{key('main', t['cross'])} ==>|parent in another line| {key('research', t['paper'])}" in text
    assert f"-.->|origin research| {key('research', t['hashdec'])}" in text
    assert 'subgraph L_research["line research"]' in text
    assert "#quot;queue#quot; #lt;broker#gt;" in text  # labels cannot break the syntax
    assert f"class {key('main', t['mongo'])} superseded" in text
    only = open_workspace(repo).graph("research")
    assert "supersedes" not in only and "L_main" not in only


def test_graph_dot_is_well_formed(repo, two_lines, tmp_path):
    out = cli(repo, "graph", "--format", "dot", "-o", str(tmp_path / "g.dot"))
    assert out.code == 0, out.err
    text = (tmp_path / "g.dot").read_text()
    assert text.startswith("digraph lifeline {") and text.count("{") == text.count("}")
    assert '\\"queue\\"' in text
    if shutil.which("dot"):
        assert subprocess.run(["dot", "-Tsvg", str(tmp_path / "g.dot")], capture_output=True).returncode == 0


def test_a_line_with_a_cross_line_parent_rebuilds_from_its_projection(repo, two_lines, tmp_path):
    shutil.copy(repo / "LIFELINE.md", tmp_path / "main.md")
    git(repo, "update-ref", "-d", "refs/lifeline/main")
    out = cli(repo, "migrate", "--from", str(tmp_path / "main.md"))
    assert out.code == 0, out.err
    assert two_lines["cross"].id in line_ids(repo)


def test_graph_ids_stay_distinct_for_line_names_mermaid_would_confuse(repo):
    a = log(repo, "my-line", kind="decision", summary="A", body="why a")
    b = log(repo, "my_line", kind="decision", summary="B", body="why b")
    log(repo, "my-line", kind="note", summary="pin A", body=f"pin: {a.id}", parents=[a.id])
    log(repo, "my_line", kind="correction", summary="B2", body="why b2", parents=[b.id])
    text = open_workspace(repo).graph()
    assert 'subgraph L_my_dline["line my-line"]' in text and 'subgraph L_my__line["line my_line"]' in text
    assert f"-.->|pins| e_my_dline_{a.id[:16]}" in text
    assert f"-->|supersedes| e_my__line_{b.id[:16]}" in text
