"""The MCP server: the SDK's low-level ``Server`` with zkr's handlers.

The low-level server (not ``MCPServer``'s decorators) is used because the tools are data: their
input schemas are the table's, and their arguments are checked by zkr's own validation, which
gives the contract's error messages. Database work runs in worker threads; ``MemoryDb`` serialises
operations on its connection, and other processes share the file through SQLite's WAL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from zkr.background_embedding import BackgroundEmbedder, for_host
from zkr.db import MemoryDb, open_db
from zkr.plugins import get_embedder, load_plugins
from zkr_mcp import resources
from zkr_mcp.calls import ToolCalls, unix_now
from zkr_mcp.config import Settings
from zkr_mcp.tools import mcp_tools

__all__ = ["ZkrMcp", "open_server"]

SERVER_NAME = "zkr"
INSTRUCTIONS = (
    "zkr is this user's long-term memory. Search it before answering questions about the user; "
    "remember durable facts, preferences and decisions; correct a stored claim instead of "
    "storing a contradicting one. Every memory cites evidence ids: quote them."
)

Context = ServerRequestContext[Any]


@dataclass
class ZkrMcp:
    """One zkr MCP server: its database handle, its tools and the SDK server serving them."""

    settings: Settings
    db: MemoryDb
    calls: ToolCalls
    embedder: BackgroundEmbedder | None
    server: Server[Any] = field(init=False)

    def __post_init__(self) -> None:
        self.tool_names = {entry.operation.name: name for name, entry in self.calls.tools.items()}
        self.server = Server(
            SERVER_NAME,
            version=_version(),
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )

    def close(self) -> None:
        if self.embedder is not None:
            self.embedder.close()
        self.db.close()

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.calls.listing())

    async def _call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(self.calls.call, params.name, params.arguments)

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources.resources())

    async def _list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.resource_templates())

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(
            resources.read_resource, self.db, self.settings, str(params.uri)
        )

    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=resources.prompts())

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await anyio.to_thread.run_sync(
            resources.get_prompt, self.db, self.settings, params.name, self.tool_names
        )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zkr-mcp")
    except PackageNotFoundError:  # running from a source tree
        return "0.0.0"


@contextlib.contextmanager
def open_server(settings: Settings, *, clock: Callable[[], int] = unix_now) -> Iterator[ZkrMcp]:
    """Open the database (creating and migrating it), check the embedder, build the server.

    :raises UnknownPluginError: ``settings.embedder`` names no installed embedder.
    """
    load_plugins()
    if settings.embedder is not None:
        get_embedder(*settings.embedder)  # refuse at start, not at the first search
    db = open_db(settings.db)
    embedder = for_host(settings.db, settings, thread_name="zkr-mcp-embedder")
    calls = ToolCalls(
        db,
        settings,
        mcp_tools(),
        clock=clock,
        after_write=embedder.notify if embedder is not None else None,
    )
    app = ZkrMcp(settings=settings, db=db, calls=calls, embedder=embedder)
    if embedder is not None:
        embedder.start()
    try:
        yield app
    finally:
        app.close()
