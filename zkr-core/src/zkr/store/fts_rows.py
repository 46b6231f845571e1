"""Writing and removing ``source_fts`` rows by rowid (schema version 10).

``source_fts.source_id`` is UNINDEXED, so ``DELETE FROM source_fts WHERE source_id = ?`` reads the
whole FTS table. Since version 10 a source's FTS row has the **rowid of its ``sources`` row**
(stable: sources are never physically deleted, and VACUUM keeps the rowids of a table that has
indexes), so removing it is a rowid seek.

The rule, kept by :func:`index_source` and established for older files by :func:`rekey`: every FTS
row is either at its own source's rowid, or at a **negative** rowid (a legacy row whose source is
missing, a second row for the same source, or a new row whose slot was somehow taken). Sources only
ever get positive rowids, so the two never collide, and :func:`unindex_source` removes exactly the
rows ``WHERE source_id = ?`` would.

Search answers do not depend on rowids: bm25 reads only the rows' text statistics, and the ranking
tie-break is ``source_id``.
"""

from __future__ import annotations

import sqlite3

__all__ = ["index_new_source", "index_source", "rekey", "unindex_source"]

_INSERT_KEYED = (
    "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
    " SELECT rowid, id, tenant_id, person_id, content FROM sources WHERE id = ?"
)
_INSERT_VALUES = (
    "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content) VALUES (?, ?, ?, ?, ?)"
)
_INSERT_UNKEYED = (
    "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
    " SELECT (SELECT min(coalesce(min(f.first), 0), 0) - 1 FROM"
    "  (SELECT rowid AS first FROM source_fts ORDER BY rowid LIMIT 1) AS f),"
    " id, tenant_id, person_id, content FROM sources WHERE id = ?"
)


def index_source(conn: sqlite3.Connection, source_id: str) -> None:
    """Make the stored source searchable: its text in ``source_fts`` at the source's rowid."""
    try:
        conn.execute(_INSERT_KEYED, (source_id,))
    except sqlite3.IntegrityError:
        # The slot is taken by a row this package did not write (the rule only breaks if someone
        # edits the tables by hand); keep the write path working with a row below every other.
        conn.execute(_INSERT_UNKEYED, (source_id,))


def index_new_source(
    conn: sqlite3.Connection, rowid: int, source_id: str, tenant_id: str, person_id: str, text: str
) -> None:
    """:func:`index_source` for a source just inserted with these values (``remember``: the row's
    rowid is the insert's ``lastrowid``), without reading the row back."""
    try:
        conn.execute(_INSERT_VALUES, (rowid, source_id, tenant_id, person_id, text))
    except sqlite3.IntegrityError:
        conn.execute(_INSERT_UNKEYED, (source_id,))


def unindex_source(conn: sqlite3.Connection, source_id: str) -> None:
    """Delete every ``source_fts`` row of the source (the rowid seek plus the negative range)."""
    row = conn.execute("SELECT rowid FROM sources WHERE id = ?", (source_id,)).fetchone()
    if row is not None:
        conn.execute(
            "DELETE FROM source_fts WHERE rowid = ? AND source_id = ?", (row[0], source_id)
        )
    conn.execute("DELETE FROM source_fts WHERE rowid < 0 AND source_id = ?", (source_id,))


def rekey(conn: sqlite3.Connection) -> None:
    """Renumber an existing ``source_fts`` so the rowid rule holds (the version 10 migration).

    Every row is kept with its exact values (so bm25 statistics, and every search answer, stay
    the same); only rowids change. The first row (by old rowid) of each existing source takes the
    source's rowid, the others get distinct negative ones. The table is recreated from its own
    stored DDL and filled in ascending rowid order, which FTS5 indexes in one pass.
    """
    (ddl,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'source_fts'"
    ).fetchone()
    conn.execute(
        "CREATE TEMP TABLE zkr_fts_rekey AS SELECT rowid AS old_rowid, source_id, tenant_id,"
        " person_id, content FROM source_fts"
    )
    conn.execute("DROP TABLE source_fts")
    conn.execute(ddl)
    conn.execute(
        "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
        " SELECT CASE WHEN source_rowid IS NOT NULL AND nth = 1 THEN source_rowid"
        "  ELSE floor - position END AS new_rowid, source_id, tenant_id, person_id, content"
        " FROM (SELECT f.*, s.rowid AS source_rowid,"
        "  row_number() OVER (PARTITION BY f.source_id ORDER BY f.old_rowid) AS nth,"
        "  row_number() OVER (ORDER BY f.old_rowid) AS position,"
        "  (SELECT min(coalesce(min(rowid), 0), 0) FROM sources) AS floor"
        "  FROM temp.zkr_fts_rekey AS f LEFT JOIN sources AS s ON s.id = f.source_id)"
        " ORDER BY new_rowid"
    )
    conn.execute("DROP TABLE temp.zkr_fts_rekey")
