"""zkr's plugin entry point for zkr-agent-hooks (entry-point group ``zkr``, name ``agent-hooks``).

``zkr agent-hooks ARGS`` is ``zkr-agent-hooks ARGS`` (run, plugin-dir, install-codex, mcp). The
hosts themselves run ``zkr-agent-hooks``; this spelling is for people at a terminal.
"""

from __future__ import annotations

from zkr.plugins.passthrough import passthrough_command

__all__ = ["zkr_register_commands"]

zkr_register_commands = passthrough_command(
    "agent-hooks",
    "Claude Code and Codex hooks: plugin-dir, install-codex (zkr agent-hooks --help).",
    "zkr_agent_hooks.__main__:main",
)
