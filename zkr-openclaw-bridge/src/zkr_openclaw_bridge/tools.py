"""OpenClaw tool calls run against a zkr database: the bridge's one entry point.

The JavaScript plugin sends every call as one JSON object
``{"tenant_id", "person_id", "tool", "args"}``: the scope comes from the plugin's configuration
and the active agent, ``args`` is exactly what the model (or ``POST /tools/invoke``) supplied.
Those args reach this module unvalidated (the Gateway does not check them against the tool's
schema), so they are checked here, strictly, before any zkr operation runs.

The answer is ``{"details": ...}`` (the tool result the plugin returns, unchanged) or
``{"tool_error": message}`` for a call the model can fix (bad arguments, an unknown record).
Anything else raises and reaches OpenClaw only as the plugin's redacted ``zkr command failed``.

The tools (names, descriptions, parameter schemas) are in ``plugin/tools.json``, which the plugin
reads too; it is generated (:mod:`zkr_openclaw_bridge.tool_list`): ``memory_search``/``memory_get``
are OpenClaw's host contract, every ``zkr_*`` tool is one of zkr's table tools, and its arguments
run through :func:`zkr.tool_calls.call_tool`, exactly as on every other host.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from zkr.errors import InvalidRequest, NotFound, RequestParseError
from zkr_openclaw_bridge import mapping

if TYPE_CHECKING:
    from zkr.db import MemoryDb

__all__ = ["TOOL_NAMES", "run_tool", "tool_definitions"]

#: Errors the model caused and can act on; their messages are the contract's strings about the
#: request itself. Every other failure (storage, schema version, integrity) stays redacted.
_TOOL_FACING = (RequestParseError, InvalidRequest, NotFound)

_CALL_FIELDS = ("tenant_id", "person_id", "tool", "args")
_READ_WINDOW_ERROR = "from and lines must be positive integers"
_MAX_RESULTS = 100
_DEFAULT_RESULTS = 10


@cache
def tool_definitions() -> dict[str, dict[str, Any]]:
    """``plugin/tools.json``: tool name -> ``{label, description, parameters, operation?}``."""
    text = resources.files("zkr_openclaw_bridge").joinpath("plugin/tools.json").read_text("utf-8")
    definitions: dict[str, dict[str, Any]] = json.loads(text)
    return definitions


def _check_keys(tool: str, args: dict[str, Any]) -> None:
    """Refuse argument names the tool's schema does not declare (no additional properties)."""
    allowed = tool_definitions()[tool]["parameters"]["properties"]
    for key in args:
        if key not in allowed:
            raise RequestParseError(f"unknown field `{key}`")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional_int(args: dict[str, Any], key: str, low: int, high: int, message: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if not _is_int(value) or not low <= value <= high:
        raise RequestParseError(message)
    return int(value)


def _run(db: MemoryDb, scope: dict[str, str], name: str, fields: dict[str, Any]) -> Any:
    """Operation *name* in the call's scope, as JSON (zkr's run, busy retry included)."""
    from zkr.operations import to_json
    from zkr.tool_calls import run_scoped

    tenant_id, person_id = scope["tenant_id"], scope["person_id"]
    return to_json(run_scoped(db, name, fields, tenant_id=tenant_id, person_id=person_id))


def _memory_search(db: MemoryDb, scope: dict[str, str], args: dict[str, Any]) -> Any:
    _check_keys("memory_search", args)
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise RequestParseError("query must be a non-empty string")
    max_results = _optional_int(
        args, "maxResults", 1, _MAX_RESULTS, f"maxResults must be an integer in 1..{_MAX_RESULTS}"
    )
    min_score = args.get("minScore")
    if min_score is not None and (
        isinstance(min_score, bool)
        or not isinstance(min_score, int | float)
        or not math.isfinite(min_score)
        or not 0 <= min_score <= 1
    ):
        raise RequestParseError("minScore must be a number in 0..1")
    limit = _DEFAULT_RESULTS if max_results is None else max_results
    # No ranking: zkr's own default ($ZKR_RANKING, else recall; zkr.settings) decides.
    pack = _run(db, scope, "search", {"query": query, "limit": limit})
    return {"results": mapping.search_results(pack, min_score), "provider": "zkr"}


def _memory_get(db: MemoryDb, scope: dict[str, str], args: dict[str, Any]) -> Any:
    _check_keys("memory_get", args)
    path = args.get("path")
    if not isinstance(path, str):
        raise RequestParseError("path must be a string")
    start = _optional_int(args, "from", 1, 2**53, _READ_WINDOW_ERROR)
    count = _optional_int(args, "lines", 1, 2**53, _READ_WINDOW_ERROR)
    target = mapping.parse_memory_path(path)
    if target is None:
        # memory-core's shape for a read that failed: an empty, disabled read of that path.
        return {"path": path, "text": "", "disabled": True, "error": mapping.INVALID_PATH}
    try:
        item = _run(db, scope, "get", {"target": target})
    except NotFound as exc:
        return {"path": path, "text": "", "disabled": True, "error": exc.message}
    return mapping.read_window(item, path, start, count)


def _operation_tool(tool: str, operation: str) -> Callable[[MemoryDb, dict[str, str], Any], Any]:
    """An explicit ``zkr_*`` tool: zkr's projection of the operation, in the configured scope."""

    def call(db: MemoryDb, scope: dict[str, str], args: dict[str, Any]) -> Any:
        from zkr.operations import OPERATIONS
        from zkr.tool_calls import call_tool

        tenant_id, person_id = scope["tenant_id"], scope["person_id"]
        return call_tool(db, OPERATIONS[operation], args, tenant_id=tenant_id, person_id=person_id)

    return call


def _handlers() -> dict[str, Callable[[MemoryDb, dict[str, str], Any], Any]]:
    handlers: dict[str, Callable[[MemoryDb, dict[str, str], Any], Any]] = {
        "memory_search": _memory_search,
        "memory_get": _memory_get,
    }
    for name, definition in tool_definitions().items():
        if "operation" in definition:
            handlers[name] = _operation_tool(name, definition["operation"])
    return handlers


#: Every tool the plugin registers, in ``tools.json`` order.
TOOL_NAMES: tuple[str, ...] = tuple(tool_definitions())


def _scope_and_tool(payload: Any) -> tuple[dict[str, str], str, Any]:
    """Check the plugin's envelope (not the model's part); a bad one is a plugin bug."""
    if not isinstance(payload, dict):
        raise RequestParseError("invalid type: expected a JSON object for `openclaw-tool` request")
    for key in _CALL_FIELDS:
        if key not in payload:
            raise RequestParseError(f"missing field `{key}`")
    scope = {"tenant_id": payload["tenant_id"], "person_id": payload["person_id"]}
    if not all(isinstance(value, str) for value in scope.values()):
        raise RequestParseError("invalid type: `tenant_id` and `person_id` must be strings")
    tool = payload["tool"]
    if not isinstance(tool, str) or tool not in tool_definitions():
        raise RequestParseError("unknown tool")
    return scope, tool, payload["args"]


def run_tool(db: MemoryDb, payload: Any) -> dict[str, Any]:
    """Answer one tool call: ``{"details": ...}`` or ``{"tool_error": message}``.

    :raises RequestParseError: the envelope itself is malformed (scope, tool name).
    :raises ZkrError: a failure the model cannot fix (storage, integrity), reported redacted.
    """
    scope, tool, args = _scope_and_tool(payload)
    if not isinstance(args, dict):
        return {"tool_error": "arguments must be a JSON object"}
    try:
        return {"details": _handlers()[tool](db, scope, args)}
    except _TOOL_FACING as exc:
        return {"tool_error": exc.message}
