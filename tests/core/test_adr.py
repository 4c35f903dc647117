"""ADRs in, MADR out: `import --from DIR` of adr-tools, log4brains and MADR directories, and
`export --format adr -o DIR` (issue 18). Every import runs the real CLI on a real repository."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from kit.repos import head, init_repo, open_ledger, snapshot
from kit.run import DATA, cli

from git_lifeline.app.draft import Draft
from git_lifeline.core import adr as core_adr
from git_lifeline.errors import InputError

ADR = DATA / "adr"


def imp(repo: Path, directory: Path, *extra: str) -> dict:
    out = cli(repo, "import", "--from", str(directory), "--json", *extra)
    assert out.code == 0, out
    return json.loads(out.out)


def truth(repo: Path, line=None):
    led = open_ledger(repo, line)
    st = led.state()
    by_summary = {}
    for e in led.entries():
        by_summary.setdefault(e.summary, []).append(e)
    return st, by_summary


def in_force(repo: Path, line=None) -> set:
    st, _ = truth(repo, line)
    return {st.get(i).summary for i in st.decision_ids}


def copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


# ---- reading each format ---------------------------------------------------------------
def test_adr_tools_file_reads_title_status_date_and_links():
    a = core_adr.parse_adr(
        "0004-use-postgresql-for-persistence.md",
        (ADR / "adr-tools" / "0004-use-postgresql-for-persistence.md").read_text(),
    )
    assert (a.key, a.number, a.title, a.status, a.date) == (
        "4",
        4,
        "Use PostgreSQL for persistence",
        "accepted",
        "2023-09-11",
    )
    assert a.supersedes == ("0002-use-mysql-for-persistence.md",) and a.superseded_by == ()
    assert a.body.startswith("## Context") and "## Status" not in a.body and "Date:" not in a.body
    old = core_adr.parse_adr(
        "0002-use-mysql-for-persistence.md", (ADR / "adr-tools" / "0002-use-mysql-for-persistence.md").read_text()
    )
    assert old.status == "superseded" and old.superseded_by == ("0004-use-postgresql-for-persistence.md",)


def test_madr_front_matter_and_bullet_metadata_are_read():
    a = core_adr.parse_adr("0002-x.md", (ADR / "madr" / "0002-choose-rabbitmq-as-message-broker.md").read_text())
    assert (a.title, a.status, a.date) == ("Choose RabbitMQ as message broker", "superseded", "2022-11-15")
    assert a.superseded_by == ("0004-choose-kafka-as-message-broker.md",)
    assert a.body.startswith("- Deciders: Li Wei\n\n## Context and Problem Statement")
    kafka = core_adr.parse_adr("0004-y.md", (ADR / "madr" / "0004-choose-kafka-as-message-broker.md").read_text())
    assert kafka.header == {"paths": "src/events/**"}
    assert core_adr.entry_body(kafka).startswith("paths: src/events/**\n")
    redis = core_adr.parse_adr("0003-z.md", (ADR / "madr" / "0003-cache-sessions-in-redis.md").read_text())
    assert (redis.status, redis.date) == ("accepted", "2022-12-01")
    assert "* Deciders: Ana Souza" in redis.body and "Status" not in redis.body


def test_log4brains_date_named_files_are_keyed_by_their_stem():
    name = "20230215-use-nextjs-for-the-frontend.md"
    a = core_adr.parse_adr(name, (ADR / "log4brains" / name).read_text())
    assert (a.key, a.number, a.status, a.date) == (
        "20230215-use-nextjs-for-the-frontend",
        None,
        "superseded",
        "2023-02-15",
    )
    assert a.superseded_by == ("20230901-use-sveltekit-for-the-frontend.md",)
    assert not core_adr.is_adr_file("template.md") and not core_adr.is_adr_file("index.md")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("no heading here\n", "no title"),
        ("# T\n\nDate: 2023-02-30\n", "does not exist"),
        ("# T\n\nDate: last tuesday\n", "not YYYY-MM-DD"),
        ("---\nstatus: accepted\n# T\n", "not closed"),
    ],
)
def test_unreadable_adr_is_refused_with_its_file_name(text, problem):
    with pytest.raises(InputError, match=rf"0009-bad\.md: .*{problem}"):
        core_adr.parse_adr("0009-bad.md", text)


# ---- importing: the truth each format gives --------------------------------------------
def test_adr_tools_import_gives_decisions_corrections_open_and_note(repo):
    out = imp(repo, ADR / "adr-tools")
    assert (out["read"], out["added"], out["warnings"]) == (6, 7, [])
    st, by = truth(repo)
    assert in_force(repo) == {"Record architecture decisions", "Use PostgreSQL for persistence"}
    (postgres,) = by["Use PostgreSQL for persistence"]
    (mysql,) = by["Use MySQL for persistence"]
    assert postgres.kind == "correction" and postgres.parents == [mysql.id] and mysql.id in st.superseded
    (docker,) = by["Deploy with docker-compose"]
    assert docker.kind == "decision" and docker.id in st.superseded  # deprecated: recorded, not in force
    (closer,) = by["ADR 0003 deprecated: Deploy with docker-compose"]
    assert closer.parents == [docker.id] and closer.body.startswith("action: revert")
    assert [st.get(i).summary for i in st.open_ids] == ["Proposed: Adopt a GraphQL gateway"]
    assert by["Rejected: Write new services in Scala"][0].kind == "note"
    assert postgres.ts.isoformat() == "2023-09-11T00:00:00+00:00"
    assert postgres.body.endswith("adr: 0004-use-postgresql-for-persistence.md")


def test_madr_import_supersedes_from_the_old_records_status(repo):
    imp(repo, ADR / "madr")
    st, by = truth(repo)
    assert in_force(repo) == {"Use MADR for decisions", "Cache sessions in Redis", "Choose Kafka as message broker"}
    (kafka,) = by["Choose Kafka as message broker"]
    assert kafka.kind == "correction" and kafka.parents == [by["Choose RabbitMQ as message broker"][0].id]
    assert st.fold.facts[kafka.id]["paths"] == "src/events/**"  # the header reaches staleness
    assert by["Store uploads on NFS"][0].id in st.superseded


def test_log4brains_import_skips_template_and_index(repo):
    out = imp(repo, ADR / "log4brains")
    assert out["read"] == 5
    st, by = truth(repo)
    assert in_force(repo) == {"Use Log4brains to manage the ADRs", "Use SvelteKit for the frontend"}
    assert by["Use SvelteKit for the frontend"][0].parents == [by["Use Next.js for the frontend"][0].id]
    assert [st.get(i).summary for i in st.open_ids] == ["Proposed: Adopt feature flags"]
    assert "Rejected: Host everything on one VM" in by


# ---- re-importing ----------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["adr-tools", "madr", "log4brains"])
def test_reimporting_an_unchanged_directory_writes_nothing(repo, fmt):
    imp(repo, ADR / fmt)
    before = head(repo)
    out = imp(repo, ADR / fmt)
    assert (out["added"], out["commit"]) == (0, None) and head(repo) == before


def test_edited_adr_is_a_correction_of_its_previous_version(repo, tmp_path):
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    _, by = truth(repo)
    v1 = by["Use PostgreSQL for persistence"][0]
    edit(d / "0004-use-postgresql-for-persistence.md", "PostgreSQL 15", "PostgreSQL 16")
    out = imp(repo, d)
    assert out["added"] == 1
    st, by = truth(repo)
    v2 = next(e for e in by["Use PostgreSQL for persistence"] if e.id != v1.id)
    assert v2.kind == "correction" and v1.id in v2.parents and "PostgreSQL 16" in v2.body
    assert v2.ts > v1.ts
    assert [st.get(i).summary for i in st.decision_ids].count("Use PostgreSQL for persistence") == 1
    assert v2.id in st.decision_ids and v1.id in st.superseded
    assert by["Use MySQL for persistence"][0].id in st.superseded
    assert imp(repo, d)["added"] == 0


def test_second_edit_leaves_only_the_latest_version_in_force(repo, tmp_path):
    # a correction supersedes only while active: v3 must not bring v1 (or MySQL) back
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    target = d / "0004-use-postgresql-for-persistence.md"
    edit(target, "PostgreSQL 15", "PostgreSQL 16")
    imp(repo, d)
    edit(target, "PostgreSQL 16", "PostgreSQL 17")
    imp(repo, d)
    st, by = truth(repo)
    versions = by["Use PostgreSQL for persistence"]
    assert len(versions) == 3
    assert [st.get(i).body for i in st.decision_ids if st.get(i).summary.startswith("Use P")] == [
        versions[-1].body
    ] and "PostgreSQL 17" in versions[-1].body
    assert in_force(repo) == {"Record architecture decisions", "Use PostgreSQL for persistence"}


def test_new_adr_superseding_an_old_one_adds_only_itself(repo, tmp_path):
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    (d / "0007-keep-decisions-in-the-ledger.md").write_text(
        "# 7. Keep decisions in the ledger\n\nDate: 2024-02-01\n\n## Status\n\nAccepted\n\n"
        "Supersedes [1. Record architecture decisions](0001-record-architecture-decisions.md)\n\n"
        "## Context\n\nADR files are not read by our agents.\n\n## Decision\n\nDecisions go to the ledger.\n"
    )
    # adr-tools also rewrites the old record's status; its text is unchanged, so it is not a new version
    edit(
        d / "0001-record-architecture-decisions.md",
        "## Status\n\nAccepted",
        "## Status\n\nSuperseded by [7. Keep decisions in the ledger](0007-keep-decisions-in-the-ledger.md)",
    )
    out = imp(repo, d)
    assert [e["summary"] for e in out["entries"]] == ["Keep decisions in the ledger"]
    st, by = truth(repo)
    assert by["Keep decisions in the ledger"][0].parents == [by["Record architecture decisions"][0].id]
    assert in_force(repo) == {"Keep decisions in the ledger", "Use PostgreSQL for persistence"}


def test_edited_superseded_adr_stays_out_of_force(repo, tmp_path):
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    edit(d / "0002-use-mysql-for-persistence.md", "MySQL 5.7", "MySQL 8.0")
    out = imp(repo, d)
    assert out["added"] == 2  # the new MySQL version, and Postgres again over it
    assert in_force(repo) == {"Record architecture decisions", "Use PostgreSQL for persistence"}
    st, by = truth(repo)
    assert all(e.id in st.superseded for e in by["Use MySQL for persistence"])
    assert imp(repo, d)["added"] == 0


def test_deprecating_then_accepting_again_follows_the_status(repo, tmp_path):
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    target = d / "0001-record-architecture-decisions.md"
    edit(target, "## Status\n\nAccepted", "## Status\n\nDeprecated")
    assert imp(repo, d)["added"] == 1
    assert "Record architecture decisions" not in in_force(repo)
    assert imp(repo, d)["added"] == 0
    edit(target, "## Status\n\nDeprecated", "## Status\n\nAccepted")
    assert imp(repo, d)["added"] == 1
    assert "Record architecture decisions" in in_force(repo)
    assert imp(repo, d)["added"] == 0


def test_accepting_a_proposed_adr_closes_its_open_item(repo, tmp_path):
    d = copy(ADR / "adr-tools", tmp_path)
    imp(repo, d)
    edit(d / "0005-adopt-a-graphql-gateway.md", "## Status\n\nProposed", "## Status\n\nAccepted")
    imp(repo, d)
    st, _ = truth(repo)
    assert st.open_ids == []
    assert "Adopt a GraphQL gateway" in in_force(repo)
    assert imp(repo, d)["added"] == 0


def test_successor_that_stops_superseding_brings_the_old_decision_back(repo, tmp_path):
    d = copy(ADR / "madr", tmp_path)
    imp(repo, d)
    edit(
        d / "0002-choose-rabbitmq-as-message-broker.md",
        'status: "superseded by [ADR-0004](0004-choose-kafka-as-message-broker.md)"',
        "status: accepted",
    )
    imp(repo, d)
    assert {"Choose RabbitMQ as message broker", "Choose Kafka as message broker"} <= in_force(repo)
    assert imp(repo, d)["added"] == 0


def test_superseded_by_a_missing_adr_is_not_in_force_and_warned(repo, tmp_path):
    d = tmp_path / "adr"
    d.mkdir()
    (d / "0001-a.md").write_text("# 1. Use A\n\nDate: 2024-01-01\n\n## Status\n\nSuperseded by [9. B](0009-b.md)\n")
    out = imp(repo, d)
    assert any("0009-b.md" in w for w in out["warnings"])
    assert in_force(repo) == set()


# ---- refused input writes nothing ------------------------------------------------------
@pytest.mark.parametrize(
    "files, message",
    [
        ({"README.md": "# notes\n"}, "no ADR files"),
        (
            {
                "0001-a.md": "# A\n\n* Status: accepted, supersedes [B](0002-b.md)\n",
                "0002-b.md": "# B\n\n* Status: accepted, supersedes [A](0001-a.md)\n",
            },
            "cycle",
        ),
        ({"0001-a.md": "# A\n", "1-b.md": "# B\n"}, "are both ADR 0001"),
        ({"0001-a.md": b"# A\n\n\xff\xfe\n"}, "not valid UTF-8"),
    ],
)
def test_bad_adr_directory_is_refused_and_nothing_is_written(repo, tmp_path, files, message):
    d = tmp_path / "bad"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    before = snapshot(repo)
    out = cli(repo, "import", "--from", str(d))
    assert out.code == 2 and message in out.err, out
    assert snapshot(repo) == before


def test_import_of_a_missing_path_still_names_it(repo, tmp_path):
    out = cli(repo, "import", "--from", str(tmp_path / "nope.md"))
    assert out.code == 2 and "nope.md" in out.err


# ---- exporting MADR --------------------------------------------------------------------
def test_export_writes_decisions_in_force_as_madr_files_keeping_adr_numbers(repo, tmp_path):
    imp(repo, ADR / "adr-tools")
    out = cli(repo, "export", "--format", "adr", "-o", str(tmp_path / "out"))
    assert out.code == 0, out
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["0001-record-architecture-decisions.md", "0004-use-postgresql-for-persistence.md"]
    text = (tmp_path / "out" / names[1]).read_text()
    assert text.startswith("---\nstatus: accepted\ndate: 2023-09-11\n")
    assert re.search(r"(?m)^lifeline-id: [0-9a-f]{64}$", text) and "adr: " not in text
    assert "# Use PostgreSQL for persistence\n" in text and "numeric(12,2)" in text


def test_exported_madr_imports_back_to_the_same_decisions(repo, tmp_path):
    led = open_ledger(repo)
    led.log(Draft(kind="decision", summary="Queue: SQS for outbound mail", body="subject: queue\n\nNo broker to run."))
    imp(repo, ADR / "madr")
    assert cli(repo, "export", "--format", "adr", "-o", str(tmp_path / "out")).code == 0
    other = init_repo(tmp_path / "other")
    imp(other, tmp_path / "out")
    assert in_force(other) == in_force(repo)
    st, by = truth(other)
    assert "subject: queue" in by["Queue: SQS for outbound mail"][0].body  # header fields survive


def test_export_adr_refuses_a_non_empty_directory_and_stdout(repo, tmp_path):
    imp(repo, ADR / "adr-tools")
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.md").write_text("mine\n")
    out = cli(repo, "export", "--format", "adr", "-o", str(target))
    assert out.code == 2 and "not an empty directory" in out.err
    assert sorted(p.name for p in target.iterdir()) == ["keep.md"]
    out = cli(repo, "export", "--format", "adr")
    assert out.code == 2 and "-o DIR" in out.err


def test_lifeline_md_export_to_a_directory_is_a_clear_error(repo, tmp_path):
    open_ledger(repo).log(Draft(kind="note", summary="n", body="b"))
    out = cli(repo, "export", "-o", str(tmp_path))
    assert out.code == 2 and "is a directory" in out.err


def test_a_hand_correction_of_an_imported_decision_is_not_undone_by_reimport(repo, tmp_path):
    imp(repo, ADR / "adr-tools")
    _, by = truth(repo)
    first = by["Record architecture decisions"][0]
    open_ledger(repo).log(
        Draft(
            kind="correction",
            summary="Decisions live in the ledger, not in ADR files",
            body="The agents read the ledger.",
            parents=[first.id],
        )
    )
    assert imp(repo, ADR / "adr-tools")["added"] == 0
    assert "Record architecture decisions" not in in_force(repo)


def test_adr_tools_amend_links_stay_in_the_body():
    a = core_adr.parse_adr(
        "0003-x.md",
        "# 3. X\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\nAmended by [5. Y](0005-y.md)\n\n## Context\n\nWhy.\n",
    )
    assert a.status == "accepted" and a.body == "## Context\n\nWhy.\n\n## Status notes\n\nAmended by [5. Y](0005-y.md)"
