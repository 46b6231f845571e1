"""zkr's plugin entry point for zkr-mcp (entry-point group ``zkr``, name ``mcp``): ``zkr mcp``.

``zkr mcp ARGS`` is ``zkr-mcp --db <zkr's database> ARGS``: the options are zkr-mcp's own, parsed
by zkr-mcp (one definition, see ``zkr_mcp.config``), so the two spellings cannot drift. Kept
import-light: zkr loads it for every non-contract command; the MCP SDK is imported only when
``zkr mcp`` runs.
"""

from __future__ import annotations

from zkr.plugins.passthrough import passthrough_command

__all__ = ["zkr_register_commands"]

zkr_register_commands = passthrough_command(
    "mcp",
    "Serve one person's memory to MCP clients (zkr-mcp's options; zkr mcp --help).",
    "zkr_mcp.__main__:main",
    pass_db=True,
)
