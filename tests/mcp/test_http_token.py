"""Serving beyond loopback needs a bearer token, and the token is checked on every HTTP request.

The settings tests pin what is refused at start; the server tests start the installed ``zkr-mcp``
over streamable HTTP with a token and drive it with the SDK's own client (with the header) and with
plain HTTP requests (without it, or with a wrong one), which must be answered 401 and write nothing.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from tests.mcp.conftest import (
    http_server,
    initialize_request,
    settings_for,
    table_rows,
    zkr_mcp_command,
)
from zkr_mcp.config import SettingsError, is_loopback, parse_settings

SCOPE = ["--db", "m.db", "--tenant", "t", "--person", "p", "--transport", "streamable-http"]
TOKEN = "correct-horse-battery-staple"


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    assert parse_settings([*SCOPE, "--host", host], {}).token is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "memory.example"])
def test_any_other_address_is_refused_without_a_token(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(SettingsError, match="needs a bearer token"):
        parse_settings([*SCOPE, "--host", host], {})
    settings = parse_settings([*SCOPE, "--host", host], {"ZKR_MCP_TOKEN": TOKEN})
    assert (settings.host, settings.token) == (host, TOKEN)


def test_stdio_is_not_a_network_and_binds_nothing() -> None:
    settings = parse_settings(["--db", "m.db", "--tenant", "t", "--person", "p"], {})
    assert (settings.transport, settings.token) == ("stdio", None)


def test_the_token_file_wins_over_the_variable_and_loses_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    settings = parse_settings(
        [*SCOPE, "--host", "0.0.0.0", "--token-file", str(path)], {"ZKR_MCP_TOKEN": "other"}
    )
    assert settings.token == TOKEN


@pytest.mark.parametrize(
    ("content", "message"),
    [("  \n", "holds no token"), ("tok\x00en", "printable ASCII"), ("tökén", "printable ASCII")],
)
def test_a_token_that_cannot_be_a_header_is_refused(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "token"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SettingsError, match=message):
        parse_settings([*SCOPE, "--token-file", str(path)], {})
    with pytest.raises(SettingsError, match="cannot read"):
        parse_settings([*SCOPE, "--token-file", str(tmp_path / "missing")], {})


def test_the_console_script_refuses_an_open_bind_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [zkr_mcp_command(), *SCOPE, "--host", "0.0.0.0"],
        capture_output=True,
        timeout=60,
        cwd=str(tmp_path),
        env={},
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--host 0.0.0.0 is not exactly 127.0.0.1, ::1 or localhost" in done.stderr
    assert not (tmp_path / "m.db").exists()  # refused before the database is opened


def test_requests_without_the_token_are_refused_and_with_it_served(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with http_server(settings_for(db, token=TOKEN)) as (url, _):
        before = table_rows(db)
        initialize = initialize_request("intruder")
        headers = {"Accept": "application/json, text/event-stream"}
        for authorization in (None, "Bearer wrong", f"bearer {TOKEN}", TOKEN):
            sent = (
                dict(headers)
                if authorization is None
                else {**headers, "Authorization": authorization}
            )
            status, answer_headers, body = _post(url, initialize, sent)
            assert status == 401, authorization
            assert answer_headers["www-authenticate"].startswith("Bearer")
            assert "unauthorized" in json.loads(body)["error"]
        assert table_rows(db) == before

        async def with_the_token() -> None:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                stored = await client.call_tool(
                    "zkr_store", {"text": "The spare key is under the blue pot"}
                )
                assert not stored.is_error
                found = await client.call_tool("zkr_search", {"query": "where is the spare key"})
                assert not found.is_error
                assert "blue pot" in str(found.structured_content)

        anyio.run(with_the_token)


def _post(url: str, payload: object, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP POST (no MCP client): what an unauthenticated neighbour would send."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, {k.lower(): v for k, v in refused.headers.items()}, refused.read()
