"""`git lifeline verify` of a whole line returns no records, so it keeps of each entry only
what its cross-entry checks read (git/checks.py `Kept`): a line of a million entries must
be verified without holding every body in memory. An entry with an origin block is kept
whole, so a copy that does not match its source is still refused."""

from __future__ import annotations

from kit.entries import make_entry, path_of, stored_entry, ts_at
from kit.repos import init_repo, open_ledger
from kit.tamper import add_commit

from git_lifeline.core.entry import Entry
from git_lifeline.git.checks import Kept
from git_lifeline.git.lines import origin_block
from git_lifeline.git.verify import verify_log


def test_verify_of_a_whole_line_holds_ids_times_and_parents_not_bodies(tmp_path):
    repo = init_repo(tmp_path / "repo")
    first, second = make_entry(1), make_entry(2)
    open_ledger(repo).append([first, second])
    report = verify_log(open_ledger(repo).store)
    assert report.ok, report.problems
    assert report.entries == 2
    assert {type(r) for r in report.added.values()} == {Kept}
    kept = report.added[second.id]
    assert (kept.id, kept.ts, list(kept.parents)) == (second.id, second.ts, list(second.parents))


def test_an_entry_naming_an_origin_is_kept_whole_and_a_forged_copy_still_fails(tmp_path):
    repo = init_repo(tmp_path / "repo")
    source = make_entry(1)
    open_ledger(repo).append([source])
    forged = stored_entry(
        kind="decision",
        summary="Not what the source says",
        body="Because.\n\n" + origin_block("main", source.id),
        ts=ts_at(5),
    )
    add_commit(repo, lambda files: {**files, path_of(forged.id): forged.to_json()})
    report = verify_log(open_ledger(repo).store)
    assert isinstance(report.added[forged.id], Entry)
    assert "bad-origin" in {p.code for p in report.problems}, report.problems
