"""``MemoryDb``: the facade of one zkr database, with every operation of the table as a method."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from zkr.operation_methods import OperationMethods
from zkr.operations import OPERATIONS, Operation, validate
from zkr.store.database import BUSY_TIMEOUT_SECONDS, Database

__all__ = ["BUSY_TIMEOUT_SECONDS", "MemoryDb", "open_db"]


class MemoryDb(OperationMethods, Database):
    """A zkr memory database.

    ``MemoryDb(path)`` opens (creating if needed) the SQLite file at *path* and migrates it to the
    current schema. Every operation of :data:`zkr.operations.OPERATIONS` is a typed method —
    ``db.search(request)``, ``db.remember(request)`` …, generated into
    :class:`zkr.operation_methods.OperationMethods` — and runs in one transaction: either all
    of its rows (and its export-feed commit) are written, or none are. ``db.run(name, request)``
    does the same by name.

    A ``MemoryDb`` may be shared between threads; operations on one instance are serialised. Several
    instances and processes may use the same file at once (WAL journal, busy timeout).

    :param path: the database file, or ``":memory:"`` for a throwaway database.
    :param prepare_connection: optional callable run on the new connection before migration
        (the ``zkr_prepare_connection`` hook is applied through it by :func:`open_db`).
    """

    def run(self, operation: str | Operation, request: BaseModel | Mapping[str, Any]) -> Any:
        """Run one operation on a request model (or its decoded JSON) and return its result.

        :raises KeyError: no operation of that name.
        :raises RequestParseError: *request* does not fit the operation's request model.
        """
        op = OPERATIONS[operation] if isinstance(operation, str) else operation
        payload = dict(request) if isinstance(request, Mapping) else request
        return op.call(self, validate(op, payload))


def open_db(path: str | os.PathLike[str]) -> MemoryDb:
    """A :class:`MemoryDb` whose connection went through every ``zkr_prepare_connection`` hook."""
    from zkr.plugins import prepare_connection

    return MemoryDb(path, prepare_connection=prepare_connection)
