"""Hash partitioning by scope: every scoped table split into N partitions on plain PostgreSQL.

``migrate(conn, partitions=N)`` (``zkr-postgres migrate|sync|rebuild --partitions N``) turns each
scoped table — the feed's records, cursors, staging, commits and every lane's vectors — into a
table ``PARTITION BY HASH (tenant_id, person_id)`` with partitions ``<table>_p0`` …
``<table>_p<N-1>``. Every statement of the replica filters on both columns (that is what the
row-level-security policy and the keys already ask for), so the planner — or, for the generic
plans ``serve`` prepares, the executor at start-up — keeps exactly one partition per scoped table
(``tests/postgres/test_partitions.py`` reads the plans).

Why it is one code path for a fresh replica and an existing one: the numbered migrations always
build today's (unpartitioned) tables, and :func:`partition` then converts each one in the
migration's transaction — rename, create the partitioned table ``LIKE`` it (defaults, generated
columns, the ``seq`` identity), copy the rows (identity values kept, the sequence moved past
them), drop the old table, and recreate its primary key, indexes (same names, so later migrations
that name them still work) and scope policy on the new parent. On an empty replica that is a few
hundred catalog rows; on a loaded one it copies every row once, under the migration lock.

Row-level security is the parent's: a query through ``zkr.sources`` is checked against the
parent's policy whatever partition holds the row. The serving role is granted ``SELECT`` on the
parents only, so it cannot read a partition directly (where the parent's policy would not apply).
Changing the number of partitions of a partitioned replica is refused (re-create and re-sync).
"""

from __future__ import annotations

from psycopg import sql

from zkr_postgres._db import Conn

__all__ = [
    "MAX_PARTITIONS",
    "LayoutError",
    "check_count",
    "partition",
    "partition_count",
    "partition_table",
]

#: More partitions than this per table only costs planning time and files (13 tables each).
MAX_PARTITIONS = 1024


class LayoutError(ValueError):
    """A layout the replica cannot take: a bad number of partitions, or a different one."""


#: The partition key: the scope every statement filters on.
_KEY = "(tenant_id, person_id)"


def partition_count(conn: Conn, table: str = "sources") -> int | None:
    """How many hash partitions ``zkr.<table>`` has; None for a plain (or missing) table."""
    row = conn.execute(
        "SELECT c.relkind, (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'zkr' AND c.relname = %s",
        (table,),
    ).fetchone()
    if row is None or row[0] != "p":
        return None
    return int(row[1])


def check_count(partitions: int) -> None:
    """Refuse a number of partitions the layout does not take (one message for every command)."""
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise LayoutError(f"--partitions must be 1..{MAX_PARTITIONS}")


def partition(conn: Conn, tables: list[str], partitions: int) -> None:
    """Convert every plain table of *tables* to *partitions* hash partitions (a table already
    partitioned so is left alone; one partitioned otherwise is refused). Runs inside the
    caller's transaction, after the caller took the migration lock."""
    check_count(partitions)
    for table in tables:
        found = partition_count(conn, table)
        if found == partitions:
            continue
        if found is not None:
            raise LayoutError(
                f"zkr.{table} has {found} partitions, not {partitions}:"
                " repartitioning is not supported (create a new replica and sync it)"
            )
        partition_table(conn, table, partitions)


def partition_table(conn: Conn, table: str, partitions: int) -> None:
    """Replace the plain table ``zkr.<table>`` by a hash-partitioned copy of it (rows included)."""
    from zkr_postgres.schema import scope_policy  # schema imports this module

    old = f"{table}__plain"
    name, old_name = sql.Identifier("zkr", table), sql.Identifier("zkr", old)
    oid = conn.execute("SELECT %s::regclass::oid", (f"zkr.{table}",)).fetchone()
    assert oid is not None
    key = conn.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = %s AND contype = 'p'",
        (oid[0],),
    ).fetchone()
    indexes = conn.execute(
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " WHERE i.indrelid = %s AND NOT i.indisprimary ORDER BY i.indexrelid",
        (oid[0],),
    ).fetchall()
    columns = conn.execute(
        "SELECT attname, attidentity <> '' FROM pg_attribute WHERE attrelid = %s AND attnum > 0"
        " AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
        (oid[0],),
    ).fetchall()
    conn.execute(sql.SQL("ALTER TABLE {} RENAME TO {}").format(name, sql.Identifier(old)))
    conn.execute(
        sql.SQL(
            "CREATE TABLE {name} (LIKE {old} INCLUDING DEFAULTS INCLUDING GENERATED"
            " INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMPRESSION)"
            " PARTITION BY HASH " + _KEY
        ).format(name=name, old=old_name)
    )
    for remainder in range(partitions):
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} PARTITION OF {} FOR VALUES WITH (MODULUS {}, REMAINDER {})"
            ).format(
                sql.Identifier("zkr", f"{table}_p{remainder}"),
                name,
                sql.Literal(partitions),
                sql.Literal(remainder),
            )
        )
    names = sql.SQL(", ").join(sql.Identifier(str(column)) for column, _ in columns)
    copied = conn.execute(
        sql.SQL("INSERT INTO {} ({}) OVERRIDING SYSTEM VALUE SELECT {} FROM {}").format(
            name, names, names, old_name
        )
    ).rowcount
    for column, identity in columns:
        if identity:  # the new sequence starts after the rows kept (arrival order stays)
            conn.execute(
                sql.SQL(
                    "SELECT setval(pg_get_serial_sequence(%s, %s), coalesce(max({c}), 0) + 1,"
                    " false) FROM {t}"
                ).format(c=sql.Identifier(str(column)), t=name),
                (f"zkr.{table}", str(column)),
            )
    conn.execute(sql.SQL("DROP TABLE {}").format(old_name))
    if key is not None:
        conn.execute(
            sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(
                name, sql.Identifier(str(key[0])), sql.SQL(str(key[1]))
            )
        )
    for (definition,) in indexes:  # read before the rename: they name the table as it is now
        conn.execute(str(definition))
    conn.execute(scope_policy(table))
    if copied > 0:  # new tables have no statistics: plan the rows they hold (zkr_postgres.analyze)
        conn.execute(sql.SQL("ANALYZE {}").format(name))
