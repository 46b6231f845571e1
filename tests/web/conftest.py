"""A real zkr-web server on 127.0.0.1 (uvicorn in a thread) over a real SQLite file.

Tests seed the database through their own ``MemoryDb`` on the same file (WAL lets both use it) and
talk to the server over HTTP.
"""

from __future__ import annotations

import http.cookiejar
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from zkr import MemoryDb
from zkr import models as m
from zkr_web.app import WebConfig, create_app
from zkr_web.security import session_path

TOKEN = "test-token-" + "x" * 32
TENANT, PERSON = "home", "ana"
#: The fixed "now" of the server under test (2026-06-01 00:00:00 UTC).
NOW = 1_780_272_000


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class WebServer:
    """A running server, a client that can hold the session cookie, and the seeding database.

    ``origin`` is the server's ``http://127.0.0.1:PORT``; ``base`` adds the session path every page
    lives under (see ``zkr_web.security``), so ``request("/search")`` asks for the search page.
    """

    base: str
    token: str
    db: MemoryDb
    clock: list[float] = field(default_factory=lambda: [float(NOW)])
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def request(
        self,
        path: str,
        *,
        data: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        cookies: bool = True,
        follow: bool = True,
    ) -> Reply:
        handlers: list[Any] = []
        if cookies:
            handlers.append(urllib.request.HTTPCookieProcessor(self.jar))
        if not follow:
            handlers.append(_NoRedirect())
        opener = urllib.request.build_opener(*handlers)
        body = None if data is None else urllib.parse.urlencode(data).encode()
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with opener.open(req, timeout=10) as resp:
                return Reply(resp.status, dict(resp.headers), resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, dict(exc.headers), exc.read().decode("utf-8"))

    @property
    def origin(self) -> str:
        return self.base.removesuffix(session_path(self.token))

    def login(self) -> Reply:
        return self.request(f"/?token={self.token}")

    def csrf(self) -> str:
        """The server's CSRF token, as its pages carry it (it is random per server process)."""
        page = self.request("/", headers={"Authorization": f"Bearer {self.token}"}, cookies=False)
        found = re.search(r'<meta name="zkr-csrf" content="([^"]+)">', page.body)
        assert found, page.status
        return found.group(1)

    def remember(
        self,
        text: str,
        claim: dict[str, Any] | None = None,
        *,
        at: int = 100,
        tenant: str = TENANT,
        person: str = PERSON,
        **extra: Any,
    ) -> m.RememberResult:
        payload: dict[str, Any] = {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "conversation",
            "text": text,
            "captured_at": at,
            "recorded_at": at,
            **extra,
        }
        if claim is not None:
            payload["claim"] = {"kind": "fact", "valid_from": at, **claim}
        return self.db.remember(m.RememberRequest.model_validate(payload))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def start_server(app: Any) -> tuple[uvicorn.Server, threading.Thread, str]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("zkr-web did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    path = tmp_path / "memory.db"
    clock = [float(NOW)]
    config = WebConfig(
        db_path=str(path), tenant_id=TENANT, person_id=PERSON, token=TOKEN, clock=lambda: clock[0]
    )
    server, thread, base = start_server(create_app(config))
    db = MemoryDb(path)
    try:
        yield WebServer(base=base + session_path(TOKEN), token=TOKEN, db=db, clock=clock)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        db.close()
