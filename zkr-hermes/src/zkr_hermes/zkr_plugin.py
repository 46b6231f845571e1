"""zkr's plugin entry point for zkr-hermes (entry-point group ``zkr``, name ``hermes``).

Registers Hermes as a host, so ``zkr plugins`` lists it with its install line and health, and
adds ``zkr hermes ARGS`` (``zkr-hermes ARGS``: install, status).
Import-light: zkr loads this for its plugin commands, so everything else loads inside the hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from zkr import hookimpl
from zkr.plugins.passthrough import passthrough_command

if TYPE_CHECKING:
    from zkr.plugins.hosts import HostAdapter

__all__ = ["zkr_register_commands", "zkr_register_hosts"]


@hookimpl
def zkr_register_hosts(register: Callable[[HostAdapter], None]) -> None:
    """Register Hermes Agent 0.19.0 as a host zkr can be the memory of."""
    from zkr_hermes.host import HermesHost

    register(HermesHost())


zkr_register_commands = passthrough_command(
    "hermes",
    "zkr as Hermes Agent's memory: install, status (zkr hermes --help).",
    "zkr_hermes.__main__:main",
)
