"""The plugin system (pluggy, project name and entry-point group ``zkr``).

:mod:`zkr.plugins.hookspecs` holds the hook specifications; :mod:`zkr.plugins.embedders`,
:mod:`~zkr.plugins.extractors`, :mod:`~zkr.plugins.hosts` and :mod:`~zkr.plugins.importers` the
interfaces plugins implement; the manager (``pm``, ``load_plugins`` and the registries) is
re-exported here. The names load on first use (PEP 562): a write that only needs an interface
module never loads the manager (pluggy's entry-point machinery), which a one-shot command must not
pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zkr.plugins._manager import (
        DEFAULT_PLUGINS,
        get_embedder,
        get_embedders,
        get_extractors,
        get_hosts,
        get_importers,
        get_plugins,
        load_plugins,
        pm,
        prepare_connection,
    )
    from zkr.plugins.embedders import Embedder
    from zkr.plugins.extractors import ClaimExtractor, Suggestion
    from zkr.plugins.hookspecs import hookimpl
    from zkr.plugins.hosts import HostAdapter
    from zkr.plugins.importers import Importer

__all__ = [
    "DEFAULT_PLUGINS",
    "ClaimExtractor",
    "Embedder",
    "HostAdapter",
    "Importer",
    "Suggestion",
    "get_embedder",
    "get_embedders",
    "get_extractors",
    "get_hosts",
    "get_importers",
    "get_plugins",
    "hookimpl",
    "load_plugins",
    "pm",
    "prepare_connection",
]

#: Where each name lives: the interfaces in their own modules, everything else in the manager. The
#: package's ``__all__`` is the one list of the manager's public names (``_manager`` has none).
_INTERFACES = {
    "Embedder": "embedders",
    "ClaimExtractor": "extractors",
    "Suggestion": "extractors",
    "hookimpl": "hookspecs",
    "HostAdapter": "hosts",
    "Importer": "importers",
}
_HOMES = dict.fromkeys(__all__, "_manager") | _INTERFACES


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f"zkr.plugins.{home}"), name)
        globals()[name] = value
        return value
    if name == "_manager":  # tests reach into the manager's state
        return importlib.import_module("zkr.plugins._manager")
    raise AttributeError(f"module 'zkr.plugins' has no attribute {name!r}")
