"""Planner statistics right after a bulk write: ANALYZE what changed a lot, at once.

Why: ``serve`` plans each search statement once (a generic plan) and PostgreSQL's planner picks
its joins and indexes from the statistics ``ANALYZE`` takes. A table a sync has just filled has
none yet (or those of when it was small): the plan then reads the wrong index or joins in the
wrong order, and a search that takes milliseconds with statistics takes seconds without them
(measured: ``benchmarks/reports/postgres-platform.json``, ``statistics``). Autovacuum would
ANALYZE each partition eventually — a minute or more later, longer while it is busy — and it
never analyzes a partitioned parent at all (PostgreSQL leaves that to the operator), whose
statistics the planner reads to estimate joins over the whole table.

So ``sync`` and ``rebuild`` end with :func:`analyze_changed`: every table of the replica that
changed by more than autovacuum's own threshold since its last ANALYZE
(``autovacuum_analyze_threshold`` + ``autovacuum_analyze_scale_factor`` x its rows, 50 + 10 %
by default) is analyzed now, and so is the partitioned parent of any such partition. A sync that
changed little analyzes nothing (one catalog query). ``zkr-postgres analyze`` analyzes every
table of the replica whatever changed.
"""

from __future__ import annotations

from psycopg import sql

from zkr_postgres._db import Conn

__all__ = ["analyze_all", "analyze_changed"]

# Plain tables and partitions of the replica that changed past autovacuum's threshold since their
# last ANALYZE (never analyzed: reltuples is -1, so 0 rows), with their partitioned parent if any.
_CHANGED = """
SELECT c.relname, p.relname
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
  LEFT JOIN pg_class p ON p.oid = i.inhparent
 WHERE n.nspname = 'zkr' AND c.relkind = 'r'
   AND pg_stat_get_mod_since_analyze(c.oid)
       > current_setting('autovacuum_analyze_threshold')::float8
         + current_setting('autovacuum_analyze_scale_factor')::float8
           * greatest(c.reltuples, 0)
 ORDER BY c.relname
"""


def analyze_changed(conn: Conn) -> list[str]:
    """ANALYZE every replica table that changed past autovacuum's threshold, and the partitioned
    parents of those partitions; returns the names analyzed (parents last). Outside a
    transaction: each ANALYZE commits on its own."""
    # This session's own writes reach the statistics counters when it is next idle; without
    # this the counters could miss what the caller just wrote (PostgreSQL 15 and later; older
    # servers report them to their statistics collector within half a second).
    if int(conn.info.server_version) >= 150000:
        conn.execute("SELECT pg_stat_force_next_flush()")
    rows = conn.execute(_CHANGED).fetchall()
    tables = [str(table) for table, _ in rows]
    parents = sorted({str(parent) for _, parent in rows if parent is not None})
    for table in tables:
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier("zkr", table)))
    for parent in parents:
        conn.execute(_analyze_parent_only(conn, parent))
    return [*tables, *parents]


def _analyze_parent_only(conn: Conn, parent: str) -> sql.Composed:
    """ANALYZE of a partitioned parent's own statistics: ``ANALYZE ONLY`` (PostgreSQL 18) skips
    the partitions just analyzed; older servers analyze them again along with the parent."""
    version = int(conn.info.server_version)
    only = sql.SQL("ONLY ") if version >= 180000 else sql.SQL("")
    return sql.SQL("ANALYZE {}{}").format(only, sql.Identifier("zkr", parent))


def analyze_all(conn: Conn) -> list[str]:
    """ANALYZE every table of the replica (partitions and their parents included); returns the
    top-level tables analyzed."""
    tables = [
        str(row[0])
        for row in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'zkr' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
            " ORDER BY c.relname"
        ).fetchall()
    ]
    for table in tables:
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier("zkr", table)))
    return tables
