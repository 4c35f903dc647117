"""Real ADR directories come in whole (issue 26): any status a real ADR carries is kept as an
`adr-status:` header and read by the table of docs/VIEW.md, an unknown one is a warning naming
the file (never a refusal of the directory), and "amends" / "relates to" links become relation
entries. The fixtures in tests/data/adr/ reproduce, in words of their own, the shapes of the MADR
project's own decisions (madr-project: 19 records, MADR 3/4 front matter, one "on hold") and of
adr-tools' own (adr-tools-project: 9 records, an Amends / Amended by pair), plus the statuses
and link forms other real directories carry (statuses)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kit.repos import head, open_ledger
from kit.run import DATA, cli

from git_lifeline.core import blocks

ADR = DATA / "adr"


def imp(repo: Path, directory: Path) -> dict:
    out = cli(repo, "import", "--from", str(directory), "--json")
    assert out.code == 0, out
    return json.loads(out.out)


def by_summary(repo: Path) -> dict:
    return {e.summary: e for e in open_ledger(repo).entries()}


def in_force(repo: Path) -> set:
    st = open_ledger(repo).state()
    return {st.get(i).summary for i in st.decision_ids}


def relations(repo: Path) -> set:
    entries = open_ledger(repo).entries()
    title = {e.id: e.summary for e in entries}
    out = set()
    for e in entries:
        if e.kind == "relation":
            fields = dict(line.split(": ", 1) for line in e.body.split("\n"))
            out.add((title[fields["from"]], fields["rel"], title[fields["to"]]))
    return out


def test_an_on_hold_record_no_longer_refuses_the_madr_projects_own_directory(repo):
    out = imp(repo, ADR / "madr-project")
    assert (out["read"], out["added"], out["warnings"]) == (19, 19, [])
    entries = by_summary(repo)
    held = entries["Proposed: Ship our own record tooling"]
    assert held.kind == "open" and blocks.field(held.body, "adr-status") == "on hold"
    # a fenced example of a status inside a record's body is prose, not that record's status
    assert len(in_force(repo)) == 18 and "Track a status for each record" in in_force(repo)
    assert "Offer the work under two licences" in in_force(repo)
    assert "status: on hold" in entries["Track a status for each record"].body
    before = head(repo)
    assert imp(repo, ADR / "madr-project")["added"] == 0 and head(repo) == before


def test_adr_tools_amends_and_amended_by_become_one_relation(repo):
    out = imp(repo, ADR / "adr-tools-project")
    assert (out["read"], out["warnings"]) == (9, [])
    assert relations(repo) == {("Help text from scripts", "amends", "Help text from comments")}
    assert {"Help text from scripts", "Help text from comments"} <= in_force(repo)  # an amendment replaces nothing
    assert len(in_force(repo)) == 9
    assert imp(repo, ADR / "adr-tools-project")["added"] == 0


def test_every_real_status_is_kept_and_mapped_and_an_unknown_one_only_warns(repo):
    out = imp(repo, ADR / "statuses")
    assert out["read"] == 10
    assert out["warnings"] == [
        "0008-vendor-every-dependency.md: status 'Pondering' is not one git-lifeline knows; imported as "
        "proposed (an open item, not in force), the status kept as adr-status:"
    ]
    entries = by_summary(repo)
    kept = {
        "Write services in Go": "Amended",
        "Keep sessions in memory": "Superceded by [5. Keep sessions in Redis](0005-keep-sessions-in-redis.md)",
        "Proposed: Publish a GraphQL API": "draft",
        "Proposed: Measure before optimising": "on hold",
        "Expire idle sessions": "Withdrawn",
        "Proposed: Vendor every dependency": "Pondering",
        "Host on one VM": "superseded by ADR-0010",
    }
    assert {s: blocks.field(entries[s].body, "adr-status") for s in kept} == kept
    assert in_force(repo) == {
        "Write services in Go",
        "Allow Rust for hot paths",
        "Keep sessions in Redis",
        "Host on Kubernetes",
    }
    st = open_ledger(repo).state()
    assert {st.get(i).summary for i in st.open_ids} == {
        "Proposed: Publish a GraphQL API",
        "Proposed: Measure before optimising",
        "Proposed: Vendor every dependency",
    }
    # a misspelt "Superceded by" and a bare "superseded by ADR-0010" still supersede
    assert entries["Keep sessions in Redis"].parents == [entries["Keep sessions in memory"].id]
    assert entries["Host on Kubernetes"].parents == [entries["Host on one VM"].id]
    assert relations(repo) == {
        ("Allow Rust for hot paths", "amends", "Write services in Go"),
        ("Allow Rust for hot paths", "relates-to", "Proposed: Measure before optimising"),
        ("Allow Rust for hot paths", "relates-to", "Keep sessions in Redis"),
        ("Keep sessions in Redis", "relates-to", "Proposed: Measure before optimising"),
        ("Expire idle sessions", "refines", "Keep sessions in Redis"),
    }  # "Amends"/"Amended by" once, "Relates to" either way once, a web link none
    assert imp(repo, ADR / "statuses")["added"] == 0


def test_a_status_rewritten_without_changing_its_meaning_writes_no_new_version(repo, tmp_path):
    d = tmp_path / "statuses"
    shutil.copytree(ADR / "statuses", d)
    imp(repo, d)
    target = d / "0006-measure-before-optimising.md"
    target.write_text(target.read_text().replace("status: on hold", "status: Draft"))
    before = head(repo)
    assert imp(repo, d)["added"] == 0 and head(repo) == before
    target.write_text(target.read_text().replace("status: Draft", "status: accepted"))
    assert imp(repo, d)["added"] > 0  # proposed to accepted: a decision now
    assert "Measure before optimising" in in_force(repo)
    assert blocks.field(by_summary(repo)["Measure before optimising"].body, "adr-status") == "accepted"


def test_a_link_to_an_adr_missing_from_the_directory_is_a_warning_naming_both(repo, tmp_path):
    d = tmp_path / "adr"
    d.mkdir()
    (d / "0001-a.md").write_text(
        "# 1. Use A\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\nAmends [7. B](0007-b.md)\n"
    )
    out = imp(repo, d)
    assert out["warnings"] == ["0001-a.md: amends '0007-b.md', which is not in the directory"]
    assert in_force(repo) == {"Use A"} and relations(repo) == set()


def test_adr_tools_own_link_forms_and_its_older_dates_import_whole(repo):
    # the shapes adr-tools' `adr new -s` and `adr link` write (tests/data/adr/adr-tools-links):
    # "Supercedes"/"Superceded by" spelt its way, one record superseding two, a made-up
    # "Clarifies"/"Clarified by" pair beside "Amends", and a `Date: 04/03/2019` (day first)
    # from before its records moved to ISO 8601, which used to refuse the directory
    out = imp(repo, ADR / "adr-tools-links")
    assert (out["read"], out["warnings"]) == (5, [])
    entries = by_summary(repo)
    assert entries["Log in plain text"].ts.date().isoformat() == "2019-03-04"
    collector = entries["Ship logs to a collector"]
    assert set(collector.parents) == {entries["Log to files"].id, entries["Log in plain text"].id}
    assert in_force(repo) == {"Ship logs to a collector", "Keep thirty days of logs", "Count retention from ingestion"}
    assert relations(repo) == {
        ("Count retention from ingestion", "amends", "Keep thirty days of logs"),
        ("Count retention from ingestion", "clarifies", "Keep thirty days of logs"),
    }
    assert imp(repo, ADR / "adr-tools-links")["added"] == 0


def test_the_madr_projects_directory_imports_whole_beside_its_images_and_lint_config(repo, tmp_path):
    # MADR's own docs/decisions holds record-numbered images (0008-example-badge.png) and a
    # .markdownlint.yml beside the records: neither is a record, none refuses the directory
    d = tmp_path / "decisions"
    shutil.copytree(ADR / "madr-project", d)
    (d / "0008-example-badge.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (d / "0013-example.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (d / ".markdownlint.yml").write_text("default: true\nMD013: false\n")
    out = imp(repo, d)
    assert (out["read"], out["added"], out["warnings"]) == (19, 19, [])
