"""zkr's plugin entry point for zkr-postgres (entry-point group ``zkr``, name ``postgres``).

``zkr postgres ARGS`` is ``zkr-postgres ARGS`` (migrate, sync, rebuild, serve), parsed by
zkr-postgres itself. Kept import-light: psycopg is imported only when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zkr import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["zkr_register_commands"]


def _main(args: list[str]) -> int:
    from zkr_postgres.__main__ import main

    main(args)
    return 0


# optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
@hookimpl(optionalhook=True)
def zkr_register_commands(cli: click.Group) -> None:
    """Add ``zkr postgres`` (zkr-postgres's subcommands and options)."""
    from zkr_cli.passthrough import add_passthrough

    add_passthrough(
        cli,
        "postgres",
        "Replicate zkr databases into PostgreSQL and serve them (zkr postgres --help).",
        _main,
    )
