"""The plugin manager: loading ``zkr`` entry points and collecting what plugins register.

``load_plugins()`` runs once per process, in tox's order with llm's and datasette's switches:

1. every name in ``ZKR_DISABLE_PLUGINS`` (comma-separated) is blocked;
2. installed entry points of the group ``zkr`` are loaded — all of them when ``ZKR_LOAD_PLUGINS`` is
   unset, only the listed distributions when it is set (empty: none) — except under pytest
   (``sys._called_from_test``), unless a test asks with ``load_plugins(entry_points=True)``;
3. the default plugins (:data:`DEFAULT_PLUGINS`) are registered;
4. ``pm.check_pending()`` refuses implementations of hooks that do not exist;
5. ``ZKR_TRACE_PLUGINS`` prints every hook call to stderr.

The environment is read at call time, so tests can set it. Registries (:func:`get_embedders` ...)
call the hooks and refuse two plugins that register the same id, naming both.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

import pluggy

from zkr.errors import DuplicatePluginIdError, UnknownPluginError
from zkr.plugins import hookspecs

# No ``__all__``: the package (zkr.plugins) re-exports this module's public names and lists them.

#: The plugin manager of the process. Other distributions add their own hook specs to it
#: (zkr-cli adds ``zkr_register_commands``).
pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
pm.add_hookspecs(hookspecs)

#: Plugins that ship with zkr-core, registered under their module name.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "zkr.plugins.default_plugins.rule_extractor",
    "zkr.plugins.default_plugins.importers",
)

_entry_points_loaded = False
_defaults_loaded = False
#: plugin name -> (distribution name, version) for plugins loaded from entry points.
_distributions: dict[str, tuple[str, str]] = {}


def _names(variable: str) -> list[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return [name.strip() for name in raw.split(",") if name.strip()]


def load_plugins(*, entry_points: bool | None = None) -> None:
    """Load and register plugins (idempotent; see the module docstring for the order).

    :param entry_points: load installed ``zkr`` entry points. ``None`` (the default) means "yes,
        except under pytest"; a test that wants the installed plugins passes ``True``.
    """
    global _entry_points_loaded, _defaults_loaded
    for name in _names("ZKR_DISABLE_PLUGINS") or ():
        if not pm.is_blocked(name):
            pm.set_blocked(name)
    if entry_points is None:
        entry_points = not getattr(sys, "_called_from_test", False)
    if entry_points and not _entry_points_loaded:
        _entry_points_loaded = True
        _load_entry_points(_names("ZKR_LOAD_PLUGINS"))
    if not _defaults_loaded:
        _defaults_loaded = True
        for module_name in DEFAULT_PLUGINS:
            if pm.is_blocked(module_name) or pm.has_plugin(module_name):
                continue
            pm.register(importlib.import_module(module_name), name=module_name)
        if os.environ.get("ZKR_TRACE_PLUGINS"):
            pm.trace.root.setwriter(lambda message: print(message, end="", file=sys.stderr))
            pm.enable_tracing()
    pm.check_pending()


def _load_entry_points(only: list[str] | None) -> None:
    wanted = None if only is None else {_normalize(name) for name in only}
    for dist in importlib.metadata.distributions():
        dist_name = dist.metadata["Name"] or ""
        if wanted is not None and _normalize(dist_name) not in wanted:
            continue
        for ep in dist.entry_points:
            if ep.group != hookspecs.PROJECT_NAME:
                continue
            if pm.is_blocked(ep.name) or pm.has_plugin(ep.name):
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # one broken install must not take every command down
                print(
                    f"zkr: plugin {ep.name!r} ({dist_name}) failed to load: {exc}", file=sys.stderr
                )
                continue
            pm.register(plugin, name=ep.name)
            _distributions[ep.name] = (dist_name, dist.version)


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def get_plugins(all: bool = False) -> list[dict[str, Any]]:
    """Registered plugins as ``[{"name", "hooks", "version"}]`` (what ``zkr plugins`` prints).

    Default plugins are listed only with ``all=True``. ``version`` is the plugin distribution's
    version, or ``None`` for a plugin registered in process. A plugin that registers embedders
    lists them under ``embedders`` (model, version, dimension, normalization, distance, roles): the
    ``model``/``version`` pair is what ``rebuild`` and a search's ``query_embedding`` name. A
    plugin that registers importers lists them under ``importers`` (name, description): the names
    ``zkr import --from`` takes.
    """
    load_plugins()
    listed: list[dict[str, Any]] = []
    for plugin in pm.get_plugins():
        name = pm.get_name(plugin)
        if name is None or (not all and name in DEFAULT_PLUGINS):
            continue
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or ())
        dist = _distributions.get(name)
        entry: dict[str, Any] = {"name": name, "hooks": hooks, "version": dist[1] if dist else None}
        if dist is not None:
            entry["distribution"] = dist[0]
        if "zkr_register_embedders" in hooks:
            entry["embedders"] = _embedders_of(plugin)
        if "zkr_register_importers" in hooks:
            entry["importers"] = [
                {"name": getattr(i, "name", None), "description": getattr(i, "description", None)}
                for i in _registered_by(plugin, "zkr_register_importers")
            ]
        listed.append(entry)
    return sorted(listed, key=lambda entry: str(entry["name"]))


def _registered_by(plugin: object, hook_name: str) -> list[Any]:
    """What one plugin's ``register`` hook *hook_name* registers (best effort)."""
    found: list[Any] = []
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        if impl.plugin is plugin:
            try:
                impl.function(*[{"register": found.append}[arg] for arg in impl.argnames])
            except Exception:  # a broken plugin is reported when it is used, not listed
                return []
    return found


def _embedders_of(plugin: object) -> list[dict[str, Any]]:
    """What one plugin's ``zkr_register_embedders`` registers, described (best effort)."""
    found = _registered_by(plugin, "zkr_register_embedders")
    return [
        {
            "model": getattr(embedder, "model", None),
            "version": getattr(embedder, "version", None),
            "dimension": getattr(embedder, "dimension", None),
            "normalization": getattr(embedder, "normalization", None),
            "distance": getattr(embedder, "distance", None),
            "roles": list(getattr(embedder, "roles", ()) or ()),
        }
        for embedder in found
    ]


# ---------------------------------------------------------------------------------------------
# Registries
# ---------------------------------------------------------------------------------------------

_registry_cache: dict[str, tuple[tuple[Any, ...], dict[Any, Any]]] = {}


def _collect(
    hook_name: str, key_of: Callable[[Any], Any], label: Callable[[Any], str], check: Any = None
) -> dict[Any, Any]:
    """Call one ``register`` hook plugin by plugin; refuse an id registered twice."""
    load_plugins()
    caller = getattr(pm.hook, hook_name)
    impls = caller.get_hookimpls()
    # The implementations themselves (not their ids, which could be reused after unregistering).
    fingerprint = tuple((impl.plugin_name, impl.function) for impl in impls)
    cached = _registry_cache.get(hook_name)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    found: dict[Any, Any] = {}
    owners: dict[Any, str] = {}
    for impl in impls:
        plugin_name = impl.plugin_name

        def register(item: Any, _plugin: str = plugin_name) -> None:
            if check is not None:
                check(item)
            key = key_of(item)
            if key in found:
                raise DuplicatePluginIdError(
                    f"{label(item)} is registered by two plugins: {owners[key]!r} and {_plugin!r}"
                )
            found[key] = item
            owners[key] = _plugin

        impl.function(*[{"register": register}[arg] for arg in impl.argnames])
    _registry_cache[hook_name] = (fingerprint, found)
    return found


def get_embedders() -> dict[tuple[str, str], Any]:
    """Registered embedders by ``(model, version)``.

    :raises DuplicatePluginIdError: two plugins registered the same model and version.
    """
    from zkr.plugins.embedders import check_embedder, embedder_id

    return _collect(
        "zkr_register_embedders",
        lambda e: (e.model, e.version),
        lambda e: f"embedder {embedder_id(e)}",
        check_embedder,
    )


def get_embedder(model: str, version: str) -> Any:
    """The registered embedder of (*model*, *version*).

    :raises UnknownPluginError: none is installed.
    """
    embedder = get_embedders().get((model, version))
    if embedder is None:
        raise UnknownPluginError(f"no installed embedder for model {model!r} version {version!r}")
    return embedder


def get_extractors() -> dict[str, Any]:
    """Registered claim extractors by name."""
    return _collect("zkr_register_extractors", lambda x: x.name, lambda x: f"extractor {x.name!r}")


def get_hosts() -> dict[str, Any]:
    """Registered host adapters by name."""
    return _collect("zkr_register_hosts", lambda h: h.name, lambda h: f"host {h.name!r}")


def get_importers() -> dict[str, Any]:
    """Registered importers by name (``zkr import --from NAME``)."""
    return _collect("zkr_register_importers", lambda i: i.name, lambda i: f"importer {i.name!r}")


# ---------------------------------------------------------------------------------------------
# Connections
# ---------------------------------------------------------------------------------------------


def prepare_connection(conn: sqlite3.Connection) -> None:
    """Run every ``zkr_prepare_connection`` implementation on *conn*."""
    load_plugins()
    pm.hook.zkr_prepare_connection(conn=conn)
