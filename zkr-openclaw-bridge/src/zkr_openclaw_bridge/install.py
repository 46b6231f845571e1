"""Copy the plugin to a folder OpenClaw loads, and say how to select it.

OpenClaw reads a local plugin folder (``plugins.load.paths`` or ``openclaw plugins install DIR``);
the memory slot is chosen by configuration (``plugins.slots.memory: "zkr"``), never by the plugin.
The database and the scope default to zkr's shared settings (:mod:`zkr.settings`: ``ZKR_DB``,
``ZKR_TENANT``, ``ZKR_PERSON``), so the OpenClaw plugin and the other hosts of one machine share one
memory; left unset, the plugin's own defaults apply (``~/.zkr/memory.db``, tenant ``openclaw``,
the active agent as the person).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from zkr import settings

__all__ = ["PLUGIN_FILES", "Installation", "default_command", "install", "plugin_dir"]

#: What OpenClaw needs: the manifest, the npm metadata, the code and the shared tool definitions.
PLUGIN_FILES = (
    "openclaw.plugin.json",
    "package.json",
    "index.js",
    "auto-memory.js",
    "runner.js",
    "tools.json",
)


def plugin_dir() -> Path:
    """The plugin folder shipped inside this package."""
    return Path(str(resources.files("zkr_openclaw_bridge").joinpath("plugin")))


def default_command() -> str | None:
    """The ``zkr`` installed beside this Python (a venv's console script), else the one on PATH."""
    beside = Path(sys.executable).parent / "zkr"
    if beside.is_file():
        return str(beside)
    return shutil.which("zkr")


@dataclass(frozen=True)
class Installation:
    """Where the plugin went and the configuration that makes OpenClaw use it."""

    directory: Path
    config: dict[str, str]

    def instructions(self) -> str:
        entry = json.dumps(self.config, separators=(",", ":"))
        target = str(self.directory)
        return "\n".join(
            [
                f"Copied the zkr OpenClaw plugin to {target}",
                "Load it, either with",
                f"  openclaw plugins install {target}",
                "or by adding the folder to plugins.load.paths:",
                f"  openclaw config set plugins.load.paths '{json.dumps([target])}' --strict-json",
                "then give zkr the memory slot and tell it which zkr and database to use:",
                "  openclaw config set plugins.slots.memory zkr",
                f"  openclaw config set plugins.entries.zkr.config '{entry}' --strict-json",
                "and let it remember each turn (auto-capture runs on agent_end, a hook OpenClaw",
                "gives a plugin only with this; auto-recall needs nothing more):",
                "  openclaw config set plugins.entries.zkr.hooks.allowConversationAccess true",
            ]
        )


def install(
    directory: Path,
    *,
    command: str | None = None,
    database: str | None = None,
    tenant: str | None = None,
    person: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Installation:
    """Copy :data:`PLUGIN_FILES` into *directory* (created if needed; existing files replaced).

    *database*, *tenant* and *person* that are not given come from zkr's settings (``ZKR_DB``,
    ``ZKR_TENANT``, ``ZKR_PERSON`` in *environ*, default ``os.environ``) when those are set.
    """
    target = directory.expanduser().resolve()
    target.mkdir(parents=True, exist_ok=True)
    source = plugin_dir()
    for name in PLUGIN_FILES:
        shutil.copyfile(source / name, target / name)
    config: dict[str, str] = {}
    resolved = command or default_command()
    if resolved:
        config["command"] = str(Path(resolved).resolve())
    env = os.environ if environ is None else environ
    database = database or env.get(settings.DB.env, "").strip() or None
    if database:
        config["database"] = str(Path(database).expanduser().resolve())
    for key, given, setting in (
        ("tenant", tenant, settings.TENANT),
        ("person", person, settings.PERSON),
    ):
        value = given or setting.value(env)
        if value:
            config[key] = value
    return Installation(target, config)
