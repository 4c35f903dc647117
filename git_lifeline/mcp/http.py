"""`git lifeline mcp --http [HOST:]PORT`: the same tools and resource over Streamable HTTP at
`/mcp`, for hosted agents.

What the MCP SDK does is used as it is: the Streamable HTTP transport, stateless (every
request stands alone, so any instance can answer it; 2026-07-28 clients send one self-
contained POST, 2025-11-25 clients an `initialize` then their calls, without a session id),
JSON responses; the bearer middleware (401 with `WWW-Authenticate`, naming the RFC 9728
metadata in OAuth mode, which the SDK also serves at `/.well-known/oauth-protected-resource
/mcp`); the request-body bound; DNS-rebinding protection (Host and Origin checked).

What is ours: the verifiers and scopes (auth.py), a per-token rate limit, what a caller is
shown (no repository paths), and the replica (app/replica.py): refresh from the remote
before reads, publish after writes, so instances in clones of one remote serve one ledger.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import re
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..app.replica import Replica
from ..app.tokens import default_path
from ..errors import InputError
from .server import Door, Gate, build_server

if TYPE_CHECKING:  # the SDK and starlette are imported when the server starts
    from mcp.server.auth.provider import AccessToken, TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .auth import Caller, JwtAccessTokens, TeamTokens

log = logging.getLogger("git_lifeline.mcp")

DEFAULT_PORT = 8808
MAX_BODY_BYTES = 512 * 1024  # an entry's body is at most 64 KiB; JSON escaping may double it
DEFAULT_RATE = 600  # calls per minute per token (a burst of as many)
ADDRESS_FACTOR = 4  # an address may spend this many tokens' worth: a team behind one NAT
MAX_BUCKETS = 10_000
TRUSTED_PROXIES = ("127.0.0.1", "::1")
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


@dataclass
class HttpOptions:
    bind: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token_file: Optional[str] = None
    issuer: Optional[str] = None
    audience: Optional[str] = None
    jwks: Optional[str] = None
    allow_origins: list[str] = field(default_factory=list)
    allow_hosts: list[str] = field(default_factory=list)
    remote: Optional[str] = None
    refresh_seconds: float = 5.0
    rate_per_minute: int = DEFAULT_RATE


def parse_address(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` (an IPv6 host in brackets) -> (host, port)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--http {text!r}: expected [HOST:]PORT with a port from 1 to 65535")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_patterns(host: str) -> list[str]:
    """The Host headers `--allow-host HOST` accepts: HOST as given, and a name (or a bracketed
    IPv6 address) given without a port also on any port. Without a port too, because a proxy's
    `proxy_set_header Host $host` forwards the name alone (docs/nginx-lifeline.conf)."""
    if re.fullmatch(r"[^:\[\]]+|\[[^\]]*\]", host):
        return [host, f"{host}:*"]
    return [host]  # with its port, or an IPv6 address without brackets (never a Host header)


class HttpGate(Gate):
    via = "http"

    def __init__(self, door: Door, replica: Replica):
        self.replica = replica
        here = [door.workspace.location, door.workspace.workdir]
        self.hidden = sorted(
            {str(p) for p in here if p is not None} | {str(Path(p).resolve()) for p in here if p}, key=len, reverse=True
        )

    def _caller(self) -> "Optional[Caller]":  # the request's caller, from the SDK's auth context
        from .auth import caller

        return caller()

    def missing_scope(self, tool: str) -> Optional[str]:
        who = self._caller()
        return who.missing_scope(tool) if who is not None else None

    def agent(self, claimed: str) -> str:
        who = self._caller()
        return who.agent if who is not None else claimed

    def propose_only(self) -> bool:
        who = self._caller()
        return who.propose_only if who is not None else False

    def refresh(self) -> None:
        self.replica.refresh()

    def recorded(self) -> None:
        self.replica.recorded()

    def publish(self) -> list[str]:
        return self.replica.publish()

    def shown(self, message: str) -> str:
        for path in self.hidden:
            message = message.replace(path, "<repository>")
        return message


class RateLimit:
    """A token bucket per bearer token and one per client address: `per_minute` calls a minute
    for a token or for an address's tokenless calls (in bursts of as many), ADDRESS_FACTOR
    times that for the calls with a token from one address. A token is only read here, not
    verified, so the address bucket is what stops one caller who makes up a new token for
    every call.
    Past either: 429 with Retry-After, before any work is done."""

    def __init__(self, app: "ASGIApp", per_minute: int):
        self.app = app
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        # least recently used first: a bucket past the bound is dropped in O(1); one idle a
        # minute is full again, so dropping it forgets nothing
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _keys(self, scope: "Scope") -> list[str]:
        """A tokenless call: its address's bucket ("a:"). With a token: the token's, and its
        address's share of token calls ("n:", ADDRESS_FACTOR times as large)."""
        client = scope.get("client") or ("?", 0)  # the real peer behind a trusted proxy (uvicorn)
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                return ["t:" + hashlib.sha256(value).hexdigest(), f"n:{client[0]}"]
        return [f"a:{client[0]}"]

    def _take(self, *keys: str) -> float:
        """0 when a call may go (each of its buckets spends one), else the seconds until one
        may; a call refused by one bucket spends none of the others."""
        now = time.monotonic()
        levels = {}
        for key in keys:
            scale = ADDRESS_FACTOR if key.startswith("n:") else 1
            rate, capacity = self.rate * scale, self.capacity * scale
            level, then = self.buckets.get(key, (capacity, now))
            levels[key] = (min(capacity, level + (now - then) * rate), rate)
        wait = max(((1 - level) / rate if level < 1 else 0.0) for level, rate in levels.values())
        for key, (level, _rate) in levels.items():
            self.buckets[key] = (level, now) if wait else (level - 1, now)
            self.buckets.move_to_end(key)
        # every call may bring a new key (a made-up token each): never more than the bound,
        # and never a pass over all of them per call
        while len(self.buckets) > MAX_BUCKETS:
            self.buckets.popitem(last=False)
        return wait

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] == "http" and self.rate > 0:
            wait = self._take(*self._keys(scope))
            if wait:
                body = json.dumps({"error": "rate_limited", "error_description": "too many requests"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 429,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"retry-after", str(int(wait) + 1).encode()),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _verifier(door: Door, opts: HttpOptions) -> "Optional[TokenVerifier]":
    """The token verifier the options ask for (team tokens, JWTs, or both), or None."""
    from .auth import JwtAccessTokens, TeamTokens

    team = None
    path = Path(opts.token_file) if opts.token_file else default_path(door.workspace.location)
    if opts.token_file or path.exists():  # tokens made with `mcp token add` protect the server
        team = TeamTokens(path, opts.audience)
    oauth = None
    given = [opts.issuer, opts.audience, opts.jwks]
    if any(given):
        if not all(given):
            raise InputError("OAuth mode needs all three of --issuer, --audience and --jwks")
        assert opts.issuer and opts.audience and opts.jwks
        oauth = JwtAccessTokens(opts.issuer, opts.audience, opts.jwks)
    if team and oauth:
        return _Either(team, oauth)
    return team or oauth


class _Either:
    """Team tokens first (they carry our prefix), then JWTs."""

    def __init__(self, team: "TeamTokens", oauth: "JwtAccessTokens"):
        self.team, self.oauth = team, oauth

    async def verify_token(self, token: str) -> "Optional[AccessToken]":
        return await self.team.verify_token(token) or await self.oauth.verify_token(token)


def build_app(door: Door, opts: HttpOptions) -> "tuple[RateLimit, Replica]":
    """The ASGI application: the SDK's Streamable HTTP app, behind the rate limit."""
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.transport_security import TransportSecuritySettings

    verifier = _verifier(door, opts)
    if verifier is None and not is_loopback(opts.bind):
        raise InputError(
            f"refusing to serve on {opts.bind}, which is not a loopback address, without authentication: "
            "give --token-file (git lifeline mcp token add) or --issuer, --audience and --jwks"
        )
    auth = None
    if verifier is not None:
        issuer = opts.issuer or f"http://{opts.bind}:{opts.port}"
        auth = AuthSettings.model_validate(
            {
                "issuer_url": issuer,
                "resource_server_url": opts.audience,
                "validate_token_resource": False,  # the verifiers check the audience themselves
            }
        )
    replica = Replica.of(door.workspace, opts.remote, opts.refresh_seconds)
    gate = HttpGate(door, replica)
    server = build_server(door, gate, auth, verifier)
    hosts = list(LOOPBACK_HOSTS) + [allowed for h in opts.allow_hosts for allowed in host_patterns(h)]
    origins = list(LOOPBACK_ORIGINS) + opts.allow_origins
    if opts.audience:
        from urllib.parse import urlsplit

        public = urlsplit(opts.audience)
        hosts += [public.netloc, f"{public.hostname}:*"] if public.hostname else []
        origins.append(f"{public.scheme}://{public.netloc}")
    if not is_loopback(opts.bind):
        hosts.append(f"{opts.bind}:*")
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        transport_security=security,
        max_request_body_size=MAX_BODY_BYTES,
        host=opts.bind,
    )
    if auth is not None and auth.resource_server_url is not None:
        _advertise_scopes(app, auth)
    if verifier is not None:
        _challenge_scopes(app)
    return RateLimit(app, opts.rate_per_minute), replica


def _advertise_scopes(app: "Starlette", auth: "AuthSettings") -> None:
    """The RFC 9728 metadata names our scopes. The SDK fills `scopes_supported` from
    `required_scopes`, which it also demands of every request; ours differ per tool, so
    its metadata route is replaced by one made with the same SDK function and our scopes."""
    from mcp.server.auth.routes import create_protected_resource_routes

    from .auth import SCOPES

    assert auth.resource_server_url is not None, "called in OAuth mode only"
    [route] = create_protected_resource_routes(
        resource_url=auth.resource_server_url, authorization_servers=[auth.issuer_url], scopes_supported=list(SCOPES)
    )
    app.router.routes[:] = [route if getattr(r, "path", None) == route.path else r for r in app.router.routes]


def _challenge_scopes(app: "Starlette") -> None:
    """A call the token's scopes do not allow gets the spec's 403 scope challenge
    (http_scope.py): placed inside the SDK's RequireAuthMiddleware of `/mcp`, where the
    caller is known, naming the metadata URL that middleware names in its 401."""
    from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware

    from .http_scope import ScopeChallenge

    for route in app.router.routes:
        endpoint = getattr(route, "endpoint", None)
        if getattr(route, "path", None) == "/mcp" and isinstance(endpoint, RequireAuthMiddleware):
            metadata = endpoint.resource_metadata_url
            endpoint.app = ScopeChallenge(endpoint.app, str(metadata) if metadata else None, MAX_BODY_BYTES)
            return
    raise AssertionError("the SDK's /mcp route is not behind its RequireAuthMiddleware")


def serve_http(start: Optional[str], line: Optional[str], opts: HttpOptions) -> None:
    import uvicorn

    door = Door(start, line)
    app, replica = build_app(door, opts)
    shown_host = f"[{opts.bind}]" if ":" in opts.bind else opts.bind
    remote = f", publishing to remote {replica.remote!r}" if replica.remote else ""
    print(
        f"git-lifeline mcp: serving line '{door.default_line}' at http://{shown_host}:{opts.port}/mcp{remote}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=opts.bind,
        port=opts.port,
        log_level="warning",
        server_header=False,
        # X-Forwarded-For and -Proto are believed from a proxy on this host only (the
        # documented setup, docs/nginx-lifeline.conf), whatever the environment says.
        proxy_headers=True,
        forwarded_allow_ips=list(TRUSTED_PROXIES),
        limit_concurrency=512,
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()
