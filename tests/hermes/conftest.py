"""Fixtures of the zkr-hermes unit tests (no Hermes needed: only zkr-core and zkr-hermes).

``make_provider(**kwargs)`` initializes a provider the way Hermes 0.19.0's CLI does (its exact
``initialize`` kwargs), in a temporary ``HERMES_HOME``, and shuts it down after the test.
``rows(db_path, sql)`` reads the database with a plain connection, independent of the provider.
``write_locked(db_path)`` holds SQLite's write lock so that the queue worker cannot apply anything.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zkr.db import MemoryDb
from zkr_hermes.provider import ZkrMemoryProvider

__all__ = ["CLI_KWARGS", "rows", "write_locked"]

#: What Hermes 0.19.0 passes to initialize() in a CLI session (less the two callbacks).
CLI_KWARGS: dict[str, Any] = {
    "platform": "cli",
    "agent_context": "primary",
    "agent_identity": "default",
    "agent_workspace": "hermes",
}


def rows(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db_path, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@contextlib.contextmanager
def write_locked(db_path: Path) -> Iterator[sqlite3.Connection]:
    """Hold the database's write lock (the file is created and migrated first)."""
    MemoryDb(db_path).close()
    conn = sqlite3.connect(db_path, timeout=10, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    finally:
        conn.execute("ROLLBACK")
        conn.close()


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes_home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("ZKR_DB", "ZKR_TENANT", "ZKR_PERSON", "ZKR_TENANT_ID", "ZKR_PERSON_ID"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def db_path(hermes_home: Path) -> Path:
    return hermes_home / "zkr.db"


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., ZkrMemoryProvider]]:
    made: list[ZkrMemoryProvider] = []

    def make(session_id: str = "session-1", **kwargs: Any) -> ZkrMemoryProvider:
        provider = ZkrMemoryProvider()
        provider.initialize(session_id, **{**CLI_KWARGS, "hermes_home": str(hermes_home), **kwargs})
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.shutdown()
