"""`pull` warns when it brings in a second bootstrap, which needs the line's truth. Derived for
every pull, that was a whole cache build in a clone that had none: at 1,000,000 entries the
pull of 1,000 notes took 172 s of CPU, 2.5 s of it integrating them (docs/PERFORMANCE.md).
The truth is derived only when what arrived may hold a bootstrap
(tests/sync/test_clone_finds_its_ledger.py holds the warning itself)."""

from __future__ import annotations

from kit.home import hermetic  # noqa: F401
from kit.repos import project_on_remote
from kit.run import Via, cli, git


def test_a_pull_of_notes_into_a_clone_without_a_cache_builds_none(tmp_path):
    remote, a = project_on_remote(tmp_path, "a", upstream=True)
    for summary in ("Shop: a bootstrap", "First note"):
        kind = "bootstrap" if summary.startswith("Shop") else "note"
        assert cli(a, "log", "--kind", kind, "--summary", summary, "--body", "b", via=Via.THIS_PROCESS).code == 0
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", remote.as_uri(), str(b))
    git(b, "config", "lifeline.projection", "false")  # the projection file reads the line its own way
    assert cli(b, "pull", via=Via.THIS_PROCESS).code == 0
    cache = b / ".git" / "lifeline" / "main.sqlite3"
    cache.unlink(missing_ok=True)

    assert cli(a, "log", "--kind", "note", "--summary", "Second note", "--body", "b", via=Via.THIS_PROCESS).code == 0
    assert cli(a, "push", via=Via.THIS_PROCESS).code == 0
    r = cli(b, "pull", via=Via.THIS_PROCESS)
    assert r.code == 0 and "Second note" in git(b, "log", "-1", "--format=%s", "refs/lifeline/main") + r.out + r.err, r
    assert not cache.exists(), "the pull of a note derived the whole line's truth"
