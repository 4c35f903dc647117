"""The scope challenge: a `tools/call` (or the context's `resources/read`) by a token whose
scopes do not allow it is answered HTTP 403 with `WWW-Authenticate: Bearer
error="insufficient_scope", scope="<the scope it needs>", resource_metadata="<RFC 9728 URL>"`
(the MCP authorization spec, "Scope Challenge Handling"; only the scope this operation needs,
as SEP-2350 asks), so that an OAuth client can step up and ask for that scope.

The body is a JSON-RPC error for the request's id naming the scope too: clients that read the
body of a non-2xx answer (the MCP SDK's does) show the sentence, and clients that do not still
get the header. The tools' own check (server.py) stays behind this one for what it does not
read (a batch, a body it cannot parse): there the answer is the MCP error it was before.

It runs inside the SDK's `RequireAuthMiddleware`, so the caller is known (a request without a
valid token got its 401 there) and the body is read once, within the request-body bound, and
handed on unchanged.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional, Union

from ..app.text import JSONInputError, read_json
from .auth import caller
from .text import needs_scope

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

# JSON-RPC leaves -32000..-32099 to the server: a valid request this token may not make.
INSUFFICIENT_SCOPE = -32003
JsonId = Union[str, int, None]


def operation(body: bytes, max_bytes: int) -> Optional[tuple[JsonId, str, bool]]:
    """(request id, the tool whose scope it needs, whether it reads the context resource) for
    one `tools/call` or a read of the context, else None (a batch, a notification, anything
    else: the server's own checks answer those)."""
    from .server import CONTEXT_URI

    try:
        message = read_json(body, max_bytes)  # past the bound: the transport answers 413
    except JSONInputError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("params"), dict):
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None
    params = message["params"]
    if message.get("method") == "tools/call" and isinstance(params.get("name"), str):
        return rid, params["name"], False
    if message.get("method") == "resources/read" and params.get("uri") == CONTEXT_URI:
        return rid, "lifeline_context", True
    return None


class ScopeChallenge:
    def __init__(self, app: "ASGIApp", resource_metadata_url: Optional[str], max_body: int):
        self.app = app
        self.resource_metadata_url = resource_metadata_url
        self.max_body = max_body

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        who = caller()
        if scope["type"] != "http" or scope.get("method") != "POST" or who is None:
            await self.app(scope, receive, send)
            return
        # Read the body (at most the bound: past it the transport answers 413 from what is replayed).
        read: list[Message] = []
        size, more = 0, True
        while more and size <= self.max_body:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
        if not more and read and read[-1]["type"] == "http.request":
            found = operation(b"".join(m.get("body", b"") for m in read), self.max_body)
            missing = who.missing_scope(found[1]) if found is not None else None
            if found is not None and missing is not None:
                await self._refuse(send, found[0], missing, needs_scope(found[1], missing, resource=found[2]))
                return

        async def replay() -> "Message":
            return read.pop(0) if read else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: "Send", rid: JsonId, missing: str, sentence: str) -> None:
        challenge = ['error="insufficient_scope"', f'scope="{missing}"']
        if self.resource_metadata_url:
            challenge.append(f'resource_metadata="{self.resource_metadata_url}"')
        challenge.append(f'error_description="{sentence}"')
        error = {"code": INSUFFICIENT_SCOPE, "message": sentence, "data": {"scope": missing}}
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", ("Bearer " + ", ".join(challenge)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
