"""Issue 26, point 3 (PostgreSQL): an erased PIN cannot be recovered from the replica either.

``zkr import`` gives a keyless line the key ``import-sha256:<SHA-256 of the request>``, and the
key travels in the feed. After ``forget`` and a sync, every text, JSON and bytea column of every
zkr table is read and all 10,000 4-digit PINs' keys are looked for in it: none is found. Before the
forget the same attack finds the PIN. Failed on b1744e7.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from psycopg import sql

# The PIN reaches the replica through `zkr import` (zkr-cli), which zkr-postgres alone (the
# isolated matrix) does not install; `nox -s postgres` runs it with every distribution.
pytest.importorskip("zkr_cli")

from tests.cli.test_erased_pin import PIN, SCOPE, guess_keys, line, lines, recovered
from zkr import models as m
from zkr.db import MemoryDb
from zkr_cli.importing import import_lines
from zkr_postgres._db import Conn, connect
from zkr_postgres.sync import sync_database


def _columns_text(conn: Conn) -> bytes:
    """Every text-like value of every zkr table, concatenated."""
    columns = conn.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'zkr'"
        " AND data_type IN ('text', 'jsonb', 'json', 'tsvector', 'character varying', 'bytea')"
    ).fetchall()
    out = io.BytesIO()
    for table, column, data_type in columns:
        read = "encode({}, 'escape')" if data_type == "bytea" else "{}::text"
        query = sql.SQL("SELECT " + read + " FROM {}").format(
            sql.Identifier(column), sql.Identifier("zkr", table)
        )
        for (value,) in conn.execute(query).fetchall():
            if value is not None:
                out.write(str(value).encode() + b"\n")
    return out.getvalue()


def test_no_pin_can_be_recovered_from_the_replica(tmp_path: Path, pg: str) -> None:
    keys = guess_keys()
    with MemoryDb(tmp_path / "up.db") as db, connect(pg) as conn:
        import_lines(db, lines(line(PIN)))  # type: ignore[arg-type]
        sync_database(conn, db, "laptop")
        assert recovered(keys, _columns_text(conn)) == {PIN}  # the attack works before

        source_id = db.conn.execute("SELECT id FROM sources").fetchone()[0]
        db.forget(m.ForgetRequest(**SCOPE, source_id=source_id, erased_at=1_700_000_100))
        sync_database(conn, db, "laptop")
        assert recovered(keys, _columns_text(conn)) == set()
        key = conn.execute("SELECT ingestion_key FROM zkr.sources").fetchone()
        assert key == (f"import-erased:{source_id}",)
