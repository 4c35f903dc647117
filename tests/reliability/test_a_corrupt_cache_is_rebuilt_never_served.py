"""A damaged cache is detected and rebuilt, never served.

One real ledger (every kind, corrections, a revert, threads, checkpoints, pins) with a
cache built by the CLI; each case copies that repository, damages the cache file the
way it names (truncated, bytes flipped, rows and the fold edited with SQLite, a stale
tip, the wrong schema, a directory or a symlink in its place, journal leftovers, a seal
and stamp forged to match an edit) and runs `context`, `recall` and `status`. Each must
print exactly what a fresh cache gives, exit 0 and never show a traceback; the cache
left behind must be sound (its seal, `quick_check`, every row, the FTS index) and at
the line's head. Where the damage changed what the cache would serve, the run says on
stderr that it rebuilt it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from kit.entries import ts_at, varied_entries
from kit.home import AUTHOR
from kit.repos import init_repo, open_ledger
from kit.run import cli

from git_lifeline.core.entry import new_entry
from git_lifeline.views import cache_check
from git_lifeline.views.cache import LineCache
from git_lifeline.views.cache_rows import SCHEMA_VERSION

QUERY = "marche item reason"
COMMANDS = (("context",), ("recall", QUERY), ("status",))
WARNED = ("rebuilt", "did not match", "unreadable")


# ---- the ledger and what a fresh cache gives -------------------------------------------------
@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("corrupt") / "repo")
    led = open_ledger(repo)
    entries = varied_entries(44)
    led.append(entries[:36])
    led.state()
    older_tree = led.store.tree_id(led.head())
    decision = next(e for e in entries if e.kind == "decision")
    revision = new_entry(
        author=AUTHOR,
        kind="correction",
        summary="Revised: ça marche mieux",
        body="Because reason r.",
        parents=[decision.id],
        ts=ts_at(60),
    )
    revert = new_entry(
        author=AUTHOR,
        kind="correction",
        summary="Revert the revision",
        body="action: revert\n\nno",
        parents=[revision.id],
        ts=ts_at(61),
    )
    pin = new_entry(
        author=AUTHOR,
        kind="note",
        summary="Pin it",
        body=f"pin: {decision.id}\n\nkeep",
        parents=[decision.id],
        ts=ts_at(62),
    )
    led.append(entries[36:] + [revision, revert, pin])
    led.state()  # the revision and the revert: the fold's base written whole
    note = new_entry(author=AUTHOR, kind="note", summary="Noted after", body="So it goes.", ts=ts_at(63))
    led.append([note])  # folded onto the base by the CLI below: the cache holds a journal
    for args in COMMANDS:  # the CLI builds the cache as a user's first command does
        assert cli(repo, *args).code == 0
    fresh = {args: cli(repo, *args) for args in COMMANDS}
    for res in fresh.values():
        assert res.code == 0 and "warning" not in res.err, res
    assert "Decision" in fresh[("context",)].out and fresh[("recall", QUERY)].out.strip()
    return repo, older_tree, {args: shown(res.out, repo) for args, res in fresh.items()}


def shown(out: str, repo: Path) -> str:
    """What a command printed, without the repository's path (`status` names it)."""
    return out.replace(str(repo), "<repo>")


def cache_file(repo: Path) -> Path:
    return repo / ".git" / "lifeline" / "main.sqlite3"


def edit(sql: str, *params):
    def apply(path: Path, _ctx: dict) -> None:
        db = sqlite3.connect(str(path), isolation_level=None)
        db.execute(sql, params)
        db.close()

    return apply


def edit_fold(change):
    def apply(path: Path, _ctx: dict) -> None:
        db = sqlite3.connect(str(path), isolation_level=None)
        doc = json.loads(db.execute("SELECT value FROM meta WHERE key='fold'").fetchone()[0])
        change(doc)
        db.execute("UPDATE meta SET value=? WHERE key='fold'", (json.dumps(doc),))
        db.close()

    return apply


def edit_journal(change):
    """The fold's journal (the entries folded onto its base since it was written) changed."""

    def apply(path: Path, _ctx: dict) -> None:
        db = sqlite3.connect(str(path), isolation_level=None)
        lines = db.execute("SELECT value FROM meta WHERE key='journal'").fetchone()[0].splitlines()
        assert lines, "the pristine cache holds a journal: its last entries were appended"
        db.execute("UPDATE meta SET value=? WHERE key='journal'", ("".join(f"{i}\n" for i in change(lines)),))
        db.close()

    return apply


def truncate(at):
    def apply(path: Path, _ctx: dict) -> None:
        size = path.stat().st_size
        with open(path, "r+b") as f:
            f.truncate(at(size) if callable(at) else at)

    return apply


def flip(at, count: int = 1):
    def apply(path: Path, _ctx: dict) -> None:
        size = path.stat().st_size
        where = at(size) if callable(at) else at
        with open(path, "r+b") as f:
            f.seek(where)
            data = bytearray(f.read(count))
            f.seek(where)
            f.write(bytes(b ^ 0xFF for b in data))

    return apply


def scribble(seed: int, count: int = 64):
    """`count` random bytes written at random offsets past the header (a torn disk write)."""

    def apply(path: Path, _ctx: dict) -> None:
        rng = random.Random(seed)
        size = path.stat().st_size
        with open(path, "r+b") as f:
            for _ in range(count):
                f.seek(rng.randrange(100, size))
                f.write(bytes([rng.randrange(256)]))

    return apply


def replace_with(make):
    def apply(path: Path, ctx: dict) -> None:
        path.unlink()
        make(path, ctx)

    return apply


def forge_seal_and_stamp(change):
    """The edit, then a seal recomputed over it and the stamp rewritten: all that is left to
    catch it is what the seal cannot forge (rows re-checked as served, the count)."""

    def apply(path: Path, ctx: dict) -> None:
        change(path, ctx)
        db = sqlite3.connect(str(path), isolation_level=None)
        meta = dict(db.execute("SELECT key, value FROM meta"))
        count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
        fold_sum = cache_check.text_sum(meta["fold"])
        seal = cache_check.make_seal(
            SCHEMA_VERSION,
            meta["tree"],
            count,
            int(meta["rows"], 16),
            meta["standing_sum"],
            fold_sum,
            meta["journal"],
        )
        db.executemany("UPDATE meta SET value=? WHERE key=?", [(fold_sum, "fold_sum"), (seal, "seal")])
        db.close()
        cache_check.write_stamp(path, seal)

    return apply


def stamp_kept(change):
    """The edit, then the stamp rewritten (as if the file's times had been put back)."""

    def apply(path: Path, ctx: dict) -> None:
        change(path, ctx)
        seal = sqlite3.connect(str(path)).execute("SELECT value FROM meta WHERE key='seal'").fetchone()[0]
        cache_check.write_stamp(path, seal)

    return apply


def _hot_journal(path: Path, _ctx: dict) -> None:
    """The journal of a write that was interrupted: SQLite rolls it back at the next open."""
    saved = path.with_name("saved-journal")
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE entries SET summary='torn write' WHERE rowid IN (SELECT rowid FROM entries LIMIT 3)")
    db.execute("PRAGMA cache_spill=1")
    db.execute("UPDATE meta SET value='x' WHERE key='fold'")
    journal = path.with_name(path.name + "-journal")
    if journal.exists():
        shutil.copyfile(journal, saved)
    db.execute("ROLLBACK")
    db.close()
    if saved.exists():
        saved.rename(journal)
    else:  # nothing spilled: a journal header alone, which SQLite ignores
        journal.write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)


def _other_program(path: Path, _ctx: dict) -> None:
    db = sqlite3.connect(str(path))
    db.execute("CREATE TABLE notes (x TEXT)")
    db.execute("INSERT INTO notes VALUES ('not a cache')")
    db.commit()
    db.close()


def _symlink_to(target_of):
    def make(path: Path, ctx: dict) -> None:
        target = target_of(path, ctx)
        path.symlink_to(target)

    return make


def _garbage_elsewhere(path: Path, _ctx: dict) -> Path:
    target = path.parent.parent / "garbage.bin"
    target.write_bytes(b"garbage " * 4096)
    return target


def _symlink_to_another_sound_cache(path: Path, _ctx: dict) -> None:
    """A sound cache of another ledger (this one with its newest entries gone) linked in."""
    other = path.with_name("other.sqlite3")
    shutil.copyfile(path, other)
    db = sqlite3.connect(str(other), isolation_level=None)
    db.execute("DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries ORDER BY rowid DESC LIMIT 5)")
    db.close()
    path.unlink()
    path.symlink_to(other)


def _dir(path: Path, _ctx: dict) -> None:
    path.mkdir()


def _stale_tip(path: Path, ctx: dict) -> None:
    edit("UPDATE meta SET value=? WHERE key='tree'", ctx["older_tree"])(path, ctx)


def _extra_row(path: Path, _ctx: dict) -> None:
    e = new_entry(author=AUTHOR, kind="decision", summary="A decision nobody made", body="forged row", ts=ts_at(90))
    text = e.to_json().decode()
    edit(
        "INSERT INTO entries(rowid, id, blob, ts, kind, ok, summary, body, dedup, json) "
        "VALUES (9999, ?, ?, '2024-05-01T14:00:00.123456Z', 'decision', 1, ?, ?, NULL, ?)",
        e.id,
        "0" * 40,
        e.summary,
        e.body,
        text,
    )(path, _ctx)


def _swap_rowids(path: Path, _ctx: dict) -> None:
    db = sqlite3.connect(str(path), isolation_level=None)
    a, b = [r[0] for r in db.execute("SELECT rowid FROM entries ORDER BY rowid LIMIT 2")]
    db.execute("UPDATE entries SET rowid=-1 WHERE rowid=?", (a,))
    db.execute("UPDATE entries SET rowid=? WHERE rowid=?", (a, b))
    db.execute("UPDATE entries SET rowid=? WHERE rowid=-1", (b,))
    db.close()


def _decision_json(path: Path, _ctx: dict) -> None:
    db = sqlite3.connect(str(path), isolation_level=None)
    rowid, text = db.execute("SELECT rowid, json FROM entries WHERE kind='decision' ORDER BY ts DESC").fetchone()
    doc = json.loads(text)
    doc["summary"] = "We chose the opposite"
    db.execute("UPDATE entries SET json=?, summary=? WHERE rowid=?", (json.dumps(doc), doc["summary"], rowid))
    db.close()


def _drop_decision(doc: dict) -> None:
    doc["decisions"].pop()


def _unsupersede(doc: dict) -> None:
    doc["derived"]["superseded"] = []


def _kinds(doc: dict) -> None:
    doc["kinds"]["decision"] = doc["kinds"].get("decision", 0) + 7


def _wrong_thread(doc: dict) -> None:
    doc["threads"] = {k: list(reversed(v)) for k, v in doc["threads"].items()}


def _pins(doc: dict) -> None:
    doc["pins"] = []


PAGE = 4096
CASES = {
    # the file cut short, or emptied
    "zero-length file": truncate(0),
    "truncated inside the header (100 bytes)": truncate(100),
    "truncated to one page": truncate(PAGE),
    "truncated to two pages": truncate(2 * PAGE),
    "truncated to a quarter": truncate(lambda n: n // 4 // PAGE * PAGE),
    "truncated to half": truncate(lambda n: n // 2),
    "last page cut off": truncate(lambda n: n - PAGE),
    "last byte cut off": truncate(lambda n: n - 1),
    # bytes flipped
    "magic string flipped": flip(0, 16),
    "page size flipped": flip(16, 2),
    "journal mode bytes flipped": flip(18, 2),
    "page count flipped": flip(28, 4),
    "schema cookie flipped": flip(40, 4),
    "first table page flipped": flip(PAGE + 8, 32),
    "a page in the middle flipped": flip(lambda n: n // 2 // PAGE * PAGE + 200, 64),
    "last page flipped": flip(lambda n: n - PAGE + 100, 64),
    "torn writes, seed 1": scribble(1),
    "torn writes, seed 2": scribble(2),
    "torn writes, seed 3": scribble(3, 8),
    "one byte, seed 4": scribble(4, 1),
    "one byte, seed 5": scribble(5, 1),
    "random bytes instead of the file": replace_with(lambda p, c: p.write_bytes(os.urandom(3 * PAGE))),
    "text instead of the file": replace_with(lambda p, c: p.write_text("this is not a database\n" * 200)),
    # rows edited with SQLite
    "a summary changed": edit(
        "UPDATE entries SET summary='We chose the opposite' "
        "WHERE rowid=(SELECT max(rowid) FROM entries WHERE kind='decision')"
    ),
    "a decision's json changed": _decision_json,
    "a body changed": edit("UPDATE entries SET body=body || ' (edited)' WHERE rowid=3"),
    "a row deleted": edit("DELETE FROM entries WHERE rowid=(SELECT max(rowid) FROM entries WHERE kind='decision')"),
    "an extra row": _extra_row,
    "a row marked broken": edit("UPDATE entries SET ok=0 WHERE rowid=5"),
    "a row's ts changed": edit("UPDATE entries SET ts='2099-01-01T00:00:00.000000Z' WHERE rowid=4"),
    "a row's kind changed": edit("UPDATE entries SET kind='note' WHERE kind='decision' AND rowid<20"),
    "a row's dedup key changed": edit("UPDATE entries SET dedup='forged' WHERE rowid=6"),
    "a row's blob oid changed": edit("UPDATE entries SET blob=? WHERE rowid=7", "1" * 40),
    "two rows' rowids swapped": _swap_rowids,
    "the search index emptied": edit("INSERT INTO fts(fts) VALUES ('delete-all')"),
    "the search index's data scribbled": edit("UPDATE fts_data SET block=zeroblob(length(block)) WHERE id>10"),
    "the entries table dropped": edit("DROP TABLE entries"),
    # the fold and the tip
    "a decision dropped from the fold": edit_fold(_drop_decision),
    "supersession cleared in the fold": edit_fold(_unsupersede),
    "kind counts changed in the fold": edit_fold(_kinds),
    "thread order reversed in the fold": edit_fold(_wrong_thread),
    "pins cleared in the fold": edit_fold(_pins),
    "the fold is not JSON": edit("UPDATE meta SET value='{not json' WHERE key='fold'"),
    "the fold is missing": edit("DELETE FROM meta WHERE key='fold'"),
    "the fold's sum edited": edit("UPDATE meta SET value=? WHERE key='fold_sum'", "0" * 64),
    "an entry dropped from the fold's journal": edit_journal(lambda lines: lines[1:]),
    "the fold's journal reordered": edit_journal(lambda lines: lines[::-1]),
    "the fold's journal is missing": edit("DELETE FROM meta WHERE key='journal'"),
    "the journal names a row the file lacks, seal and stamp forged": forge_seal_and_stamp(
        edit_journal(lambda lines: [*lines, "ab" * 32])
    ),
    "the base fold edited under its journal, stamp put back": stamp_kept(edit_fold(_kinds)),
    "a stale tip (an older tree)": _stale_tip,
    "a tip that names no object": edit("UPDATE meta SET value=? WHERE key='tree'", "ab" * 20),
    "the seal is missing": edit("DELETE FROM meta WHERE key='seal'"),
    "the rows digest edited": edit("UPDATE meta SET value='0000000000000001' WHERE key='rows'"),
    # the standing table (each entry's status by id, which recall reads for its hits)
    "a standing row edited": edit("UPDATE standing SET kind='carrier' WHERE kind='withdrawn'"),
    "the standing table emptied": edit("DELETE FROM standing"),
    "the standing table dropped": edit("DROP TABLE standing"),
    "the standing sums edited": edit("UPDATE meta SET value=? WHERE key='standing'", "0" * 16 * 4096),
    "the standing sums' sum edited": edit("UPDATE meta SET value=? WHERE key='standing_sum'", "0" * 64),
    "a standing row edited, stamp put back": stamp_kept(
        edit("UPDATE standing SET kind='superseded', successor='' WHERE kind='carrier'")
    ),
    "standing rows deleted, stamp put back": stamp_kept(edit("DELETE FROM standing WHERE kind='carrier'")),
    "a standing row added, stamp put back": stamp_kept(
        edit(
            "INSERT INTO standing SELECT bucket, id || 'x', kind, valid_from, valid_until, successor "
            "FROM standing WHERE kind='carrier'"
        )
    ),
    # the schema
    "an older schema version": edit("UPDATE meta SET value='5' WHERE key='version'"),
    "a newer schema version": edit("UPDATE meta SET value='999' WHERE key='version'"),
    "the version is missing": edit("DELETE FROM meta WHERE key='version'"),
    "another program's database": replace_with(_other_program),
    # edits that put the file's stamp back (only the seal and the served rows are left)
    "fold edited, stamp put back": stamp_kept(edit_fold(_drop_decision)),
    "stale tip, stamp put back": stamp_kept(_stale_tip),
    "row deleted, stamp put back": stamp_kept(edit("DELETE FROM entries WHERE rowid=8")),
    "extra row, stamp put back": stamp_kept(_extra_row),
    "a decision's json changed, seal and stamp forged": forge_seal_and_stamp(_decision_json),
    "a served row (the identity) marked broken, seal and stamp forged": forge_seal_and_stamp(
        edit("UPDATE entries SET ok=0 WHERE kind='bootstrap'")
    ),
    # something else where the file belongs
    "an empty directory in its place": replace_with(_dir),
    "a symlink to garbage": replace_with(_symlink_to(_garbage_elsewhere)),
    "a symlink to another ledger's sound cache": _symlink_to_another_sound_cache,
    "a dangling symlink": replace_with(_symlink_to(lambda p, c: p.with_name("nowhere.sqlite3"))),
    # leftovers beside it
    "a hot journal of an interrupted write": _hot_journal,
    "a garbage journal": lambda p, c: p.with_name(p.name + "-journal").write_bytes(os.urandom(2 * PAGE)),
    "a garbage WAL and shared-memory file": lambda p, c: (
        p.with_name(p.name + "-wal").write_bytes(os.urandom(PAGE)),
        p.with_name(p.name + "-shm").write_bytes(os.urandom(PAGE)),
    ),
    "a garbage stamp": lambda p, c: cache_check.stamp_path(p).write_text("{not json"),
    "the stamp deleted": lambda p, c: cache_check.stamp_path(p).unlink(),
}
# A cache of another release is replaced without a word, as is an empty file (a new cache).
SILENT = {"an older schema version", "a newer schema version", "zero-length file"}


def contents(path: Path, scratch: Path):
    """Everything the cache holds, read through SQLite as the next command opens it (a
    copy, with whatever journal lies beside it); None when it cannot be read."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(path.parent, scratch)
    try:
        db = sqlite3.connect(str(scratch / path.name))
        try:
            return (
                db.execute("SELECT key, value FROM meta ORDER BY key").fetchall(),
                db.execute("SELECT * FROM entries ORDER BY rowid").fetchall(),
                db.execute("SELECT rowid, summary, body FROM fts WHERE fts MATCH 'marche' ORDER BY rowid").fetchall(),
                db.execute("SELECT * FROM standing ORDER BY bucket, id").fetchall(),
            )
        finally:
            db.close()
    except sqlite3.Error:
        return None


def assert_sound_and_current(repo: Path) -> None:
    """The cache file left behind passes every check and reflects the line's head."""
    path = cache_file(repo)
    assert path.is_file() and not path.is_symlink()
    led = open_ledger(repo)
    cache = LineCache(led.store)
    db = cache.open()
    try:
        assert cache.mode == "file" and not cache.warnings, cache.warnings
        sealed = cache_check.read_sealed(db, SCHEMA_VERSION)
        assert sealed is not None and sealed.tree == led.store.tree_id(led.head())
        cache_check.full_check(db, sealed)
    finally:
        cache.close()


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_cache_is_never_served(pristine, tmp_path, case, record_counts):
    source, older_tree, fresh = pristine
    repo = tmp_path / "repo"
    shutil.copytree(source, repo, symlinks=True)
    path = cache_file(repo)
    sealed = sqlite3.connect(str(path)).execute("SELECT value FROM meta WHERE key='seal'").fetchone()[0]
    cache_check.write_stamp(path, sealed)  # the copy, as this process would have left it
    before = contents(path, tmp_path / "scratch")
    CASES[case](path, {"older_tree": older_tree})
    # damage SQLite does not see (a byte in free space, a garbage journal it ignores) may
    # leave the cache as it was: kept, and nothing to say
    harmless = path.is_file() and not path.is_symlink() and contents(path, tmp_path / "scratch") == before
    runs = {args: cli(repo, *args) for args in COMMANDS}
    for args, res in runs.items():
        assert res.code == 0, (case, args, res)
        assert "Traceback" not in res.err and "internal error" not in res.err, (case, res)
        assert shown(res.out, repo) == fresh[args], (case, args, res.err)
    warned = any(w in res.err for res in runs.values() for w in WARNED)
    assert warned or harmless or case in SILENT, (
        case,
        "damage that changed the cache went unmentioned",
        runs[("context",)].err,
    )
    assert_sound_and_current(repo)
    again = cli(repo, "context")
    assert again.code == 0 and again.out == fresh[("context",)] and "warning" not in again.err, (case, again)
    record_counts("corrupt cache", tried=1, held=1, lost=0, warned=int(warned), harmless=int(harmless and not warned))


def test_a_directory_with_files_in_its_place_is_left_alone_and_the_line_folded_in_memory(
    pristine, tmp_path, record_counts
):
    """Not ours to delete: the commands still answer, from memory, and say why."""
    source, _older, fresh = pristine
    repo = tmp_path / "repo"
    shutil.copytree(source, repo, symlinks=True)
    path = cache_file(repo)
    path.unlink()
    path.mkdir()
    (path / "keep.txt").write_text("somebody's file\n")
    for args in COMMANDS:
        res = cli(repo, *args)
        assert res.code == 0 and shown(res.out, repo) == fresh[args], (args, res)
        assert "Traceback" not in res.err and "is a directory" in res.err, res
    assert (path / "keep.txt").read_text() == "somebody's file\n"
    record_counts("corrupt cache", tried=1, held=1, lost=0)


def test_enough_kinds_of_damage_are_tried():
    assert len(CASES) >= 40
