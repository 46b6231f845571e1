"""The plugin system (pluggy, project name and entry-point group ``zkr``).

:mod:`zkr.plugins.hookspecs` holds the hook specifications; :mod:`zkr.plugins.embedders`,
:mod:`~zkr.plugins.extractors` and :mod:`~zkr.plugins.hosts` the interfaces plugins implement; the
manager (``pm``, ``load_plugins`` and the registries) is re-exported here.
"""

from __future__ import annotations

from zkr.plugins._manager import (
    DEFAULT_PLUGINS,
    get_embedder,
    get_embedders,
    get_extractors,
    get_hosts,
    get_plugins,
    load_plugins,
    pm,
    prepare_connection,
)
from zkr.plugins.embedders import Embedder
from zkr.plugins.extractors import ClaimExtractor, Suggestion
from zkr.plugins.hookspecs import hookimpl
from zkr.plugins.hosts import HostAdapter

__all__ = [
    "DEFAULT_PLUGINS",
    "ClaimExtractor",
    "Embedder",
    "HostAdapter",
    "Suggestion",
    "get_embedder",
    "get_embedders",
    "get_extractors",
    "get_hosts",
    "get_plugins",
    "hookimpl",
    "load_plugins",
    "pm",
    "prepare_connection",
]
