"""A shared bearer token in front of the streamable HTTP endpoint.

On loopback the SDK's DNS-rebinding protection is the guard (``rebinding_protection``: only the
loopback names are accepted in ``Host`` and ``Origin``, so a page that rebinds ``evil.example`` to
127.0.0.1 is refused); a server bound to any other address is
reachable by every machine that can route to it, and the memory it serves is a person's. So a
non-loopback bind needs a token (refused at start otherwise, see ``config``), and with a token every
HTTP request must carry ``Authorization: Bearer <token>``: anything else is answered 401 before the
MCP app sees it. The comparison is constant-time, so the answer's timing does not spell the token.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerTokenGuard", "rebinding_protection"]

#: What a browser may send in ``Host`` and ``Origin`` to a token-less (loopback) server: the
#: loopback names, any port. Spelled here rather than left to the SDK, whose own default applies
#: only when the bind string is exactly one of its three names.
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def rebinding_protection(token: str | None) -> TransportSecuritySettings | None:
    """The Host/Origin allow-list of a server: always on without a token.

    A server without a token is bound to loopback (``config`` refuses anything else), and the
    allow-list is what stops a DNS-rebinding page. With a token the token is the guard: a browser
    page holds no token, and the Host of a server bound to ``0.0.0.0`` is not knowable here.
    """
    if token is not None:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(_LOOPBACK_HOSTS),
        allowed_origins=list(_LOOPBACK_ORIGINS),
    )


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
