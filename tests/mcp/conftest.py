"""Helpers of the zkr-mcp tests: servers in process and as subprocesses, driven by the SDK's client.

``in_process(settings)`` runs a server in this process behind the SDK's real ``Client`` (in-memory
transport, same handlers as every transport); ``sync_client`` wraps that for synchronous and
hypothesis tests. ``stdio_params``/``http_server`` start the installed ``zkr-mcp`` console script.
``table_rows`` snapshots every table of a database, to prove that a refused call wrote nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

from tests.core.conftest import table_snapshot
from zkr.db import MemoryDb
from zkr_mcp.config import Settings
from zkr_mcp.server import ZkrMcp, open_server

__all__ = [
    "SyncClient",
    "http_server",
    "in_process",
    "initialize_request",
    "settings_for",
    "stdio_params",
    "sync_client",
    "table_rows",
    "zkr_mcp_command",
]


def settings_for(
    db: Path, tenant: str = "tenant-a", person: str = "person-a", **kw: Any
) -> Settings:
    return Settings(db=str(db), tenant_id=tenant, person_id=person, **kw)


@contextlib.asynccontextmanager
async def in_process(settings: Settings) -> AsyncIterator[tuple[ZkrMcp, Client]]:
    with open_server(settings) as app:
        async with Client(app.server) as client:
            yield app, client


class SyncClient:
    """The SDK client driven from synchronous code through an anyio blocking portal."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return self.portal.call(self.client.call_tool, name, arguments)

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.client.list_tools).tools


@contextlib.contextmanager
def sync_client(settings: Settings) -> Iterator[tuple[ZkrMcp, SyncClient]]:
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(in_process(settings)) as (app, client),
    ):
        yield app, SyncClient(portal, client)


def table_rows(db: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (core's snapshot), read through a separate handle."""
    with MemoryDb(db) as handle:
        return table_snapshot(handle)


def initialize_request(client_name: str) -> dict[str, Any]:
    """A raw JSON-RPC ``initialize`` (for tests that speak the protocol without the SDK)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "0"},
        },
    }


def zkr_mcp_command() -> str:
    """The installed console script next to this interpreter (what a client config names)."""
    script = Path(sys.executable).parent / "zkr-mcp"
    assert script.exists(), f"zkr-mcp is not installed next to {sys.executable}"
    return str(script)


def _environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ZKR_")}
    env.update(extra)
    return env


def stdio_params(settings: Settings, *extra: str) -> StdioServerParameters:
    """Scope through the environment, the way a client config usually passes it."""
    env = _environment(
        ZKR_DB=settings.db, ZKR_TENANT=settings.tenant_id, ZKR_PERSON=settings.person_id
    )
    return StdioServerParameters(command=zkr_mcp_command(), args=list(extra), env=env)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(
    settings: Settings, bind: str = "127.0.0.1"
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``zkr-mcp --transport streamable-http`` bound to *bind*; yields its URL and the process.

    A ``settings.token`` is handed to the server in ``ZKR_MCP_TOKEN``. The URL names the address
    the server is reached at (*bind*, or 127.0.0.1 for a bind to every address).
    """
    port = _free_port()
    reach = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bind, bind).strip("[]")
    family = socket.AF_INET6 if ":" in reach else socket.AF_INET
    command = [
        zkr_mcp_command(),
        "--db", settings.db,
        "--tenant", settings.tenant_id,
        "--person", settings.person_id,
        "--transport", "streamable-http",
        "--host", bind,
        "--port", str(port),
    ]  # fmt: skip
    # The token travels the way the docs say it should: in the environment, never on a flag.
    token = {} if settings.token is None else {"ZKR_MCP_TOKEN": settings.token}
    process = subprocess.Popen(
        command, env=_environment(**token), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.socket(family) as probe:
                probe.settimeout(0.2)
                probe.connect((reach, port))
                break
            if process.poll() is not None:
                raise AssertionError(f"zkr-mcp exited: {process.stderr.read()!r}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                raise AssertionError("zkr-mcp did not listen within 30 s")
            time.sleep(0.05)
        shown = f"[{reach}]" if ":" in reach else reach
        yield f"http://{shown}:{port}/mcp", process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tool_call_line(ident: Any, tool: str, arguments_json: str) -> str:
    """A raw JSON-RPC ``tools/call`` line whose arguments are given as JSON text as written, so a
    test can send what no JSON encoder would (a lone surrogate, a bare NaN)."""
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(ident)},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments_json}}}}}'
    )
