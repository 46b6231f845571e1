"""The library API: a replica answers zkr's read operations as functions.

``Replica(dsn).run("search", {...})`` validates the request with zkr's own request model (the one
``zkr.operations`` names for that command) and returns zkr's response model; ``Replica.search``,
``Replica.get``, ``Replica.memories`` and ``Replica.history`` take the models directly. ``serve``
is this API behind JSON lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from zkr import models as m
from zkr.debug_str import rust_debug_str
from zkr.errors import InvalidRequest
from zkr_postgres import chains, listing, retrieval
from zkr_postgres._db import Conn, connect

__all__ = ["READ_OPERATIONS", "Replica", "request_model"]

#: The operations a replica answers: name -> handler(conn, request model) -> response model.
READ_OPERATIONS: dict[str, Callable[[Conn, Any], BaseModel]] = {
    "search": retrieval.search,
    "get": retrieval.get,
    "memories": listing.memories,
    "history": chains.history,
}


def request_model(name: str) -> type[BaseModel]:
    """zkr's request model of operation *name* (from zkr's operation table)."""
    from zkr.operations import OPERATIONS

    return OPERATIONS[name].request


class Replica:
    """A connection to a replica database, answering read operations for any scope."""

    def __init__(self, dsn: str) -> None:
        self.conn = connect(dsn)
        # Every statement is per scope and has the same shape for every scope: plan it once.
        # (A custom plan of the search statement costs more to plan than to run.)
        self.conn.execute("SET plan_cache_mode = force_generic_plan")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Replica:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, name: str, request: BaseModel | dict[str, Any]) -> BaseModel:
        """Validate *request* for operation *name* and answer it.

        :raises InvalidRequest: ``unknown command``: the replica does not answer *name*.
        :raises RequestParseError: the request does not have the operation's shape.
        """
        from zkr.operations import OPERATIONS, validate

        handler = READ_OPERATIONS.get(name)
        if handler is None:
            raise InvalidRequest(f"unknown command {rust_debug_str(name)}")
        # zkr's own validation, strictness included (lone surrogates, duplicate fields): the
        # replica refuses exactly what ``zkr serve`` refuses, with the same messages.
        return handler(self.conn, validate(OPERATIONS[name], request))

    def search(self, request: m.SearchRequest) -> m.RetrievalPack:
        return retrieval.search(self.conn, request)

    def get(self, request: m.GetRequest) -> m.RetrievalItem:
        return retrieval.get(self.conn, request)

    def memories(self, request: m.MemoriesRequest) -> m.MemoriesPage:
        return listing.memories(self.conn, request)

    def history(self, request: m.HistoryRequest) -> m.ClaimHistory:
        return chains.history(self.conn, request)
