"""OpenClaw as a zkr host: what ``zkr_register_hosts`` registers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkr_openclaw_bridge.install import PLUGIN_FILES, Installation, install, plugin_dir

__all__ = ["OPENCLAW_HOST", "OpenClawHost"]


@dataclass(frozen=True)
class OpenClawHost:
    """OpenClaw 2026.7.1-2: an ESM memory-slot plugin that drives the ``zkr`` command."""

    name: str = "openclaw"
    summary: str = "OpenClaw memory slot (plugin id zkr) backed by the zkr command"
    host_version: str = "2026.7.1-2"

    def install(self, directory: Path, **options: Any) -> Installation:
        """Copy the plugin into *directory*; the result prints the configuration to apply."""
        return install(directory, **options)

    def health(self) -> dict[str, Any]:
        """Whether the shipped plugin is complete and its manifest declares every tool."""
        from zkr_openclaw_bridge.tools import TOOL_NAMES

        folder = plugin_dir()
        missing = [name for name in PLUGIN_FILES if not (folder / name).is_file()]
        declared: list[str] = []
        if "openclaw.plugin.json" not in missing:
            manifest = json.loads((folder / "openclaw.plugin.json").read_text("utf-8"))
            declared = manifest.get("contracts", {}).get("tools", [])
        ok = not missing and sorted(declared) == sorted(TOOL_NAMES)
        return {"ok": ok, "missing_files": missing, "tools": sorted(declared)}


OPENCLAW_HOST = OpenClawHost()
