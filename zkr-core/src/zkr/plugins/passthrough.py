"""``zkr NAME ARGS``: how a distribution with its own console script joins the ``zkr`` command line.

zkr-mcp, zkr-postgres, zkr-hermes and zkr-agent-hooks each keep their own console script and their
own option parser (one definition of each option); ``zkr NAME ARGS`` runs that program's
``main(ARGS)``. The hook, ``zkr_register_commands(cli)``, is zkr-cli's (``zkr_cli.hookspecs``, added
only when zkr-cli builds its command line), and so is the click adapter
(``zkr_cli.passthrough.add_passthrough``). :func:`passthrough_command` builds a distribution's
implementation of that hook once, for all of them: it imports zkr-cli's adapter only when zkr-cli
calls it, and the program only when the command runs, so a plugin module stays import-light and its
distribution does not depend on zkr-cli or click.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from zkr.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["passthrough_command"]


def passthrough_command(
    name: str, summary: str, main: str, *, pass_db: bool = False
) -> Callable[[click.Group], None]:
    """A ``zkr_register_commands`` implementation that adds ``zkr NAME ARGS...``.

    A plugin module assigns it: ``zkr_register_commands = passthrough_command(...)``.

    :param summary: the command's line in ``zkr --help``.
    :param main: ``"module:function"``, the program's ``main(args)``; it answers the exit status
        (``None`` is 0).
    :param pass_db: the program takes ``--db``: give it zkr's database unless the arguments name
        one.
    """
    module, _, function = main.partition(":")

    def run(args: list[str]) -> int:
        status: int | None = getattr(importlib.import_module(module), function)(args)
        return status or 0

    # optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
    @hookimpl(optionalhook=True)
    def zkr_register_commands(cli: click.Group) -> None:
        from zkr_cli.passthrough import add_passthrough

        add_passthrough(cli, name, summary, run, pass_db=pass_db)

    zkr_register_commands.__doc__ = f"Add ``zkr {name}`` ({main} with the same arguments)."
    return zkr_register_commands
