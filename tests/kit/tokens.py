"""OAuth for the HTTP tests: RSA keys made in the test, their JWKS (served by a real local
HTTP server or written to a file), JWT access tokens minted with them, and a `git lifeline
mcp --http` that verifies tokens against that key."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Union

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from kit.run import TIMEOUT
from kit.servers import Running, free_port, http_server

ISSUER = "https://auth.example"
# a JWKS document: {"keys": [one JWK a key]}
JWKS = dict[str, list[dict[str, Union[str, int]]]]


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwks_of(key: rsa.RSAPrivateKey, kid: str) -> JWKS:
    """The JWKS that publishes `key`'s public half as `kid`."""
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**public, "kid": kid, "use": "sig", "alg": "RS256"}]}


def mint(
    key: rsa.RSAPrivateKey, kid: str, audience: str, scope: str, expires_in: int = 300, issuer: str = ISSUER
) -> str:
    """An RS256 access token for `audience` with `scope`, issued now."""
    now = int(time.time())
    claims: dict[str, Union[str, int]] = {
        "iss": issuer,
        "aud": audience,
        "sub": "user-1",
        "client_id": "claude-ai",
        "scope": scope,
        "iat": now,
        "exp": now + expires_in,
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


@contextlib.contextmanager
def jwks_server(doc: JWKS) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 that answers every GET with `doc`: its URL."""
    body = json.dumps(doc).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: str) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
    finally:
        httpd.shutdown()
        thread.join(timeout=TIMEOUT)


@contextlib.contextmanager
def oauth_server(repo: Path, tmp_path: Path) -> Iterator[tuple[Running, Callable[[str], str]]]:
    """`git lifeline mcp --http` in `repo` trusting one key of ISSUER (its JWKS in a file),
    for its own URL as the audience: (the server, scope -> a token for that scope)."""
    key = new_key()
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks_of(key, "k1")))
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    with http_server(repo, "--issuer", ISSUER, "--audience", audience, "--jwks", str(path), port=port) as server:
        yield server, lambda scope: mint(key, "k1", audience, scope)
