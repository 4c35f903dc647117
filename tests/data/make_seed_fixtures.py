"""Generate the interop fixtures with the real lifeline-context 0.6.1.

    python tests/data/make_seed_fixtures.py

When the running python cannot import lifeline-context 0.6.1, the script uses
LIFELINE_SEED_PYTHON if set, else creates `.venv-seed/` (a venv of its own,
`pip install lifeline-context==0.6.1`) and re-runs itself there. Everything in
tests/data/seed/ is written by the seed itself (its CLI, run in-process); this
script only drives it and records what it produced:

* ledger.db, research.db, LIFELINE.md, LIFELINE.research.md: a varied two-line
  ledger (all 17 kinds, corrections, threads, checkpoints, a pin and an unpin, a
  typed relation, unicode, multi-line bodies with markdown, CRLF and tabs, an
  agent-written entry, a promoted entry and a cross-line parent);
* LIFELINE.legacy.md: the heading-only format (no end sentinel, bodies closed by
  `---`, parents implied by order) that older ledgers use, with the ids the
  seed's own `migrate` computes for it;
* bad_*: ledgers the seed accepts but cannot round-trip through its own
  markdown (empty summary, a summary with a newline, a body containing the end
  sentinel), as .db and as the .md it renders;
* ids.json: per source, every entry as the seed stores it (seq order).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "seed"
ROOT = HERE.parent.parent
SEED_VERSION = "0.6.1"


def _seed_python() -> str:
    env = os.environ.get("LIFELINE_SEED_PYTHON")
    if env:
        return env
    venv = ROOT / ".venv-seed"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"lifeline-context=={SEED_VERSION}"], check=True)
    return str(py)


def _have_seed() -> bool:
    try:
        from importlib.metadata import version

        return version("lifeline-context") == SEED_VERSION
    except Exception:
        return False


class Seed:
    """Drives the seed's CLI in-process inside one project directory."""

    def __init__(self, root: Path):
        self.root = root

    def __call__(self, *argv: str) -> str:
        from lifeline.cli import main

        buf = io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.root)
        try:
            with contextlib.redirect_stdout(buf):
                code = main(list(argv))
        finally:
            os.chdir(cwd)
        if code != 0:
            raise SystemExit(f"seed {' '.join(argv)} failed ({code}): {buf.getvalue()}")
        return buf.getvalue()

    def rows(self, db: str) -> list:
        con = sqlite3.connect(self.root / ".lifeline" / db)
        try:
            out = []
            for seq, payload in con.execute("SELECT seq, payload FROM entries ORDER BY seq"):
                doc = json.loads(payload)
                doc["seq"] = seq
                out.append(doc)
            return out
        finally:
            con.close()

    def find(self, db: str, summary: str) -> str:
        ids = [r["id"] for r in self.rows(db) if r["summary"] == summary]
        assert len(ids) == 1, (summary, ids)
        return ids[0]


def build_varied(seed: Seed) -> None:
    A = ["--author", "Ana <ana@example.com>"]
    seed(
        "log",
        "--kind",
        "bootstrap",
        "--summary",
        "Fixture project: a ledger for interop tests",
        *A,
        "--body",
        "Why: git-lifeline must read what lifeline-context wrote.\n\nIt has two lines, ledger and research.",
    )
    seed(
        "log",
        "--kind",
        "decision",
        "--summary",
        "Database: MongoDB",
        *A,
        "--body",
        "Schemaless documents fit the first prototype.",
    )
    seed(
        "log",
        "--kind",
        "decision",
        "--summary",
        "API style: REST — não GraphQL 🚀",
        *A,
        "--body",
        "Equipe já conhece REST; 日本語のテキストも入ります。\nCaching by URL is free.",
    )
    mongo = seed.find("ledger.db", "Database: MongoDB")
    seed(
        "log",
        "--kind",
        "correction",
        "--summary",
        "Database: PostgreSQL (supersedes MongoDB)",
        *A,
        "--parents",
        mongo,
        "--body",
        "Audit needs ACID transactions; MongoDB is superseded.",
    )
    seed(
        "log",
        "--kind",
        "open",
        "--summary",
        "Choose a message queue",
        *A,
        "--body",
        "Kafka or RabbitMQ? Throughput vs operational cost.",
    )
    queue = seed.find("ledger.db", "Choose a message queue")
    seed(
        "log",
        "--kind",
        "note",
        "--summary",
        "Benchmarked RabbitMQ at 20k msg/s",
        *A,
        "--thread",
        queue[:12],
        "--body",
        "Enough for the next two years of traffic.",
    )
    seed(
        "checkpoint",
        "--thread",
        queue[:12],
        "--goal",
        "pick the queue",
        "--done",
        "RabbitMQ benchmark",
        "--next",
        "benchmark Kafka",
        "--blocked",
        "waiting for a staging cluster",
        "--tried",
        "in-memory queue: lost messages on restart",
        *A,
    )
    seed("checkpoint", "--thread", "docs", "--next", "write the migration guide", *A)
    seed("checkpoint", "--thread", "docs", "--done", "migration guide drafted", "--next", "review it", *A)
    seed(
        "log",
        "--kind",
        "feature",
        "--summary",
        "Import from lifeline-context",
        *A,
        "--agent",
        "claude-code",
        "--provider",
        "anthropic",
        "--model",
        "claude-opus-4",
        "--body",
        "Teams move their ledger over with every id intact.",
    )
    seed(
        "log",
        "--kind",
        "fix",
        "--summary",
        "CRLF bodies keep their bytes",
        *A,
        "--body",
        "Line one\r\nLine two with a tab:\there\r\n\r\nTrailing CRLF paragraph.",
    )
    seed(
        "log",
        "--kind",
        "incident",
        "--summary",
        "Outage: projection truncated a body",
        *A,
        "--body",
        "A body that quoted an entry heading was cut:\n\n### #0002 — 2020-01-01T00:00:00+00:00 — "
        "decision\n\n- **author**: nobody\n\n---\n\nand a fence:\n\n```python\nprint('hi')\n```\n"
        "End of the report.",
    )
    seed("log", "--kind", "milestone", "--summary", "Interop milestone reached", *A, "--body", "All fixtures pass.")
    seed("log", "--kind", "release", "--summary", "v0.2.0", *A, "--body", "First release with import.")
    seed("log", "--kind", "service", "--summary", "Service: ledger-api", *A, "--body", "Serves the ledger over HTTP.")
    seed("log", "--kind", "api", "--summary", "API: GET /entries/{id}", *A, "--body", "Returns one entry as JSON.")
    seed("log", "--kind", "test", "--summary", "Test: ids survive a round trip", *A, "--body", "Import then export.")
    seed(
        "log",
        "--kind",
        "requirement",
        "--summary",
        "Requirement: lossless migration",
        *A,
        "--body",
        "Every id, parent and timestamp survives.",
    )
    seed("log", "--kind", "debt", "--summary", "Debt: no streaming parser", *A, "--body", "Files load into memory.")
    service = seed.find("ledger.db", "Service: ledger-api")
    api = seed.find("ledger.db", "API: GET /entries/{id}")
    seed("relate", "--from", service[:10], "--to", api[:10], "--rel", "implements", *A)
    rest = seed.find("ledger.db", "API style: REST — não GraphQL 🚀")
    seed("pin", rest[:10], "--body", "Every client depends on it.", *A)
    seed("log", "--kind", "decision", "--summary", "Logs: JSON lines", *A, "--body", "Machine-readable first.")
    logs = seed.find("ledger.db", "Logs: JSON lines")
    seed("pin", logs[:10], *A)
    seed("unpin", logs[:10], "--body", "Not foundational after all.", *A)
    # the research line, a promotion into the ledger line, and a cross-line parent
    seed(
        "--line",
        "research",
        "log",
        "--kind",
        "note",
        "--summary",
        "Paper: content-addressed ledgers",
        *A,
        "--body",
        "Merkle DAGs make tampering evident.",
    )
    seed(
        "--line",
        "research",
        "log",
        "--kind",
        "decision",
        "--summary",
        "Hash: sha256 over a length-prefixed form",
        *A,
        "--body",
        "Injective by construction; no field can shift into the next.",
    )
    hashdec = seed.find("research.db", "Hash: sha256 over a length-prefixed form")
    seed("promote", "--from", "research", "--to", "ledger", "--id", hashdec[:12])
    paper = seed.find("research.db", "Paper: content-addressed ledgers")
    seed(
        "log",
        "--kind",
        "note",
        "--summary",
        "Ledger design follows the research paper",
        *A,
        "--parents",
        f"research:{paper[:12]}",
        "--body",
        "Cross-line anchor to the research line.",
    )
    seed(
        "log",
        "--kind",
        "checkpoint",
        "--summary",
        "checkpoint main: ship the importer",
        *A,
        "--body",
        "thread: main\nnext:\n  - ship the importer\n  - measure it",
    )
    seed("rebuild")
    seed("--line", "research", "rebuild")


def legacy_markdown(rows: list) -> str:
    """The heading-only format: no end sentinel, each body closed by `---`, and
    parents left out where they are the previous entry (the format's implicit chain)."""
    out = ["# LIFELINE — legacy\n\n## Entries\n"]
    prev = None
    for n, r in enumerate(rows, 1):
        implicit = r["parents"] == ([prev] if prev else [])
        fields = [
            f"- **author**: {r['author']}",
            f"- **agent**: {r['agent']}",
            f"- **provider**: {r['provider']}",
            f"- **model**: {r['model']}",
            f"- **kind**: {r['kind']}",
            f"- **summary**: {r['summary']}",
        ]
        if not implicit:
            fields.append(f"- **parents**: {', '.join(r['parents']) if r['parents'] else '—'}")
        fields.append(f"- **hash**: {r['id']}")
        out.append(
            f"\n### #{n:04d} — {r['ts']} — {r['kind']}\n\n"
            + "\n".join(fields)
            + f"\n\n**Body**:\n{r['body'].strip()}\n\n---\n"
        )
        prev = r["id"]
    return "".join(out)


def build_legacy(seed: Seed) -> None:
    A = ["--author", "Bo <bo@example.com>"]
    seed("log", "--kind", "bootstrap", "--summary", "Legacy project", *A, "--body", "Written before the sentinel.")
    seed("log", "--kind", "decision", "--summary", "Cache: Redis", *A, "--body", "Fast enough.")
    seed("log", "--kind", "note", "--summary", "Redis needs a password", *A, "--body", "Set in the vault.")
    redis = seed.find("ledger.db", "Cache: Redis")
    seed(
        "log",
        "--kind",
        "correction",
        "--summary",
        "Cache: none (supersedes Redis)",
        *A,
        "--parents",
        redis,
        "--body",
        "The database answers fast enough; one fewer service.",
    )
    seed("log", "--kind", "open", "--summary", "Do we need a CDN?", *A, "--body", "Assets are small today.")


def build_bad(seed: Seed, what: str) -> None:
    A = ["--author", "Cy <cy@example.com>"]
    seed("log", "--kind", "bootstrap", "--summary", "A project", *A, "--body", "Why it exists.")
    if what == "empty_summary":
        seed("log", "--kind", "decision", "--summary", "", *A, "--body", "A decision nobody named.")
    elif what == "summary_newline":
        seed("log", "--kind", "decision", "--summary", "Two lines\nof summary", *A, "--body", "Pasted from a mail.")
    elif what == "body_sentinel":
        seed(
            "log",
            "--kind",
            "note",
            "--summary",
            "Quoting the projection format",
            *A,
            "--body",
            "Each entry ends with <!-- lifeline:end --> and then\nthe rest of this body is lost.",
        )
    seed("log", "--kind", "note", "--summary", "After the bad entry", *A, "--body", "Still fine.")
    seed("rebuild")


def seed_migrate(md: Path) -> list:
    """What the seed's own `migrate` makes of a markdown file: its rows, seq order."""
    with tempfile.TemporaryDirectory() as tmp:
        s = Seed(Path(tmp))
        shutil.copy(md, Path(tmp) / "IN.md")
        s("migrate", "--from", "IN.md")
        return s.rows("ledger.db")


def _strip_rows(rows: list) -> list:
    return [{k: r[k] for k in ("seq", "id", "ts", "kind", "summary", "parents")} for r in rows]


def main() -> None:
    if not _have_seed():
        py = _seed_python()
        os.execv(py, [py, str(Path(__file__).resolve())])
    os.environ["LIFELINE_AUTHOR"] = "fixture"
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    ids: dict = {"seed_version": SEED_VERSION}
    with tempfile.TemporaryDirectory() as tmp:
        s = Seed(Path(tmp))
        build_varied(s)
        for name in ("ledger.db", "research.db"):
            shutil.copy(Path(tmp) / ".lifeline" / name, OUT / name)
        shutil.copy(Path(tmp) / "LIFELINE.md", OUT / "LIFELINE.md")
        shutil.copy(Path(tmp) / "LIFELINE.research.md", OUT / "LIFELINE.research.md")
        ids["ledger"] = _strip_rows(s.rows("ledger.db"))
        ids["research"] = _strip_rows(s.rows("research.db"))
        ids["ledger_md_migrated"] = _strip_rows(seed_migrate(OUT / "LIFELINE.md"))
    with tempfile.TemporaryDirectory() as tmp:
        s = Seed(Path(tmp))
        build_legacy(s)
        legacy = legacy_markdown(s.rows("ledger.db"))
        (OUT / "LIFELINE.legacy.md").write_text(legacy, encoding="utf-8", newline="")
        ids["legacy"] = _strip_rows(s.rows("ledger.db"))
        ids["legacy_md_migrated"] = _strip_rows(seed_migrate(OUT / "LIFELINE.legacy.md"))
    for what in ("empty_summary", "summary_newline", "body_sentinel"):
        with tempfile.TemporaryDirectory() as tmp:
            s = Seed(Path(tmp))
            build_bad(s, what)
            shutil.copy(Path(tmp) / ".lifeline" / "ledger.db", OUT / f"bad_{what}.db")
            shutil.copy(Path(tmp) / "LIFELINE.md", OUT / f"bad_{what}.md")
            ids[f"bad_{what}"] = _strip_rows(s.rows("ledger.db"))
            ids[f"bad_{what}_md_migrated"] = _strip_rows(seed_migrate(OUT / f"bad_{what}.md"))
    for db in OUT.glob("*.db"):
        con = sqlite3.connect(db)  # fold the WAL in: the committed file must stand alone
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode=DELETE")
        con.close()
    (OUT / "ids.json").write_text(json.dumps(ids, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
