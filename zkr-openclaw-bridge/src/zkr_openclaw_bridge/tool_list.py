"""The plugin's tool list, generated: ``plugin/tools.json`` and the manifest's tool contracts.

OpenClaw's host-contract tools ``memory_search`` and ``memory_get`` (memory-core's shapes) are the
bridge's own and declared here. Every other tool is one of zkr's table tools,
:func:`zkr.tools.tool_specs`: the same names, arguments and limits as on every other host. Reads
are marked ``readOnly`` (the plugin may repeat them after a failed serve process) and
``replaySafe`` in the manifest.

``python -m zkr_openclaw_bridge.tool_list`` rewrites both files; ``--check`` changes nothing and
exits 1 when either is stale (a test runs the check).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zkr.generating import refresh

__all__ = ["HOST_TOOLS", "generated_manifest", "generated_tools", "main", "render"]

_PLUGIN = Path(__file__).parent / "plugin"

#: OpenClaw's memory slot contract (memory-core's tools), answered from zkr by the bridge.
HOST_TOOLS: dict[str, dict[str, Any]] = {
    "memory_search": {
        "label": "Memory Search",
        "description": (
            "Search zkr memory before answering questions about prior work, decisions, people, "
            "preferences or todos. Each result cites the evidence it rests on; read more of a "
            "result with memory_get and its path. If the response has disabled=true, memory is "
            "unavailable: tell the user."
        ),
        "readOnly": True,
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What to look for, in the user's words.",
                },
                "maxResults": {"type": "integer", "minimum": 1, "maximum": 100},
                "minScore": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    "memory_get": {
        "label": "Memory Get",
        "description": (
            "Read a zkr memory found by memory_search, by its zkr:// path. Returns a bounded "
            "window of lines (from, lines) and nextFrom when more remains."
        ),
        "readOnly": True,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "A path from memory_search, e.g. zkr://claim/<id>.",
                },
                "from": {"type": "integer", "minimum": 1},
                "lines": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
}


def _label(name: str) -> str:
    # zkr_store -> "zkr Store"
    head, _, rest = name.partition("_")
    return " ".join([head, *(word.capitalize() for word in rest.split("_"))])


def generated_tools() -> dict[str, dict[str, Any]]:
    """``tools.json``: the host tools, then zkr's table tools in table order."""
    from zkr.tools import tool_specs

    tools = {name: dict(definition) for name, definition in HOST_TOOLS.items()}
    for spec in tool_specs():
        tools[spec.name] = {
            "label": _label(spec.name),
            "operation": spec.operation,
            "description": spec.description,
            "readOnly": spec.effect == "read",
            "parameters": spec.parameters,
        }
    return tools


def generated_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """*manifest* with its tool contracts and replay-safe tools from :func:`generated_tools`."""
    tools = generated_tools()
    return {
        **manifest,
        "contracts": {**manifest.get("contracts", {}), "tools": list(tools)},
        "toolMetadata": {
            name: {"replaySafe": True}
            for name, definition in tools.items()
            if definition["readOnly"]
        },
    }


def render(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    plugin = Path(next((a for a in args if a != "--check"), _PLUGIN))
    tools_path, manifest_path = plugin / "tools.json", plugin / "openclaw.plugin.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    wanted = {
        tools_path: render(generated_tools()),
        manifest_path: render(generated_manifest(manifest)),
    }
    return refresh(wanted, check=check, command="python -m zkr_openclaw_bridge.tool_list")


if __name__ == "__main__":
    sys.exit(main())
