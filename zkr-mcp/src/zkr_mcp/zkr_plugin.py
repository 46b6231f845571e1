"""zkr's plugin entry point for zkr-mcp (entry-point group ``zkr``, name ``mcp``): ``zkr mcp``.

``zkr mcp ARGS`` is ``zkr-mcp --db <zkr's database> ARGS``: the options are zkr-mcp's own, parsed
by zkr-mcp (one definition, see ``zkr_mcp.config``), so the two spellings cannot drift. Kept
import-light: zkr loads it for every non-contract command; the MCP SDK is imported only when
``zkr mcp`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zkr import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["zkr_register_commands"]


# optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
@hookimpl(optionalhook=True)
def zkr_register_commands(cli: click.Group) -> None:
    """Add ``zkr mcp`` (zkr-mcp's options; the database is ``zkr --db``)."""
    from zkr_cli.passthrough import add_passthrough
    from zkr_mcp.__main__ import main

    add_passthrough(
        cli,
        "mcp",
        "Serve one person's memory to MCP clients (zkr-mcp's options; zkr mcp --help).",
        main,
        pass_db=True,
    )
