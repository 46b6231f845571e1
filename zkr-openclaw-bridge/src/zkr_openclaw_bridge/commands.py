"""``zkr openclaw-tool`` and ``zkr openclaw-serve``: the tool calls of the OpenClaw plugin.

Added to the ``zkr`` command line through the ``zkr_register_commands`` hook, so the plugin needs no
program of its own: it runs the user's ``zkr`` with the database it was configured with.

* ``zkr --db PATH openclaw-tool``: one call ``{"tenant_id","person_id","tool","args"}`` on stdin,
  one line on stdout (the conventions of every zkr command).
* ``zkr openclaw ARGS``: ``zkr-openclaw-bridge ARGS`` (install, plugin-dir).
* ``zkr --db PATH openclaw-serve``: ``zkr serve`` (the contract's commands as JSON lines) that also
  answers ``{"command": "openclaw-tool", ...}``, so the plugin keeps one warm process per database.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import click

    from zkr.db import MemoryDb

__all__ = ["TOOL_COMMAND", "add_commands"]

#: The serve command name under which tool calls are answered (same as the one-shot command).
TOOL_COMMAND = "openclaw-tool"


def _read_call() -> Any:
    """stdin as one JSON request, with the CLI's 1 MiB limit and strict parsing."""
    from zkr.errors import LimitExceeded
    from zkr.jsonio import parse_request
    from zkr.operations import MAX_REQUEST_BYTES

    raw = sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    if len(raw) > MAX_REQUEST_BYTES:
        raise LimitExceeded(f"request exceeds {MAX_REQUEST_BYTES} bytes")
    return parse_request(raw)


def _run_tool(db: MemoryDb, payload: Any) -> Any:
    from zkr_openclaw_bridge.tools import run_tool

    return run_tool(db, payload)


def add_commands(cli: click.Group) -> None:
    """Register the three commands on zkr's click group."""
    import click

    from zkr_cli.cli import ZkrContext
    from zkr_cli.passthrough import add_passthrough
    from zkr_openclaw_bridge.__main__ import main

    add_passthrough(
        cli, "openclaw", "zkr as OpenClaw's memory: install, plugin-dir (--help).", main
    )

    @cli.command(name=TOOL_COMMAND, help="Answer one OpenClaw tool call (JSON on stdin).")
    @click.pass_obj
    def openclaw_tool(ctx: ZkrContext) -> int:
        payload = _read_call()
        with ctx.open_db() as db:
            ctx.emit(_run_tool(db, payload))
        return 0

    @cli.command(name="openclaw-serve", help="serve, plus openclaw-tool calls.")
    @click.pass_obj
    def openclaw_serve(ctx: ZkrContext) -> int:
        from zkr_cli.serve import serve_forever

        with ctx.open_db() as db:
            serve_forever(db, sys.stdin.buffer, sys.stdout.buffer, {TOOL_COMMAND: _run_tool})
        return 0
