"""zkr-mcp's entry in the MCP Registry: ``zkr-mcp/server.json``, generated from the package.

``python -m zkr_mcp.registry --write`` rewrites the file and ``--check`` fails when it is stale, so
its version, package name and environment variables cannot drift from what zkr-mcp reads (the
variables are zkr's shared settings, :data:`zkr_mcp.config.SHARED`, for the stdio transport a
client starts). The registry proves that whoever publishes the entry owns the PyPI project by
finding ``mcp-name: NAME`` in the package's README; :data:`MCP_NAME_MARKER` is that line, and
``tests/mcp/test_registry_entry.py`` checks that the README carries it.

The namespace ``io.github.zkr-memory`` is the GitHub account the release is published from (see
``CONTRIBUTING.md``, "Release"); a fork that publishes changes :data:`SERVER_NAME` only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkr.settings import Setting
from zkr.version import __version__
from zkr_mcp.config import SHARED

__all__ = ["MCP_NAME_MARKER", "SCHEMA_URL", "SERVER_JSON", "SERVER_NAME", "main", "server_entry"]

#: The registry schema this entry is written against (its version is in the URL).
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
SERVER_NAME = "io.github.zkr-memory/zkr-mcp"
#: The ownership line the registry looks for in the PyPI description (zkr-mcp's README).
MCP_NAME_MARKER = f"mcp-name: {SERVER_NAME}"
#: Where the entry lives: beside zkr-mcp's pyproject.toml (not inside the wheel).
SERVER_JSON = Path(__file__).resolve().parents[2] / "server.json"

DESCRIPTION = "Cited, bitemporal memory of one person on this machine: one SQLite file, no account."

#: The settings a stdio client passes; tenant and person have no default, so they are required.
_STDIO_SETTINGS = ("db", "tenant", "person", "embedder")


def _variable(setting: Setting) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": setting.env,
        "description": setting.help,
        "isRequired": not setting.default and setting.name in ("tenant", "person"),
    }
    if setting.default:
        entry["default"] = setting.default
    if setting.name == "db":
        entry["format"] = "filepath"
    return entry


def server_entry() -> dict[str, Any]:
    """The registry entry: one PyPI package run with ``uvx`` over stdio."""
    return {
        "$schema": SCHEMA_URL,
        "name": SERVER_NAME,
        "title": "zkr",
        "description": DESCRIPTION,
        "version": __version__,
        "packages": [
            {
                "registryType": "pypi",
                "identifier": "zkr-mcp",
                "version": __version__,
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "environmentVariables": [_variable(SHARED[name]) for name in _STDIO_SETTINGS],
            }
        ],
    }


def render() -> str:
    return json.dumps(server_entry(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    wanted = render()
    current = SERVER_JSON.read_text("utf-8") if SERVER_JSON.exists() else ""
    if "--write" in args:
        if current != wanted:
            SERVER_JSON.write_text(wanted, encoding="utf-8")
        return 0
    if current != wanted:
        sys.stderr.write(f"{SERVER_JSON} is stale: run python -m zkr_mcp.registry --write\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
