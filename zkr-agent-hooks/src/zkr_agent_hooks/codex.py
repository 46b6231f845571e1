"""The Codex side of the install: the hook entries ``~/.codex/hooks.json`` needs (pure + one write).

Codex reads ``hooks.json`` from ``$CODEX_HOME`` (default ``~/.codex``) and from a project's
``.codex/`` when ``[features] codex_hooks = true`` is set in its ``config.toml``. Its layout is
Claude Code's: event -> matcher groups -> command hooks. Installing merges our entries into what is
there, never removing another tool's hooks, and a second install changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["COMMAND", "EVENTS", "hook_entries", "install"]

COMMAND = "zkr-agent-hooks run --host codex"
#: Recall at session start and each prompt; capture at the end of each turn and before compaction.
EVENTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 60, "PreCompact": 60}


def hook_entries() -> dict[str, list[dict[str, Any]]]:
    return {
        event: [{"hooks": [{"type": "command", "command": COMMAND, "timeout": timeout}]}]
        for event, timeout in EVENTS.items()
    }


def _has_ours(groups: list[Any]) -> bool:
    return any(
        isinstance(group, dict)
        and any(
            isinstance(hook, dict) and hook.get("command") == COMMAND
            for hook in group.get("hooks", [])
        )
        for group in groups
    )


def install(codex_home: Path) -> Path:
    """Merge our hooks into ``codex_home/hooks.json``; the file written.

    :raises ValueError: the existing file is not a hooks.json object (it is left as it was).
    """
    path = codex_home / "hooks.json"
    config: dict[str, Any] = {}
    if path.exists():
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(loaded, dict) or not isinstance(loaded.get("hooks", {}), dict):
            raise ValueError(f"{path} is not a hooks.json object; not changed")
        config = loaded
    hooks = config.setdefault("hooks", {})
    for event, groups in hook_entries().items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise ValueError(f"{path}: hooks.{event} is not a list; not changed")
        if not _has_ours(existing):
            existing.extend(groups)
    codex_home.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path
