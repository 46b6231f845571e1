"""The zkr hook specifications and the pluggy markers (project name and entry-point group ``zkr``).

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names are these specs'
names. Third-party distributions declare it under ``[project.entry-points.zkr]``. Implementations
may accept a subset of a spec's arguments; arguments may be added to a spec, never removed.

Every hook here is documented with its full signature in ``docs/plugin-hooks.md`` and has a
``test_hook_<name>`` test. The CLI's own hook, ``zkr_register_commands(cli)``, lives in
``zkr_cli.hookspecs`` so that zkr-core never imports click.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from zkr.plugins.embedders import Embedder
    from zkr.plugins.extractors import ClaimExtractor
    from zkr.plugins.hosts import HostAdapter
    from zkr.plugins.importers import Importer

__all__ = [
    "PROJECT_NAME",
    "hookimpl",
    "hookspec",
    "zkr_prepare_connection",
    "zkr_register_embedders",
    "zkr_register_extractors",
    "zkr_register_hosts",
    "zkr_register_importers",
]

#: The pluggy project name, which is also the entry-point group.
PROJECT_NAME = "zkr"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Marker for plugin implementations: ``@hookimpl def zkr_register_embedders(register): ...``.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


# ---------------------------------------------------------------------------------------------
# Providers: collected through a ``register`` callback, as llm does
# ---------------------------------------------------------------------------------------------


@hookspec
def zkr_register_embedders(register: Callable[[Embedder], None]) -> None:
    """Register text embedders.

    :param register: call ``register(embedder)`` once per :class:`zkr.plugins.embedders.Embedder`.
    Its
        ``(model, version)`` is its id: two plugins registering the same id is an error that names
        both. Construct heavy resources (model weights) lazily, on the first ``embed_batch``.
    :return: nothing; return values are ignored.
    """


@hookspec
def zkr_register_extractors(register: Callable[[ClaimExtractor], None]) -> None:
    """Register claim extractors, which turn a captured text into claim *suggestions*.

    :param register: call ``register(extractor)`` once per
    :class:`zkr.plugins.extractors.ClaimExtractor`;
        its ``name`` is its id. Suggestions are never stored by zkr itself.
    :return: nothing; return values are ignored.
    """


@hookspec
def zkr_register_hosts(register: Callable[[HostAdapter], None]) -> None:
    """Register host adapters (agent hosts that use zkr as their memory).

    :param register: call ``register(adapter)`` once per :class:`zkr.plugins.hosts.HostAdapter`: its
        ``name``, how it is installed, and a health check. ``name`` is its id.
    :return: nothing; return values are ignored.
    """


@hookspec
def zkr_register_importers(register: Callable[[Importer], None]) -> None:
    """Register importers, which read another tool's export for ``zkr import --from NAME``.

    :param register: call ``register(importer)`` once per
    :class:`zkr.plugins.importers.Importer`;
        its ``name`` is its id (the ``--from`` value). An importer only reads; zkr stores what it
        reads in one transaction, keyed by the ids the importer derives from the source.
    :return: nothing; return values are ignored.
    """


# ---------------------------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------------------------


@hookspec
def zkr_prepare_connection(conn: sqlite3.Connection) -> None:
    """Adjust a new SQLite connection before zkr migrates and uses it.

    Called for every connection opened through :func:`zkr.db.open_db` (register SQL
    functions, load extensions, set pragmas). Must not write data.

    :param conn: the new connection (autocommit mode; foreign keys on).
    :return: nothing; return values are ignored.
    """
