"""Who calls over HTTP, and what they may do: the two token verifiers and the scopes.

Both are the SDK's `TokenVerifier`: its bearer middleware asks them, answers 401 with
`WWW-Authenticate` (naming the RFC 9728 metadata when there is some) when they say no,
and keeps the `AccessToken` for the request, where the tools read it (`caller`).

* `TeamTokens`: the `mcp token add` tokens (app/tokens.py). The token's NAME is the agent;
  such a token may do everything a local agent may (the write policy still decides).
* `JwtAccessTokens`: OAuth 2.1 access tokens, JWTs verified offline with PyJWT against the
  authorization server's JWKS (a URL, fetched and cached, refetched for an unknown key id;
  or a JSON file). Issuer and audience must be this server's; `exp` is required, with a
  small leeway for clocks; only asymmetric algorithms (never `none`, never an HMAC whose key
  would be the public JWKS). The scopes in `scope` (RFC 8693/9068, space-separated) or `scp`
  decide the tools.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import anyio
import jwt
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from ..app.tokens import NAME_RE, RESERVED, TokenFile

log = logging.getLogger("git_lifeline.mcp")

READ, PROPOSE, WRITE = "lifeline:read", "lifeline:propose", "lifeline:write"
SCOPES = (READ, PROPOSE, WRITE)
WRITE_TOOLS = frozenset({"lifeline_append", "lifeline_recontextualize", "lifeline_checkpoint"})
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY_SECONDS = 60
MAX_JWKS_BYTES = 1 << 20


@dataclass(frozen=True)
class Caller:
    """The agent a request speaks for, and its scopes."""

    agent: str
    scopes: frozenset[str]

    def missing_scope(self, tool: str) -> Optional[str]:
        if tool in WRITE_TOOLS:
            return None if self.scopes & {PROPOSE, WRITE} else PROPOSE
        return None if READ in self.scopes or self.scopes & {PROPOSE, WRITE} else READ

    @property
    def propose_only(self) -> bool:
        return WRITE not in self.scopes


def caller() -> Optional[Caller]:
    """The caller of the request being served (the SDK's auth context), None without auth."""
    token = get_access_token()
    if token is None:
        return None
    return Caller(token.client_id, frozenset(token.scopes))


class TeamTokens:
    def __init__(self, path: Path, resource: Optional[str]):
        self.tokens = TokenFile(path)
        self.resource = resource

    async def verify_token(self, token: str) -> Optional[AccessToken]:
        name = self.tokens.name_for(token)
        if name is None:
            return None
        return AccessToken(token=token, client_id=name, scopes=list(SCOPES), resource=self.resource)


def agent_name(claims: dict[str, object]) -> Optional[str]:
    """The agent a JWT speaks for: its `client_id` (RFC 9068), else `azp`, else `sub`, made an
    agent name (other characters become '-'). None when nothing usable is there."""
    for key in ("client_id", "azp", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value.strip():
            name = re.sub(r"[^A-Za-z0-9._-]", "-", value.strip())[:64].lstrip("._-")
            if NAME_RE.match(name) and name.lower() not in RESERVED:
                return name
    return None


def scopes_of(claims: dict[str, object]) -> list[str]:
    raw = claims.get("scope", claims.get("scp"))
    words = (
        raw.split() if isinstance(raw, str) else [w for w in raw if isinstance(w, str)] if isinstance(raw, list) else []
    )
    return [w for w in words if w in SCOPES]


class JwtAccessTokens:
    def __init__(self, issuer: str, audience: str, jwks: str):
        self.issuer = issuer
        self.audience = audience
        self._client: Optional[jwt.PyJWKClient] = None
        self._keys: Optional[jwt.PyJWKSet] = None
        if re.match(r"https?://", jwks):
            self._client = jwt.PyJWKClient(jwks, cache_keys=True, lifespan=300, timeout=10)
        else:
            from ..app.tokens import read_jwks

            self._keys = jwt.PyJWKSet.from_json(read_jwks(Path(jwks), MAX_JWKS_BYTES))

    def _key(self, token: str) -> jwt.PyJWK:
        if self._client is not None:
            return self._client.get_signing_key_from_jwt(token)
        assert self._keys is not None
        kid = jwt.get_unverified_header(token).get("kid")
        keys = [k for k in self._keys.keys if kid is None or k.key_id == kid]
        if len(keys) != 1:
            raise jwt.InvalidTokenError("no single key of the JWKS matches the token's kid")
        return keys[0]

    def _verify(self, token: str) -> Optional[AccessToken]:
        try:
            key = self._key(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError, json.JSONDecodeError) as exc:
            log.info("refused an access token: %s", type(exc).__name__)
            return None
        name = agent_name(claims)
        if name is None:
            log.info("refused an access token: no client_id, azp or sub usable as an agent name")
            return None
        exp = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=name,
            scopes=scopes_of(claims),
            expires_at=None,  # PyJWT checked it, with the leeway the SDK's own check would not give
            resource=self.audience,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims={"iss": self.issuer, "exp": exp},
        )

    async def verify_token(self, token: str) -> Optional[AccessToken]:
        if len(token) > 16384 or token.count(".") != 2:
            return None
        # The JWKS may be fetched (blocking urllib): off the event loop.
        return await anyio.to_thread.run_sync(self._verify, token)
