"""A shared bearer token in front of the streamable HTTP endpoint.

On loopback the SDK's DNS-rebinding protection is the guard; a server bound to any other address is
reachable by every machine that can route to it, and the memory it serves is a person's. So a
non-loopback bind needs a token (refused at start otherwise, see ``config``), and with a token every
HTTP request must carry ``Authorization: Bearer <token>``: anything else is answered 401 before the
MCP app sees it. The comparison is constant-time, so the answer's timing does not spell the token.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerTokenGuard"]

_REFUSAL = b'{"error":"unauthorized: this zkr-mcp needs Authorization: Bearer <token>"}'


class BearerTokenGuard:
    """ASGI middleware: pass an HTTP request on only when it carries the expected bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Lifespan events are the server's own start and stop, not a client's request.
        if scope["type"] in ("http", "websocket") and not self._authorised(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="zkr-mcp"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _REFUSAL})
            return
        await self._app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        # Exactly one Authorization header: with two, a proxy and this server could disagree.
        return len(given) == 1 and hmac.compare_digest(given[0], self._expected)
