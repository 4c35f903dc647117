"""The HTTP server's rate limit keeps one bucket per token (tokenless calls: per address), up
to MAX_BUCKETS. Past the bound, each call with a key not seen yet rebuilt the whole table to
drop idle buckets, and none is idle while an attacker sends a new made-up token per call:
some 6 ms of the event loop per request once 10,000 were in (10,000 more took 60 s), a
server stalled by about 170 requests a second that need no valid token. The table is now
least recently used first and trimmed by one per new key."""

from __future__ import annotations

import time

from git_lifeline.mcp.http import MAX_BUCKETS, RateLimit


def test_a_new_made_up_token_per_call_never_stalls_the_rate_limit():
    limit = RateLimit(app=None, per_minute=600)  # the gate alone: no call reaches an app here
    for n in range(MAX_BUCKETS):
        limit._take(f"t:{n}")
    started = time.monotonic()
    for n in range(MAX_BUCKETS, MAX_BUCKETS + 2_000):
        assert limit._take(f"t:{n}") == 0.0, "a first call of a token is never made to wait"
    took = time.monotonic() - started
    assert took < 3.0, f"2,000 new tokens past the bound took {took:.1f} s"
    assert len(limit.buckets) <= MAX_BUCKETS


def test_a_busy_token_is_still_limited_among_many_made_up_ones():
    limit = RateLimit(app=None, per_minute=60)
    waits = []
    for n in range(200):
        limit._take(f"t:made-up-{n}")
        waits.append(limit._take("t:busy"))
    assert waits[:60] == [0.0] * 60 and all(w > 0 for w in waits[61:]), "the busy token's 61st call waits"
