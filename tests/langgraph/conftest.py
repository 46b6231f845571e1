"""Fixtures of the zkr-langgraph tests: a store over a real zkr SQLite file, and a way to call
every store method either synchronously or through its ``a``-prefixed coroutine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from zkr import MemoryDb
from zkr_langgraph import ZkrStore

TENANT = "acme"


class Clock:
    """A clock that moves one second per reading (so every write lands at a later second)."""

    def __init__(self, start: int = 1_800_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(memory_db: MemoryDb, clock: Clock) -> Iterator[ZkrStore]:
    yield ZkrStore(memory_db, tenant_id=TENANT, clock=clock)


Call = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def call(request: pytest.FixtureRequest) -> Call:
    """``call(store, "get", ns, key)`` runs ``store.get`` or, for the async run, ``store.aget``."""

    def run(store: ZkrStore, method: str, *args: Any, **kwargs: Any) -> Any:
        if request.param == "sync":
            return getattr(store, method)(*args, **kwargs)
        return asyncio.run(getattr(store, f"a{method}")(*args, **kwargs))

    return run
