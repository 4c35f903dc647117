"""--as-of on the last day a datetime holds is read, not an internal error."""

from __future__ import annotations

from kit.repos import bare, configured_client, log_decision
from kit.run import cli


def test_as_of_the_last_representable_day_is_read_not_an_internal_error(tmp_path):
    repo = configured_client(tmp_path, "a", bare(tmp_path))
    log_decision(repo)
    r = cli(repo, "context", "--as-of", "9999-12-31")
    assert r.code == 0 and "First decision" in r.out, r
