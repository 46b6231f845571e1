"""A server without a token answers only requests naming loopback in ``Host`` and ``Origin``.

Issue 26: bound to a loopback alias (``127.0.0.2``, ``127.1.2.3``, ``LOCALHOST``) zkr 0.3 needed no
token, but the SDK's DNS-rebinding protection switched itself on only for ``127.0.0.1``,
``localhost`` and ``::1``: a page rebinding ``evil.example`` to the alias got a session and read the
memory. Now every bind that is served without a token refuses a forged ``Host`` (421) and a forged
``Origin`` (403) before a session exists, and every other bind refuses to start without a token.
The happy path is the SDK's own client.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.mcp.conftest import (
    http_server,
    initialize_request,
    settings_for,
    table_rows,
)
from zkr_mcp.config import SettingsError, parse_settings

SCOPE = ["--db", "m.db", "--tenant", "t", "--person", "p", "--transport", "streamable-http"]
TOKEN = "correct-horse-battery-staple"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

#: Binds a person might type for "this machine only"; only the first three are exact loopback.
EXACT_LOOPBACK = ["127.0.0.1", "::1", "localhost"]
ALIASES = ["127.0.0.2", "127.1.2.3", "LOCALHOST", "Localhost", "0:0:0:0:0:0:0:1", "127.000.000.001"]


def _post(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(initialize_request("rebinding-page")).encode(),
        headers={**ACCEPT, **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _forged_requests_are_refused(url: str, db: Path) -> None:
    port = url.rsplit(":", 1)[1].split("/")[0]
    before = table_rows(db)
    # What a browser sends after DNS rebinding evil.example to this address.
    assert _post(url, {"Host": f"evil.example:{port}"}) == 421
    assert _post(url, {"Host": "evil.example"}) == 421
    assert _post(url, {"Origin": "http://evil.example"}) == 403
    assert _post(url, {"Origin": f"http://evil.example:{port}"}) == 403
    assert _post(url, {"Host": f"evil.example:{port}", "Origin": "http://evil.example"}) == 421
    assert table_rows(db) == before


@pytest.mark.parametrize("bind", EXACT_LOOPBACK + ALIASES)
def test_every_bind_served_without_a_token_refuses_forged_host_and_origin(
    tmp_path: Path, bind: str
) -> None:
    """Either the bind is refused at start (it needs a token), or forged headers are refused."""
    db = tmp_path / "memory.db"
    try:
        parse_settings([*SCOPE, "--host", bind], {})
    except SettingsError as refused:
        assert "needs a bearer token" in str(refused)
        assert bind in ALIASES
        return
    with http_server(settings_for(db), bind=bind) as (url, _):
        _forged_requests_are_refused(url, db)


@pytest.mark.parametrize("bind", [*ALIASES, "0.0.0.0", "::"])
def test_a_loopback_alias_is_not_loopback_and_needs_the_token(bind: str) -> None:
    with pytest.raises(SettingsError, match=r"not exactly 127\.0\.0\.1, ::1 or localhost"):
        parse_settings([*SCOPE, "--host", bind], {})
    assert parse_settings([*SCOPE, "--host", bind], {"ZKR_MCP_TOKEN": TOKEN}).token == TOKEN


def test_a_token_bind_on_an_alias_refuses_forged_headers_without_the_token(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with http_server(settings_for(db, token=TOKEN), bind="127.0.0.2") as (url, _):
        before = table_rows(db)
        assert _post(url, {"Host": "evil.example", "Origin": "http://evil.example"}) == 401
        assert table_rows(db) == before


@pytest.mark.parametrize("bind", EXACT_LOOPBACK)
def test_the_sdk_client_is_served_on_every_exact_loopback_bind(tmp_path: Path, bind: str) -> None:
    db = tmp_path / "memory.db"
    with http_server(settings_for(db), bind=bind) as (url, _):

        async def session() -> None:
            async with Client(url) as client:
                stored = await client.call_tool(
                    "zkr_store", {"text": "The spare key is under the blue pot"}
                )
                assert not stored.is_error
                found = await client.call_tool(
                    "zkr_search", {"query": "spare key", "ranking": "contract"}
                )
                assert "blue pot" in str(found.structured_content)

        anyio.run(session)
