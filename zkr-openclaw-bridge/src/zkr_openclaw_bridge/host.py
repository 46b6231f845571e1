"""OpenClaw as a zkr host: what ``zkr_register_hosts`` registers."""

from __future__ import annotations

import json
from typing import ClassVar

from zkr.plugins.hosts import HostAdapter, HostHealth
from zkr_openclaw_bridge.install import PLUGIN_FILES, default_command, plugin_dir

__all__ = ["OpenClawHost"]


class OpenClawHost(HostAdapter):
    """OpenClaw 2026.7.1-2: an ESM memory-slot plugin (id ``zkr``) that runs the ``zkr`` command."""

    name: ClassVar[str] = "openclaw"
    install: ClassVar[str] = (
        "Run `zkr-openclaw-bridge install DIR`, then apply the two `openclaw config set` lines it "
        'prints: load DIR as a plugin and set plugins.slots.memory to "zkr".'
    )

    def health(self) -> HostHealth:
        """The shipped plugin is complete, declares every tool, and a ``zkr`` command exists."""
        try:
            from zkr_openclaw_bridge.tools import TOOL_NAMES

            folder = plugin_dir()
            missing = [name for name in PLUGIN_FILES if not (folder / name).is_file()]
            if missing:
                return HostHealth(ok=False, detail=f"plugin files missing: {', '.join(missing)}")
            manifest = json.loads((folder / "openclaw.plugin.json").read_text("utf-8"))
            if manifest.get("contracts", {}).get("tools") != list(TOOL_NAMES):
                return HostHealth(ok=False, detail="manifest contracts.tools != tools.json")
            if default_command() is None:
                return HostHealth(ok=False, detail="no zkr command beside Python or on PATH")
        except Exception as exc:  # a health check never raises
            return HostHealth(ok=False, detail=f"plugin unreadable ({type(exc).__name__})")
        return HostHealth(ok=True, detail=f"plugin files in {folder}")
