"""zkr's plugin entry point for the OpenClaw bridge (entry-point group ``zkr``, name ``openclaw``).

Kept import-light: zkr loads it for every non-contract command, so heavy modules load inside the
hooks only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from zkr import hookimpl

if TYPE_CHECKING:
    import click

    from zkr.plugins.hosts import HostAdapter

__all__ = ["zkr_register_commands", "zkr_register_hosts"]


@hookimpl
def zkr_register_hosts(register: Callable[[HostAdapter], None]) -> None:
    """Register OpenClaw as a host zkr can be installed into."""
    from zkr_openclaw_bridge.host import OpenClawHost

    register(OpenClawHost())


# optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
@hookimpl(optionalhook=True)
def zkr_register_commands(cli: click.Group) -> None:
    """Add ``openclaw``, ``openclaw-tool`` and ``openclaw-serve`` to the ``zkr`` command line."""
    from zkr_openclaw_bridge.commands import add_commands

    add_commands(cli)
