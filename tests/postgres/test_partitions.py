"""Issue 30, point 1: the replica hash-partitioned by scope.

* ``migrate --partitions 16`` converts a plain replica holding rows: every row (the arrival order
  ``seq`` included) and every answer stay the same, and later syncs continue on the partitions;
* every read statement zkr-postgres issues for a scope — with the custom plan of a one-off
  statement and with the generic plan ``serve`` prepares (pruned at executor start-up) — reads
  exactly one partition of each table, the same remainder for all (the plans are printed);
* the option is spelled ``--partitions`` on every command that migrates; a bad count or a change
  of count is one line on stderr and changes nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from tests.postgres.builders import build_database, person_word
from tests.postgres.hash_embedder import HashEmbedder
from tests.postgres.test_rls import SCOPES, _statements
from zkr import models as m
from zkr.db import MemoryDb
from zkr_postgres._db import Conn, connect
from zkr_postgres.api import Replica
from zkr_postgres.partitions import partition_count
from zkr_postgres.rebuild import rebuild
from zkr_postgres.schema import SCHEMA, SCOPED_TABLES, SERVING_ROLE, lane_table
from zkr_postgres.sync import sync_database

_PARTITION = re.compile(r"^(?P<table>.+)_p(?P<remainder>\d+)$")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zkr_postgres", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _dump(conn: Conn) -> dict[str, list[tuple[Any, ...]]]:
    tables = (*SCOPED_TABLES, lane_table(HashEmbedder.model, HashEmbedder.version))
    found: dict[str, list[tuple[Any, ...]]] = {}
    for table in tables:
        skip = {"updated_at", "applied_at"}  # the clock of the write, not replicated data
        columns = [
            str(row[0])
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = 'zkr' AND table_name = %s ORDER BY ordinal_position",
                (table,),
            ).fetchall()
            if row[0] not in skip
        ]
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(
                sql.SQL("{}::text").format(sql.Identifier(column)) for column in columns
            ),
            sql.Identifier(SCHEMA, table),
        )
        found[table] = sorted(tuple(row) for row in conn.execute(query).fetchall())
    return found


def _searches(dsn: str) -> list[list[str]]:
    with Replica(dsn) as replica:
        return [
            [
                item.memory.id
                for item in replica.search(
                    m.SearchRequest(
                        tenant_id=tenant, person_id=person, query=person_word(tenant, person)
                    )
                ).items
            ]
            for tenant, person in SCOPES
        ]


@pytest.fixture
def source(tmp_path: Path) -> MemoryDb:
    db = MemoryDb(tmp_path / "source.db")
    build_database(db, SCOPES, seed=30, memories=6)
    return db


@pytest.mark.parametrize("partitions", [None])  # start from today's plain layout
def test_migrate_partitions_a_plain_replica_keeping_every_row(
    source: MemoryDb, pg: str, tmp_path: Path
) -> None:
    with connect(pg) as conn:
        sync_database(conn, source, "up")
        rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        assert partition_count(conn) is None
        before, answers = _dump(conn), _searches(pg)
    migrated = _cli("migrate", "--dsn", pg, "--partitions", "16")
    assert migrated.returncode == 0, migrated.stderr
    assert set(json.loads(migrated.stdout)) == {"schema_version"}
    with connect(pg) as conn:
        lane = lane_table(HashEmbedder.model, HashEmbedder.version)
        assert {table: partition_count(conn, table) for table in (*SCOPED_TABLES, lane)} == {
            table: 16 for table in (*SCOPED_TABLES, lane)
        }
        assert _dump(conn) == before
    assert _searches(pg) == answers and any(answers)
    # Later writes land in the partitions and keep arriving after the rows kept (seq).
    scope = {"tenant_id": SCOPES[0][0], "person_id": SCOPES[0][1]}
    later = source.remember(
        m.RememberRequest(
            **scope, kind="document", text="a later note", captured_at=9_000, recorded_at=9_000
        )
    )
    with connect(pg) as conn:
        assert sync_database(conn, source, "up").events > 0
        seqs = conn.execute(
            "SELECT id, seq FROM zkr.sources WHERE tenant_id = %s AND person_id = %s"
            " ORDER BY seq DESC LIMIT 1",
            (scope["tenant_id"], scope["person_id"]),
        ).fetchone()
        assert seqs is not None and seqs[0] == later.source_id
        held = conn.execute("SELECT max(seq) FROM zkr.sources").fetchone()
        assert held is not None and seqs[1] == held[0]
    # The same option again keeps the layout; another count is refused, one line, no change.
    assert _cli("migrate", "--dsn", pg, "--partitions", "16").returncode == 0
    refused = _cli("sync", "--dsn", pg, "--db", str(tmp_path / "source.db"), "--partitions", "8")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "zkr-postgres: zkr.cursors has 16 partitions, not 8: repartitioning is not supported"
        " (create a new replica and sync it)"
    ]
    for bad in ("0", "1025"):
        done = _cli("rebuild", "--dsn", pg, "--embedder", "m/1", "--partitions", bad)
        assert (done.returncode, done.stderr) == (
            1,
            "zkr-postgres: --partitions must be 1..1024\n",
        )
    with connect(pg) as conn:
        assert partition_count(conn) == 16


def _plan_relations(plan: dict[str, Any]) -> list[str]:
    """The relations the executed plan read. A partition pruned when the plan was made or when
    the executor started is not in it; one pruned per execution of a correlated subquery (the
    ``as_of`` rules' ``EXISTS`` on corrections, pruned on the outer row's scope) is in it with
    no loop run, and does not count."""
    read = "Relation Name" in plan and plan.get("Actual Loops", 0) > 0
    found = [str(plan["Relation Name"])] if read else []
    for child in plan.get("Plans", []):
        found += _plan_relations(child)
    return found


@pytest.mark.parametrize("partitions", [16])
@pytest.mark.parametrize("plan_mode", ["force_custom_plan", "force_generic_plan"])
def test_every_scoped_read_touches_one_partition(source: MemoryDb, pg: str, plan_mode: str) -> None:
    with connect(pg) as conn:
        sync_database(conn, source, "up")
        rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        conn.execute("ANALYZE")
        ids = {
            str(row[0]): (str(row[1]), str(row[2]))
            for table in ("sources", "evidence", "claims")
            for row in conn.execute(
                sql.SQL("SELECT id, tenant_id, person_id FROM {}").format(
                    sql.Identifier(SCHEMA, table)
                )
            ).fetchall()
        }
        partitioned = {
            str(row[0])
            for row in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'zkr' AND c.relkind = 'p'"
            ).fetchall()
        }
        shown = False
        for scope in SCOPES:
            owned = [i for i, owner in ids.items() if owner == scope]
            others = [i for i, owner in ids.items() if owner != scope]
            remainders: set[str] = set()
            for statement, params, _ in _statements(scope, person_word(*scope), owned, others):
                explain = sql.SQL("EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) {}").format(
                    statement if not isinstance(statement, str) else sql.SQL(statement)
                )
                with conn.transaction():
                    conn.execute(f"SET LOCAL plan_cache_mode = {plan_mode}")
                    conn.execute(
                        "SELECT set_config('role', %s, true),"
                        " set_config('zkr.tenant_id', %s, true),"
                        " set_config('zkr.person_id', %s, true)",
                        (SERVING_ROLE, *scope),
                    )
                    row = conn.execute(explain, params).fetchone()
                assert row is not None
                plan = row[0][0]["Plan"]
                relations = [r for r in _plan_relations(plan) if r != "lanes"]
                assert relations, statement
                touched = set()
                for relation in relations:
                    assert relation not in partitioned, (relation, statement)
                    matched = _PARTITION.match(relation)
                    assert matched is not None and matched["table"] in partitioned, relation
                    touched.add(matched["remainder"])
                assert len(touched) == 1, (sorted(set(relations)), statement)
                remainders |= touched
                if not shown and plan_mode == "force_generic_plan":
                    print(json.dumps(plan, indent=1)[:4000])  # the plan, for the record
                    shown = True
            assert len(remainders) == 1, (scope, remainders)
