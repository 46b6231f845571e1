"""zkr-mcp: zkr as a local MCP server (``zkr-mcp --db PATH --tenant T --person P``).

The tools are generated from zkr's operation table (``zkr.tools.tool_specs()``); the scope is the
server's, never a tool argument. ``zkr_mcp.server.open_server(settings)`` builds a server in
process. This module imports nothing heavy, so that ``zkr-mcp`` refuses bad flags at once.
"""

from __future__ import annotations

from zkr_mcp.config import Settings, parse_settings

__all__ = ["Settings", "parse_settings"]
