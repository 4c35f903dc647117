"""A lifeline-context ledger keeps what agents proposed and no human decided yet in its review
queue (the .db's `proposals` table). Importing it used to drop them without a word: they are
filed in the line's review trail, each once, and what cannot be filed is named with why."""

from __future__ import annotations

import json
import sqlite3

from kit.home import git_env  # noqa: F401
from kit.run import cli
from kit.seed import needs_seed, repo, seed_session  # noqa: F401


def seed_ledger_with_proposals(tmp_path):
    proj = tmp_path / "seedproj"
    proj.mkdir()
    seed_session(
        proj,
        ["log", "--kind", "bootstrap", "--summary", "Live seed project", "--body", "Why: interop."],
        ["propose", "--kind", "decision", "--summary", "Cache: Redis", "--body", "Sessions.", "--agent", "claude-code"],
        ["propose", "--kind", "note", "--summary", "Rejected idea", "--body", "No."],
        ["reject", "2"],
        ["propose", "--kind", "open", "--summary", "Which CDN?", "--body", "Latency in Asia.", "--agent", "codex"],
        ["rebuild"],
    )
    return proj


@needs_seed
def test_pending_proposals_of_a_seed_db_reach_the_review_trail_once(repo, tmp_path):
    proj = seed_ledger_with_proposals(tmp_path)
    db = proj / ".lifeline" / "ledger.db"
    r = cli(repo, "import", "--from", str(db), "--json")
    assert r.code == 0, r
    found = json.loads(r.out)["proposals"]
    assert len(found["filed"]) == 2 and found["left_out"] == [], found
    review = cli(repo, "review", "--json")
    pending = {p["content"]["summary"]: p["content"] for p in json.loads(review.out)}
    assert set(pending) == {"Cache: Redis", "Which CDN?"}, "the rejected one is not pending: not filed"
    assert pending["Cache: Redis"]["agent"] == "claude-code" and pending["Which CDN?"]["kind"] == "open"
    assert pending["Cache: Redis"]["author"] == "Seed User <seed@example.com>", "the proposer stays the author"
    # importing twice files nothing again
    again = cli(repo, "import", "--from", str(db))
    assert again.code == 0 and "2 pending proposal(s) already in the line or its review trail" in again.out, again
    assert len(json.loads(cli(repo, "review", "--json").out)) == 2
    # the markdown holds no proposals: an import from it says where they wait
    md = cli(repo, "import", "--from", str(proj / "LIFELINE.md"))
    assert md.code == 0 and f"2 pending proposal(s) wait in {db}" in md.out, md


@needs_seed
def test_a_proposal_that_is_no_valid_entry_is_named_with_why_not_dropped(repo, tmp_path):
    proj = seed_ledger_with_proposals(tmp_path)
    db = proj / ".lifeline" / "ledger.db"
    con = sqlite3.connect(db)  # a row an older or another writer of the queue left
    con.execute(
        "INSERT INTO proposals (ts, status, kind, author, agent, provider, model, summary, body, parents) "
        "VALUES ('2026-01-01T00:00:00+00:00', 'pending', 'wish', 'A <a@example.com>', 'codex', 'none', "
        "'human', 'A wish', 'b', '[]')"
    )
    pid = con.execute("SELECT max(pid) FROM proposals").fetchone()[0]
    con.commit()
    con.close()
    r = cli(repo, "import", "--from", str(db))
    assert r.code == 1, r
    assert "2 pending proposal(s) filed" in r.out and "1 pending proposal(s) left out" in r.err, r
    assert f"proposal #{pid}:" in r.err and "wish" in r.err, r
