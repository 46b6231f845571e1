"""Planner statistics after a sync (issue 30: the first searches after a sync stalled).

Autovacuum never analyzes a partitioned parent and analyzes a partition only a minute or more
after it filled; until then ``serve``'s generic plans are made without statistics (the benchmark
measured seconds instead of milliseconds per search, ``benchmarks/reports/postgres-platform.json``).
``sync`` and ``rebuild`` now ANALYZE what they changed a lot (``zkr_postgres.analyze``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.postgres.builders import build_database
from tests.postgres.conftest import LAYOUT_IDS, LAYOUTS
from zkr.db import MemoryDb
from zkr_postgres._db import Conn, connect
from zkr_postgres.analyze import analyze_changed
from zkr_postgres.sync import sync_database

SCOPES = [(f"t{n % 2}", f"person-{n}") for n in range(4)]


def _analyzed(conn: Conn) -> dict[str, bool]:
    """Per sources table (the parent and each partition): whether it has planner statistics."""
    rows = conn.execute(
        "SELECT c.relname, EXISTS (SELECT 1 FROM pg_statistic s WHERE s.starelid = c.oid)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'zkr' AND (c.relname = 'sources' OR c.relname LIKE 'sources\\_p%')"
    ).fetchall()
    return {str(name): bool(has) for name, has in rows}


def _holding_rows(conn: Conn) -> set[str]:
    """The sources tables holding more rows than autovacuum's threshold (50 + 10 %)."""
    rows = conn.execute(
        "SELECT tableoid::regclass::text FROM zkr.sources GROUP BY 1 HAVING count(*) > 50"
    ).fetchall()
    return {str(row[0]).removeprefix("zkr.") for row in rows}


@pytest.mark.parametrize("partitions", LAYOUTS, ids=LAYOUT_IDS)
def test_a_sync_leaves_statistics_of_what_it_wrote(tmp_path: Path, pg: str) -> None:
    db = MemoryDb(tmp_path / "source.db")
    build_database(db, SCOPES, seed=3, memories=60)
    with connect(pg) as conn:
        sync_database(conn, db, "up")
        analyzed = _analyzed(conn)
        # The table serve reads (the parent, when partitioned) and every partition the sync
        # filled past autovacuum's threshold have statistics at once, without waiting for it.
        assert analyzed["sources"], analyzed
        filled = _holding_rows(conn)
        assert filled and all(analyzed[name] for name in filled), (filled, analyzed)
        # Nothing changed since: the next check analyzes nothing.
        assert analyze_changed(conn) == []
    db.close()


def test_a_small_change_analyzes_nothing(tmp_path: Path, pg: str) -> None:
    db = MemoryDb(tmp_path / "source.db")
    build_database(db, SCOPES, seed=3, memories=12)
    with connect(pg) as conn:
        sync_database(conn, db, "up")
        build_database(db, [("t0", "late")], seed=4, memories=1)  # a few rows, under the threshold
        assert sync_database(conn, db, "up").pages == 1
        assert analyze_changed(conn) == []
    db.close()


def test_the_analyze_command_analyzes_every_table(pg: str) -> None:
    script = Path(sys.executable).parent / "zkr-postgres"
    done = subprocess.run(
        [str(script), "analyze", "--dsn", pg], capture_output=True, timeout=120, check=True
    )
    assert json.loads(done.stdout)["analyzed_tables"] >= 13
    with connect(pg) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_user_tables"
            " WHERE schemaname = 'zkr' AND last_analyze IS NULL"
        ).fetchone()
    assert row is not None and row[0] == 0
