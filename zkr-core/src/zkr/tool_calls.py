"""Host kit: one tool call, the same on every host (MCP, Hermes, OpenClaw, the page, the hooks).

:func:`call_tool` is everything between a model's arguments and the JSON a host hands back: the
operation behind the tool, the request (:func:`zkr.tools.tool_request`: the host's scope, "now",
the tool's defaults, then the host's own defaults beneath the model's arguments), a search made
hybrid when the host has an embedder, the run — again when another writer held the database past
SQLite's busy timeout — and the result as plain JSON. A failure raises a
:class:`~zkr.errors.ZkrError` whose message is the contract's and whose ``code`` is stable;
:func:`tool_failure` turns anything raised into that ``(message, code)`` pair, so a host only
translates it into its protocol.

:func:`run_scoped` is the same run for a host that builds the request itself (a form on the page, a
hook's recall): the scope filled, zkr's validation, the busy retry, the result as zkr's model.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from zkr.envelope import error_code, error_message
from zkr.errors import DatabaseBusy, UnknownToolError
from zkr.models import QueryEmbedding
from zkr.operations import OPERATIONS, Operation, to_json
from zkr.store.opening import is_busy
from zkr.tools import operation_for_tool, tool_request

if TYPE_CHECKING:  # the host kit runs operations; it does not open databases (no facade import)
    from zkr.db import MemoryDb

__all__ = ["BUSY_ATTEMPTS", "call_tool", "retry_busy", "run_scoped", "tool_failure"]

#: Runs of one call while the database stays busy. Each already waits out the store's own wait
#: for the write lock; a writer holding it longer (a big import through the CLI) gets one more
#: chance before the caller is told. An operation is one transaction: a failed run left nothing.
BUSY_ATTEMPTS = 2

_T = TypeVar("_T")


def retry_busy(action: Callable[[], _T], attempts: int = BUSY_ATTEMPTS) -> _T:
    """``action()``, run again while SQLite says the database is busy.

    :raises DatabaseBusy: still busy after *attempts* runs.
    """
    for attempt in range(attempts):
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if attempt + 1 == attempts:
                raise DatabaseBusy() from exc
    raise ValueError("attempts must be at least 1")


def _operation(tool: str | Operation) -> Operation:
    if isinstance(tool, Operation):
        return tool
    try:
        return operation_for_tool(tool)
    except KeyError:
        raise UnknownToolError(f"unknown tool `{tool}`") from None


def with_query_embedding(request: BaseModel, embedder: tuple[str, str] | None) -> BaseModel:
    """With an embedder, a search that brings no vector of its own embeds its query (hybrid)."""
    if embedder is None or "query_embedding" not in type(request).model_fields:
        return request
    if getattr(request, "query_embedding", None) is not None:
        return request
    model, version = embedder
    embedding = QueryEmbedding(model=model, version=version, vector=None)
    return request.model_copy(update={"query_embedding": embedding})


def call_tool(
    db: MemoryDb,
    tool: str | Operation,
    arguments: Any,
    *,
    tenant_id: str,
    person_id: str,
    now: int | None = None,
    defaults: Mapping[str, Any] | None = None,
    embedder: tuple[str, str] | None = None,
    attempts: int = BUSY_ATTEMPTS,
) -> Any:
    """Run tool *tool* (a tool name, or the operation itself) with a model's *arguments*.

    :param now: the host's "now" in Unix seconds (default: the clock).
    :param defaults: the host's own defaults (a person's ranking), beneath the model's
        arguments, for the fields the operation's request has.
    :param embedder: ``(model, version)`` of the host's embedder: searches run hybrid.
    :returns: the operation's result as plain JSON data.
    :raises ZkrError: the call was refused (``UnknownToolError``, ``RequestParseError``, ...,
        ``DatabaseBusy``); nothing was written.
    """
    operation = _operation(tool)
    if defaults and isinstance(arguments, dict):
        fields = operation.request.model_fields
        known = {info.alias or name for name, info in fields.items()}
        arguments = {**{k: v for k, v in defaults.items() if k in known}, **arguments}

    def attempt() -> Any:
        request = tool_request(
            operation,
            arguments,
            tenant_id=tenant_id,
            person_id=person_id,
            now=int(time.time()) if now is None else now,
            # Lets a left-out "now" land after what is stored (a delete in the same second as
            # the correction it follows).
            db=db,
        )
        return to_json(db.run(operation, with_query_embedding(request, embedder)))

    return retry_busy(attempt, attempts)


def run_scoped(
    db: MemoryDb,
    name: str,
    fields: Mapping[str, Any],
    *,
    tenant_id: str,
    person_id: str,
    attempts: int = BUSY_ATTEMPTS,
) -> Any:
    """Run operation *name* in the scope (*fields*: its request's other fields); zkr's model.

    Validated by zkr (``RequestParseError`` with zkr's message), never by calling the model
    directly: a pydantic ``ValidationError`` is no ZkrError.

    :raises ZkrError: whatever the operation refuses, and ``DatabaseBusy``.
    """
    payload = {**fields, "tenant_id": tenant_id, "person_id": person_id}
    return retry_busy(lambda: db.run(OPERATIONS[name], payload), attempts)


def tool_failure(exc: BaseException) -> tuple[str, str]:
    """What a host tells its caller for *exc*: the message (:mod:`zkr.envelope`) and the code."""
    return error_message(exc), error_code(exc)
