"""The session cookie never reaches another server on 127.0.0.1, in a real Chromium.

Browsers scope cookies by host, not port (Chromium sends even ``__Host-``/``Secure`` cookies of
``http://127.0.0.1:A`` to ``http://127.0.0.1:B``), so zkr 0.3's ``Path=/`` cookie — the access
token itself — went to any other local HTTP server the person visited (issue 26). The cookie now
lives under the session path; this test logs in, visits a neighbour server on another port (its
root, a path of the same shape, and the page paths zkr-web uses), and checks what the neighbour
received.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.browser.scenes import seed
from tests.web.conftest import WebServer


class _Neighbour(http.server.ThreadingHTTPServer):
    seen: list[tuple[str, str]]


class _Recorder(http.server.BaseHTTPRequestHandler):
    server: _Neighbour

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Cookie") or ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>neighbour</title><p>another local server</p>")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def neighbour() -> Iterator[_Neighbour]:
    server = _Neighbour(("127.0.0.1", 0), _Recorder)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_the_session_cookie_is_not_sent_to_another_port(
    web: WebServer, page: Any, neighbour: _Neighbour
) -> None:
    made = seed(web)
    page.goto(f"{web.origin}/?token={web.token}")
    assert "token" not in page.url
    assert page.locator("a.brand").count() == 1  # logged in: the timeline, not the refusal
    cookies = page.context.cookies()
    assert [cookie["name"] for cookie in cookies] == ["zkr_web_token"]
    assert cookies[0]["value"] == web.token  # it is the token that must not leak
    page.goto(f"{web.base}/claim/{made['home'].claim_id}")  # the cookie works on this server
    assert page.locator("h1.statement").count() == 1

    other = f"http://127.0.0.1:{neighbour.server_port}"
    for path in ("/", "/search?q=x", f"/claim/{made['home'].claim_id}", "/z/", "/static/app.js"):
        page.goto(other + path)
    assert [path for path, _ in neighbour.seen if path != "/favicon.ico"]
    for path, cookie in neighbour.seen:
        assert web.token not in cookie, (path, cookie)
        assert "zkr_web" not in cookie, (path, cookie)
