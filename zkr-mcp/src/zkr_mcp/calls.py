"""Running one tool call: check, fill the scope and "now", run the operation, answer.

Every call is one zkr operation, which is one transaction committed before the answer is sent:
a server killed after answering has lost nothing it acknowledged. Anything zkr refuses comes back
as a tool error (``isError``) carrying the contract's message, and nothing is written; an
unexpected failure is logged to stderr and answered as ``internal error`` — the server stays up.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Mapping
from typing import Any

from mcp import types

from zkr.db import MemoryDb
from zkr.errors import ZkrError
from zkr.models import QueryEmbedding
from zkr.store.opening import is_busy
from zkr.tools import tool_request
from zkr_mcp.config import Settings
from zkr_mcp.tools import McpTool, as_structured, checked_arguments

__all__ = ["INTERNAL_ERROR", "ToolCalls", "unix_now"]

log = logging.getLogger("zkr_mcp")

#: What a client sees for a failure that is a bug, not its input (details go to stderr only).
INTERNAL_ERROR = "internal error"
#: The SQLite busy timeout ran out: another writer held the database for too long.
DATABASE_BUSY = "database is busy, try again"


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
            return _error(f"unknown tool `{name}`", "unknown_tool")
        try:
            result = self._run(entry, arguments)
        except ZkrError as exc:
            return _error(exc.message, exc.code)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return _error(DATABASE_BUSY, "busy")
            log.exception("tool %s failed", name)
            return _error(INTERNAL_ERROR, "internal")
        except Exception:
            log.exception("tool %s failed", name)
            return _error(INTERNAL_ERROR, "internal")
        if entry.operation.effect != "read" and self.after_write is not None:
            self.after_write()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
        )

    def _run(self, entry: McpTool, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        request = tool_request(
            entry.operation,
            checked_arguments(arguments),
            tenant_id=self.settings.tenant_id,
            person_id=self.settings.person_id,
            now=self.clock(),
            # Lets a left-out "now" land after what is stored (a delete in the same second as
            # the correction it follows).
            db=self.db,
        )
        request = self._with_query_embedding(request)
        result = self.db.run(entry.operation.name, request)
        return as_structured(entry, result)

    def _with_query_embedding(self, request: Any) -> Any:
        """With an embedder configured, a search embeds its query and runs hybrid."""
        embedder = self.settings.embedder
        fields = type(request).model_fields
        if embedder is None or "query_embedding" not in fields:
            return request
        if request.query_embedding is not None:
            return request
        model, version = embedder
        return request.model_copy(
            update={"query_embedding": QueryEmbedding(model=model, version=version, vector=None)}
        )
