"""zkr's plugin entry point for zkr-mcp (entry-point group ``zkr``, name ``mcp``): ``zkr mcp``.

``zkr mcp ARGS`` is ``zkr-mcp --db <zkr's database> ARGS``: the options are zkr-mcp's own, parsed
by zkr-mcp (one definition, see ``zkr_mcp.config``), so the two spellings cannot drift. Kept
import-light: zkr loads it for every non-contract command; the MCP SDK is imported only when
``zkr mcp`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from zkr import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["zkr_register_commands"]


class _Context(Protocol):
    """What zkr-cli passes to a command as its click ``obj`` (``zkr_cli.cli.ZkrContext``)."""

    db_path: str


# optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
@hookimpl(optionalhook=True)
def zkr_register_commands(cli: click.Group) -> None:
    """Add ``zkr mcp`` (zkr-mcp's options; the database is ``zkr --db``)."""
    import click

    @cli.command(
        name="mcp",
        help="Serve one person's memory to MCP clients (zkr-mcp's options; zkr mcp --help).",
        context_settings={"ignore_unknown_options": True, "help_option_names": []},
        add_help_option=False,
    )
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_obj
    def mcp(ctx: _Context, args: tuple[str, ...]) -> int:
        from zkr_mcp.__main__ import main

        given = list(args)
        if any(a in ("-h", "--help") for a in given):
            return main(["--help"])
        has_db = any(a == "--db" or a.startswith("--db=") for a in given)
        return main(given if has_db else ["--db", str(ctx.db_path), *given])
