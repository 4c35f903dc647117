"""`git lifeline verify` remembers which entries its secret scan and header check found
clean (git/verdicts.py), so that the next run does not scan them again. What it skips
must be the same content it judged, under the same rules; anything else is judged
again, and the gates never skip anything."""

from __future__ import annotations

from kit.entries import make_entry, path_of, stored_entry, ts_at
from kit.repos import init_repo, open_ledger
from kit.run import git
from kit.secrets import expand
from kit.tamper import add_commit

from git_lifeline.app import exchange
from git_lifeline.app.workspace import Workspace
from git_lifeline.errors import LifelineError, describe_failure
from git_lifeline.git import verdicts
from git_lifeline.git.repo import open_repo
from git_lifeline.git.verify import verify_log

TOKEN = expand("ghp_{{a:36}}", "verdicts")


def _leaked(**fields):
    return stored_entry(summary="Deploy notes", body="token " + TOKEN, ts=ts_at(50), **fields)


def _codes(repo) -> set:
    return {p.code for p in verify_log(open_ledger(repo).store).problems}


def _memo_files(repo) -> list:
    return sorted(p.name for p in (repo / ".git" / "lifeline").glob("verdicts-*.bin"))


def test_verify_still_finds_a_credential_added_after_a_clean_run(tmp_path):
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1), make_entry(2)])
    assert _codes(repo) == set()
    assert _memo_files(repo), "the clean run kept its verdicts"
    leaked = _leaked()
    add_commit(repo, lambda f: {**f, path_of(leaked.id): leaked.to_json()})
    assert "secret" in _codes(repo)
    assert "secret" in _codes(repo), "a refused entry is never remembered as clean"


def test_a_dedup_key_the_id_does_not_cover_is_judged_again(tmp_path):
    # The id does not hash dedup_key: a verdict kept for an entry without one says nothing
    # about a blob of the same id whose dedup_key holds a credential.
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1)])
    clean = stored_entry(summary="Deploy notes", body="Rotated the keys.", ts=ts_at(50))
    memo = verdicts.VerdictMemo.open(open_repo(str(repo)))
    memo.add(clean)
    memo.save()
    secretly = stored_entry(summary="Deploy notes", body="Rotated the keys.", ts=ts_at(50), dedup_key="token " + TOKEN)
    assert secretly.id == clean.id
    add_commit(repo, lambda f: {**f, path_of(secretly.id): secretly.to_json()})
    assert "secret" in _codes(repo)


def test_verdicts_kept_under_other_rules_are_not_used(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "repo")
    open_ledger(repo).append([make_entry(1)])
    leaked = _leaked()
    monkeypatch.setattr(verdicts, "rules_fingerprint", lambda: "older-rules")
    memo = verdicts.VerdictMemo.open(open_repo(str(repo)))
    memo.add(leaked)  # as if an older scan, without today's rule, had found it clean
    memo.save()
    monkeypatch.undo()
    add_commit(repo, lambda f: {**f, path_of(leaked.id): leaked.to_json()})
    assert "secret" in _codes(repo)
    assert _memo_files(repo) == [f"verdicts-{verdicts.rules_fingerprint()}.bin"], "the old rules' file is gone"


def test_a_pull_judges_every_incoming_entry_whatever_verify_remembers(tmp_path):
    upstream = init_repo(tmp_path / "upstream")
    open_ledger(upstream).append([make_entry(1)])
    leaked = _leaked()
    add_commit(upstream, lambda f: {**f, path_of(leaked.id): leaked.to_json()})
    clone = init_repo(tmp_path / "clone")
    git(clone, "remote", "add", "origin", str(upstream))
    memo = verdicts.VerdictMemo.open(open_repo(str(clone)))
    memo.add(leaked)  # even a verdict file that calls it clean
    memo.save()
    try:
        exchange.pull(Workspace.open(str(clone)), "origin")
    except LifelineError as exc:
        assert "secret" in describe_failure(exc)[0]
    else:
        raise AssertionError("the pull let a credential in")
    assert git(clone, "for-each-ref", "refs/lifeline/").strip() == ""
