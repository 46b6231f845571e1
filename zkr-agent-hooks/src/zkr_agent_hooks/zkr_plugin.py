"""zkr's plugin entry point for zkr-agent-hooks (entry-point group ``zkr``, name ``agent-hooks``).

``zkr agent-hooks ARGS`` is ``zkr-agent-hooks ARGS`` (run, plugin-dir, install-codex, mcp). The
hosts themselves run ``zkr-agent-hooks``; this spelling is for people at a terminal.
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
    """Add ``zkr agent-hooks`` (zkr-agent-hooks's subcommands)."""
    from zkr_agent_hooks.__main__ import main
    from zkr_cli.passthrough import add_passthrough

    add_passthrough(
        cli,
        "agent-hooks",
        "Claude Code and Codex hooks: plugin-dir, install-codex (zkr agent-hooks --help).",
        main,
    )
