"""Our context against lifeline-context's on the same ledger, section by section.

The ledger is the committed fixture written by the real lifeline-context 0.6.1
(tests/data/seed). Both tools print their context with a budget large enough for
everything; the anchored ids of each section are compared. The intended
differences are documented (docs/FORMAT.md §9): a correction that replaces a decision
carries the current truth, so it is listed among our decisions in force and not
among the seed's; and a revision of a revision keeps the original replaced, where
the seed's fixpoint (a correction supersedes only while it is not itself corrected)
brings the original decision back.
"""

from __future__ import annotations

import re
import shutil

from kit.run import cli
from kit.seed import SEED, imp, needs_seed, seed_cli, seed_rows  # noqa: F401

from git_lifeline.app.workspace import Workspace

ANCHOR = re.compile(r"\[([0-9a-f]{8})\]")


def section(text: str, title_start: str) -> str:
    for block in re.split(r"\n(?=## )", text):
        if block.startswith("## " + title_start):
            return block
    return ""


def anchors(block: str) -> set:
    return set(ANCHOR.findall(block))


@needs_seed
def test_our_context_matches_the_seeds_section_by_section_on_its_own_ledger(repo, tmp_path):
    imp(repo, SEED / "research.db", "research")
    imp(repo, SEED / "ledger.db")
    ours = cli(repo, "context", "--budget", "100000").out

    project = tmp_path / "seed-project"
    (project / ".lifeline").mkdir(parents=True)
    shutil.copy(SEED / "ledger.db", project / ".lifeline" / "ledger.db")
    shutil.copy(SEED / "research.db", project / ".lifeline" / "research.db")
    theirs = seed_cli(project, "context", "--budget", "100000").stdout

    # What the project is: the same bootstrap.
    what = re.search(r"\*\*What:\*\* (.+?)  _", theirs).group(1)
    assert f"**What:** {what} `[" in ours

    # Decisions in force: everything the seed lists, plus only corrections that replace one.
    st = Workspace.open(str(repo)).ledger().state()
    seed_decisions = anchors(section(theirs, "Why / what's decided"))
    our_decisions = anchors(section(ours, "Decisions in force").split("_[…")[0])
    assert seed_decisions and seed_decisions <= our_decisions
    for extra in our_decisions - seed_decisions:
        e = next(d for d in st.decisions if d.id.startswith(extra))
        assert e.kind == "correction", e.summary

    # Open items and where work stopped: the same entries.
    assert anchors(section(ours, "Open")) == anchors(section(theirs, "Open"))
    assert anchors(section(ours, "Resume")) == anchors(section(theirs, "Resume"))

    # Recent: the same five entries (the seed prints summaries, not anchors), except that
    # ours does not repeat an entry already shown above it (a decision, a checkpoint).
    seed_recent = {
        re.sub(r" _\[.*\]_$", "", ln.split("] ", 1)[1])
        for ln in section(theirs, "Recent").splitlines()[1:]
        if ln.startswith("- [")
    }
    our_recent = {
        re.sub(r" _\(.*\)_$", "", ln.split(": ", 1)[1])
        for ln in section(ours, "Recent").splitlines()[1:]
        if ln.startswith("- `[")
    }
    above = anchors(ours.split("## Recent", 1)[0])
    shown_above = {e.summary for e in st.entries if e.id[:8] in above}
    assert our_recent <= seed_recent
    assert seed_recent - our_recent and seed_recent - our_recent <= shown_above

    # The footer counts the same entries.
    assert re.search(r"_(\d+) entries", theirs).group(1) == re.search(r"_(\d+) entries", ours).group(1)


@needs_seed
def test_a_revision_of_a_revision_is_the_documented_difference_from_the_seed(repo, tmp_path):
    """Decision D, correction C1 of D, correction C2 of C1, written by the seed itself:
    the seed lists D in force again (C2 supersedes C1, so C1 no longer supersedes D);
    we list C2 alone."""
    project = tmp_path / "seed-project"
    project.mkdir()
    seed_cli(project, "log", "--kind", "decision", "--summary", "Use MongoDB", "--body", "Flexible.")
    d = seed_rows(project / ".lifeline" / "ledger.db")[-1]["id"]
    seed_cli(project, "log", "--kind", "correction", "--summary", "Use PostgreSQL", "--body", "ACID.", "--parents", d)
    c1 = seed_rows(project / ".lifeline" / "ledger.db")[-1]["id"]
    seed_cli(
        project, "log", "--kind", "correction", "--summary", "Use PostgreSQL 16", "--body", "Newer.", "--parents", c1
    )
    c2 = seed_rows(project / ".lifeline" / "ledger.db")[-1]["id"]
    theirs = seed_cli(project, "context", "--budget", "100000").stdout
    assert anchors(section(theirs, "Why / what's decided")) == {d[:8]}

    imp(repo, project / ".lifeline" / "ledger.db")
    ours = cli(repo, "context", "--budget", "100000").out
    assert anchors(section(ours, "Decisions in force")) == {c2[:8]}
