"""Running one tool call: check, fill the scope and "now", run the operation, answer.

The call itself is zkr-core's (:func:`zkr.tool_calls.call_tool`); this module only translates it
into MCP's result. Every call is one zkr operation, which is one transaction committed before the
answer is sent: a server killed after answering has lost nothing it acknowledged. Anything zkr
refuses comes back as a tool error (``isError``) carrying the contract's message, and nothing is
written; an unexpected failure is logged to stderr and answered as ``internal error`` — the server
stays up.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from mcp import types

from zkr.db import MemoryDb
from zkr.envelope import INTERNAL
from zkr.errors import DatabaseBusy, UnknownToolError
from zkr.tool_calls import call_tool, tool_failure
from zkr_mcp.config import Settings
from zkr_mcp.tools import McpTool, as_structured, checked_arguments

__all__ = ["INTERNAL_ERROR", "ToolCalls", "unix_now"]

log = logging.getLogger("zkr_mcp")

#: What a client sees for a failure that is a bug, not its input (details go to stderr only).
INTERNAL_ERROR = "internal error"
#: Every wait ran out: another writer held the database for too long.
DATABASE_BUSY = DatabaseBusy().message


def unix_now() -> int:
    """The server's "now": Unix seconds, the unit of the contract's examples and of zkr-hermes."""
    return int(time.time())


def _error(message: str, code: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        is_error=True,
        _meta={"zkr/error_code": code},
    )


class ToolCalls:
    """The tools of one server, bound to its database and scope.

    :param after_write: called after every committed write or erase (the background embedder's
        doorbell); never called for reads or refused calls.
    """

    def __init__(
        self,
        db: MemoryDb,
        settings: Settings,
        tools: Mapping[str, McpTool],
        *,
        clock: Callable[[], int] = unix_now,
        after_write: Callable[[], None] | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.tools = dict(tools)
        self.clock = clock
        self.after_write = after_write

    def listing(self) -> list[types.Tool]:
        return [entry.tool for entry in self.tools.values()]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run tool *name*; never raises."""
        entry = self.tools.get(name)
        if entry is None:
            return _error(*tool_failure(UnknownToolError(f"unknown tool `{name}`")))
        try:
            data = call_tool(
                self.db,
                entry.operation,
                checked_arguments(arguments),
                tenant_id=self.settings.tenant_id,
                person_id=self.settings.person_id,
                now=self.clock(),
                embedder=self.settings.embedder,
            )
        except Exception as exc:
            message, code = tool_failure(exc)
            if code == INTERNAL:  # a bug, not the client's input: details go to stderr only
                log.exception("tool %s failed", name)
                return _error(INTERNAL_ERROR, code)
            return _error(message, code)
        if entry.operation.effect != "read" and self.after_write is not None:
            self.after_write()
        result = as_structured(entry, data)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
        )
