"""Who may use the page: the access token, the session path, the CSRF token and the headers.

The page shows a person's whole memory, so nothing is served without the access token — not a
page, not a stylesheet. The token is printed when the server starts (or read from a file or the
environment, never a flag: a command line is visible to every user of the machine); the first visit
brings it as ``?token=…``, which is moved into an HttpOnly, SameSite=Strict cookie and removed from
the address at once (a redirect), so it does not linger in history or in a ``Referer``. Scripts and
API clients may send it as ``Authorization: Bearer …`` instead.

Browsers scope cookies by host, not by port: a cookie set by ``http://127.0.0.1:8765`` is sent to
every other server on 127.0.0.1 (Chromium does, ``__Host-`` and ``Secure`` included; issue 26). So
the cookie is scoped by *path*: the whole application lives under a session path derived from the
token (``/z/<32 hex>``, an HMAC, so it reveals nothing of the token) and the cookie's ``Path`` is
that path. Another server on this machine never sees a request for that path unless it knows the
path, which only the token yields.

Every state-changing request is a POST carrying a CSRF token — a random value of this server
process, not derived from the access token, so whoever learns one does not learn the other — and,
when the browser sends an ``Origin``, coming from this server's own origin.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "COOKIE_NAME",
    "SECURITY_HEADERS",
    "AccessGuard",
    "csrf_token",
    "new_token",
    "origin_allowed",
    "same_origin_path",
    "session_path",
    "tokens_match",
]

COOKIE_NAME = "zkr_web_token"

#: Sent with every answer: no framing, no inline script, no sniffing, no caching, no referrer to
#: other sites.
SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on own forms.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}

_REFUSED = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>zkr — access token needed</title>"
    "<h1>Access token needed</h1><p>Open the address that <code>zkr-web</code> printed when it "
    "started (it ends with <code>?token=…</code>).</p></html>"
)


def new_token() -> str:
    """A fresh random access token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def tokens_match(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token with the expected one."""
    if not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def csrf_token() -> str:
    """A fresh CSRF token for one server process (random: nothing else yields it)."""
    return secrets.token_urlsafe(32)


def session_path(access_token: str) -> str:
    """The path the application and its cookie live under: ``/z/`` and 128 bits of an HMAC."""
    digest = hmac.new(access_token.encode("utf-8"), b"zkr-web session path v1", hashlib.sha256)
    return "/z/" + digest.hexdigest()[:32]


def same_origin_path(path: str) -> str:
    """*path* as a path of this origin: one leading slash, no backslash.

    A browser reads ``//evil.example/x`` (and ``/\\evil.example/x``) in a link or a ``Location``
    as another host; every path the page writes back goes through here.
    """
    return "/" + path.replace("\\", "/").lstrip("/")


def origin_allowed(headers: Headers) -> bool:
    """A browser's ``Origin`` (when it sends one) must be this server's own address."""
    origin = headers.get("origin")
    if origin is None:
        return True
    host = headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


class AccessGuard:
    """ASGI middleware: refuse every HTTP request that does not present the access token.

    The wrapped application expects its paths under :func:`session_path`. A browser reaches them
    with the cookie (which it sends only there); an API client with ``Authorization: Bearer`` may
    also name a path without the prefix, which is then served as if prefixed.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token
        self.base = session_path(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = [value for key, value in query if key == "token"]
        path: str = scope["path"]
        inside = path == self.base or path.startswith(self.base + "/")
        if offered and scope["method"] in ("GET", "HEAD"):
            response = self._login(
                path, inside, offered[-1], [(k, v) for k, v in query if k != "token"]
            )
        elif inside and (self._bearer(headers) or self._cookie(headers)):
            await self.app(scope, receive, _with_headers(send))
            return
        elif not inside and self._bearer(headers):
            moved = self.base + same_origin_path(path)
            scope = {**scope, "path": moved, "raw_path": moved.encode("utf-8")}
            await self.app(scope, receive, _with_headers(send))
            return
        else:
            response = HTMLResponse(_REFUSED, status_code=401)
        await response(scope, receive, _with_headers(send))

    def _bearer(self, headers: Headers) -> bool:
        authorization = headers.get("authorization", "")
        return authorization.lower().startswith("bearer ") and tokens_match(
            authorization[7:].strip(), self.token
        )

    def _cookie(self, headers: Headers) -> bool:
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply no token
            return False
        morsel = cookie.get(COOKIE_NAME)
        return tokens_match(morsel.value if morsel else None, self.token)

    def _login(
        self, path: str, inside: bool, offered: str, rest: list[tuple[str, str]]
    ) -> Response:
        if not tokens_match(offered, self.token):
            return HTMLResponse(_REFUSED, status_code=401)
        # The same page under the session path, without the token: the token must not stay in
        # the address bar or history, and the target is always a path of this origin.
        within = path[len(self.base) :] if inside else path
        target = self.base + same_origin_path(within)
        if rest:
            target += "?" + urlencode(rest)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            COOKIE_NAME, self.token, httponly=True, samesite="strict", path=self.base, secure=False
        )
        return response


def _with_headers(send: Send) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            for name, value in SECURITY_HEADERS.items():
                if name.encode("latin-1") not in present:
                    headers.append((name.encode("latin-1"), value.encode("latin-1")))
            message = {**message, "headers": headers}
        await send(message)

    return sender
