"""Answer the stdio lines the SDK cannot decode, instead of dropping them.

The SDK's stdio transport validates each line with pydantic, whose JSON parser refuses a lone
surrogate escape (``"\\ud800"``); the line then reaches the server as an exception and is never
answered, so a client waits forever for that id (issue 26; over HTTP the same request gets a
clear 400). Python's own JSON parser reads such a line, so when it holds a request id, the guard
answers that id with a JSON-RPC error (``-32602``, the contract's message) and the server never
sees the line. A line with no usable id stays unanswered, as JSON-RPC prescribes for notifications.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["refusal_for", "serve_guarded"]

#: The contract's message for a lone surrogate anywhere in a request.
LONE_SURROGATE = "lone leading surrogate in hex escape"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def refusal_for(failure: Exception) -> types.JSONRPCError | None:
    """The error answer for a line the SDK could not decode, or None when it has no usable id."""
    if not isinstance(failure, ValidationError):
        return None
    raw = next((error.get("input") for error in failure.errors()), None)
    if not isinstance(raw, str | bytes):
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None  # not JSON at all: no id can be trusted
    if not isinstance(message, dict) or "method" not in message:
        return None
    ident = message.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    try:
        json.dumps(ident, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeError):
        return None  # the id itself holds the lone surrogate: it cannot be written back
    text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    reason = (
        LONE_SURROGATE if _SURROGATE_ESCAPE.search(text) else "the request could not be decoded"
    )
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=types.INVALID_PARAMS, message=reason)
    )


async def serve_guarded(server: Any, read_stream: Any, write_stream: Any) -> None:
    """Run *server* on the stdio streams, answering undecodable requests on the way in."""
    forward, guarded = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def sift() -> None:
        async with forward:
            async for item in read_stream:
                refusal = refusal_for(item) if isinstance(item, Exception) else None
                if refusal is not None:
                    await write_stream.send(SessionMessage(refusal))
                else:
                    await forward.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(sift)
        await server.run(guarded, write_stream, server.create_initialization_options())
