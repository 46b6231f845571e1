"""``zkr-hermes install``: make Hermes Agent 0.19.0 find the provider.

Hermes loads memory providers only from ``$HERMES_HOME/plugins/<name>/`` (pip entry points are not
consulted for memory), and it imports *every* ``*.py`` file in that folder. So the folder gets
exactly two files: ``plugin.yaml`` and an ``__init__.py`` that imports this installed package.
The folder name is the provider id Hermes' config selects: ``memory: provider: zkr``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from zkr_hermes import __version__

__all__ = ["PLUGIN_NAME", "InstallError", "install", "shim_files"]

PLUGIN_NAME = "zkr"

SHIM_INIT = '''"""Hermes memory-provider shim written by `zkr-hermes install`.

The provider is the installed package `zkr_hermes` (pip install zkr-hermes into the Python
environment Hermes runs in). Keep this folder to this file and plugin.yaml: Hermes imports every
*.py file placed here.
"""

from zkr_hermes.provider import ZkrMemoryProvider


def register(ctx):
    ctx.register_memory_provider(ZkrMemoryProvider())
'''

SHIM_YAML = f"""name: {PLUGIN_NAME}
version: {__version__}
description: "zkr: local, evidence-backed temporal memory (pip package zkr-hermes)."
kind: exclusive
pip_dependencies:
  - zkr-hermes
"""

CONFIG_HINT = f"""memory:
  provider: {PLUGIN_NAME}"""


class InstallError(Exception):
    """The shim folder holds files this installer did not write."""


def shim_files() -> dict[str, str]:
    """File name -> content of the shim folder."""
    return {"__init__.py": SHIM_INIT, "plugin.yaml": SHIM_YAML}


def _unexpected(target: Path) -> list[str]:
    if not target.exists():
        return []
    expected = set(shim_files()) | {"__pycache__"}
    return sorted(p.name for p in target.iterdir() if p.name not in expected)


def install(hermes_home: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the shim into ``<hermes_home>/plugins/zkr`` and return that folder.

    Rewriting our own files is always allowed (upgrades). Anything else in the folder (an old
    copy of a plugin, a stray test module Hermes would execute) stops the install unless *force*,
    which replaces the whole folder.

    :raises InstallError: the folder holds other files and *force* is false.
    """
    plugins = Path(hermes_home).expanduser() / "plugins"
    target = plugins / PLUGIN_NAME
    extra = _unexpected(target)
    if extra and not force:
        raise InstallError(
            f"{target} holds files zkr-hermes did not write ({', '.join(extra)}); Hermes would "
            "import them. Remove them, or rerun with --force to replace the folder."
        )
    plugins.mkdir(parents=True, exist_ok=True)
    # Build the folder aside and swap it in, so Hermes never sees half a shim.
    staging = Path(tempfile.mkdtemp(prefix=".zkr-install-", dir=plugins))
    try:
        for name, content in shim_files().items():
            (staging / name).write_text(content, encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
