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


def test_a_new_made_up_token_per_call_is_still_limited_by_its_address():
    """A token is only read by the rate limit, not verified: a caller who sent a new made-up
    token with every call got a fresh bucket each time and was never limited at all."""
    import asyncio

    from git_lifeline.mcp.http import ADDRESS_FACTOR

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    limit = RateLimit(app=app, per_minute=10)

    async def call(n: int, address: str) -> int:
        sent: list = []

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "client": (address, 40000), "headers": [(b"authorization", f"Bearer x{n}".encode())]}
        await limit(scope, None, send)
        return sent[0]["status"]

    async def run() -> tuple[list[int], int]:
        statuses = [await call(n, "192.0.2.7") for n in range(10 * ADDRESS_FACTOR + 5)]
        return statuses, await call(9999, "192.0.2.8")

    statuses, other = asyncio.run(run())
    assert statuses[: 10 * ADDRESS_FACTOR] == [200] * (10 * ADDRESS_FACTOR)
    assert set(statuses[10 * ADDRESS_FACTOR :]) == {429}, "made-up tokens from one address are limited"
    assert other == 200, "another address keeps its own bucket"


def test_a_call_its_token_refuses_does_not_spend_its_addresss_share():
    """A busy token's refused calls spent its address's share too, so one agent over its own
    limit locked out every other token behind the same address (a team's NAT)."""
    from git_lifeline.mcp.http import ADDRESS_FACTOR

    limit = RateLimit(app=None, per_minute=2)
    waits = [limit._take("t:busy", "n:192.0.2.7") for _ in range(10)]
    assert waits[:2] == [0.0, 0.0] and all(w > 0 for w in waits[2:])
    others = [limit._take(f"t:other-{n}", "n:192.0.2.7") for n in range(2 * ADDRESS_FACTOR)]
    assert others.count(0.0) == 2 * ADDRESS_FACTOR - 2, "the address spent only the two calls that went"
