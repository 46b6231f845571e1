"""The hook zkr-cli adds to zkr's plugin manager (pluggy project ``zkr``).

zkr-core never imports click, so the one hook whose argument is a click object is specified here and
added to ``zkr.plugins.pm`` by :func:`zkr_cli.cli.build_cli` before plugins are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

__all__ = ["hookspec", "zkr_register_commands"]

hookspec = pluggy.HookspecMarker("zkr")


@hookspec
def zkr_register_commands(cli: click.Group) -> None:
    """Add commands to the ``zkr`` command line.

    :param cli: the ``click.Group`` of zkr's non-contract commands. Add commands with
        ``@cli.command()`` or ``cli.add_command(...)``. A command receives a
        :class:`zkr_cli.cli.ZkrContext` as its click ``obj`` (``@click.pass_obj``): ``db_path``,
        ``open_db()`` and ``emit(value)``; it should print one JSON line through ``emit`` and
        raise :class:`zkr.errors.ZkrError` (or ``click.ClickException``) to fail, which zkr
        reports as ``{"error": message}`` on stderr with exit status 1.
        Names of contract commands and of ``serve``/``plugins`` are reserved: those always run
        zkr's own command.
    :returns: nothing.
    """
