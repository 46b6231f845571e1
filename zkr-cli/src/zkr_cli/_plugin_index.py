"""The commands that installed plugins add, read from their distributions' metadata.

``zkr --help`` lists plugin commands without loading any plugin: importing one costs a fifth of a
second (zkr, pluggy, click), which is more than the whole help may cost. A distribution whose
``zkr_register_commands`` hook adds commands also names them in its entry points, one per
command, under the group ``zkr.commands`` (the value is the module holding the hook)::

    [project.entry-points."zkr.commands"]
    web = "zkr_web.zkr_plugin"

This module finds those names by reading ``entry_points.txt`` of the ``*.dist-info`` folders on
``sys.path`` directly: ``importlib.metadata`` would cost twice the help itself. The hook stays the
one way commands are built; ``tests/test_repository.py`` keeps each first-party distribution's
declared names equal to the commands its hook registers.
"""

from __future__ import annotations

import os
import sys

__all__ = ["GROUP", "plugin_commands"]

#: The entry-point group that names a distribution's commands.
GROUP = "zkr.commands"


def _section(text: str, group: str) -> list[str]:
    """The entry names of *group* in an ``entry_points.txt`` (an INI file)."""
    names: list[str] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line and not line.startswith(("#", ";")):
            names.append(line.partition("=")[0].strip())
    return names


def _distribution_name(dist_info: str) -> str:
    """The project's name from ``METADATA`` (``Name:``), else from the folder's name."""
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8") as metadata:
            for line in metadata:
                if line.startswith("Name:"):
                    return line.partition(":")[2].strip()
                if not line.strip():
                    break
    except OSError:
        pass
    return os.path.basename(dist_info).split("-")[0].replace("_", "-")


def plugin_commands() -> list[tuple[str, str]]:
    """``(command, distribution)`` for every command an installed distribution declares, sorted
    by command; the first distribution on ``sys.path`` wins a name, as Python's own import does."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            folder = os.path.join(entry or ".", name)
            try:
                with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as file:
                    text = file.read()
            except OSError:
                continue
            if f"[{GROUP}]" not in text:
                continue
            distribution = _distribution_name(folder)
            for command in _section(text, GROUP):
                found.setdefault(command, distribution)
    return sorted(found.items())
