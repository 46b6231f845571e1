"""A ``zkr`` subcommand that is another program of the family: ``zkr NAME ARGS`` is ``main(ARGS)``.

zkr-mcp, zkr-postgres, zkr-hermes, zkr-openclaw-bridge and zkr-agent-hooks each keep their own
console script and their own option parser (one definition of each option); the ``zkr`` command
line reaches them through this one adapter, which their ``zkr_register_commands`` hooks call. Those
hooks are built by zkr-core's ``zkr.plugins.passthrough.passthrough_command``, which imports this
module only when zkr-cli calls them, so none of them depends on zkr-cli.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

    from zkr_cli.cli import ZkrContext

__all__ = ["add_passthrough"]


def _names_db(args: Sequence[str]) -> bool:
    return any(arg == "--db" or arg.startswith("--db=") for arg in args)


def add_passthrough(
    cli: click.Group,
    name: str,
    summary: str,
    main: Callable[[list[str]], int],
    *,
    pass_db: bool = False,
) -> None:
    """Add ``zkr NAME ARGS...``: every argument (``--help`` included) goes to *main* untouched.

    :param pass_db: the program takes ``--db``: give it zkr's database (``zkr --db PATH`` or the
        default) unless the arguments name one.
    """
    import click

    @cli.command(
        name=name,
        help=summary,
        context_settings={"ignore_unknown_options": True, "help_option_names": []},
        add_help_option=False,
    )
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_obj
    def command(ctx: ZkrContext, args: tuple[str, ...]) -> int:
        given = list(args)
        if pass_db and not _names_db(given) and not {"-h", "--help"} & set(given):
            given = ["--db", str(ctx.db_path), *given]
        return main(given)
