"""Acceptance 3: hostile tool calls. At least 200 generated bad calls per tool, through the SDK's
client: every one is a tool error with the contract's message, none crashes the server, none
writes (every table is compared before and after each tool's calls)."""

from __future__ import annotations

import collections
import zlib
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests.mcp.conftest import settings_for, stdio_params, sync_client, table_rows
from tests.mcp.hostile import bad_calls
from zkr.tools import operation_for_tool
from zkr_mcp.calls import INTERNAL_ERROR
from zkr_mcp.tools import mcp_tools

CALLS_PER_TOOL = 200
#: Of those, every STDIO_EVERY-th call is also sent to a real ``zkr-mcp`` subprocess over stdio.
STDIO_EVERY = 10
#: zkr's error codes that a refused input may carry (``internal``/``busy`` are not among them).
INPUT_ERRORS = {"parse_error", "invalid", "not_found", "limit_exceeded", "conflict"}
EXPECTED_MESSAGE = {
    "huge": "request exceeds 1048576 bytes",
    "unknown_id": "record not found",
    "foreign_id": "record not found",
}


def _tool(operation: str) -> str:
    return next(name for name, entry in mcp_tools().items() if entry.operation.name == operation)


def _remember(text: str) -> dict[str, Any]:
    return {
        "kind": "conversation",
        "text": text,
        "claim": {
            "subject": "me",
            "predicate": "likes",
            "value": text,
            "kind": "preference",
            "valid_from": 1,
        },
    }


def _seed(db: Path) -> list[str]:
    """Memories in the served scope and in a foreign one; returns the foreign ids."""
    with sync_client(settings_for(db, "tenant-b", "person-b")) as (_, foreign):
        stored = foreign.call(_tool("remember"), _remember("foreign secret tea"))
        assert not stored.is_error, stored.content
        foreign_ids = [v for v in (stored.structured_content or {}).values() if v]
    with sync_client(settings_for(db)) as (_, own):
        assert not own.call(_tool("remember"), _remember("own green tea")).is_error
    return foreign_ids


def _check(tool: str, kind: str, arguments: Any, result: Any) -> str:
    assert result.is_error, f"{tool} accepted a {kind} call: {arguments}"
    message = result.content[0].text
    code = (result.meta or {}).get("zkr/error_code")
    assert message != INTERNAL_ERROR and code in INPUT_ERRORS, (tool, kind, code, message)
    if kind in EXPECTED_MESSAGE:
        assert message == EXPECTED_MESSAGE[kind], (tool, kind, message)
    if kind == "unknown_field":
        assert message.startswith("unknown field `"), message
    if kind == "scope":
        assert message in ("unknown field `tenant_id`", "unknown field `person_id`"), message
    return message


def test_generated_bad_calls_are_refused_without_writing(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    foreign_ids = _seed(db)
    tally: dict[str, collections.Counter[str]] = {}
    stdio_share: list[tuple[str, dict[str, Any]]] = []
    with sync_client(settings_for(db)) as (_, client):
        tools = client.tools()
        assert tools, "the server lists no tools"
        for tool in tools:
            before = table_rows(db)
            seed = zlib.crc32(tool.name.encode())
            projection = operation_for_tool(tool.name).tool
            assert projection is not None
            filled = frozenset(
                tuple(path.split(".")) for path in (*projection.now_fields, *projection.defaults)
            )
            calls = bad_calls(tool.input_schema, foreign_ids, CALLS_PER_TOOL, seed, filled)
            tally[tool.name] = collections.Counter()
            for index, call in enumerate(calls):
                _check(tool.name, call.kind, call.arguments, client.call(tool.name, call.arguments))
                tally[tool.name][call.kind] += 1
                if index % STDIO_EVERY == 0:
                    stdio_share.append((tool.name, call.arguments))
            assert table_rows(db) == before, f"a refused {tool.name} call wrote"
        # Still serving, and serving correctly.
        found = client.call(_tool("search"), {"query": "green tea"})
        assert not found.is_error and found.structured_content["items"]  # type: ignore[index]
    for name, counts in tally.items():
        assert sum(counts.values()) >= CALLS_PER_TOOL, (name, counts)
    print({name: dict(counts) for name, counts in tally.items()})

    async def over_stdio() -> None:
        before = table_rows(db)
        async with Client(stdio_params(settings_for(db))) as client:
            for name, arguments in stdio_share:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, arguments)
                assert (result.meta or {}).get("zkr/error_code") in INPUT_ERRORS, result
            alive = await client.call_tool(_tool("search"), {"query": "green tea"})
            assert not alive.is_error and alive.structured_content["items"]  # type: ignore[index]
        assert table_rows(db) == before

    anyio.run(over_stdio)
