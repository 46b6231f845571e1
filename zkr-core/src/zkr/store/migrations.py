"""Bringing any zkr database file to the current schema: a fresh file gets the current schema, an
older one goes through zkr 0.2.x's chain and ours (:mod:`zkr.store._legacy`)."""

from __future__ import annotations

import sqlite3

from zkr.errors import SchemaVersionError
from zkr.store.opening import begin_immediate
from zkr.store.schema import SCHEMA_VERSION, create_current_schema, has_table

__all__ = ["migrate"]


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database to :data:`SCHEMA_VERSION`, all or nothing.

    :raises SchemaVersionError: the file was written by a newer zkr (or has a negative version).
    :raises MigrationError: a legacy database breaks an invariant; nothing was changed.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version < 0 or version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"database schema version {version} is newer than supported version {SCHEMA_VERSION}"
        )
    if version == SCHEMA_VERSION:
        return
    begin_immediate(conn)  # many processes may open a new file at once: wait in line
    try:
        # Another connection may have migrated the file while we waited for the write lock.
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            conn.execute("COMMIT")
            return
        if version == 0 and not has_table(conn, "sources"):
            create_current_schema(conn)
        else:
            # Imported here: the legacy chain pulls in the export records (pydantic), which a
            # current file - every one-shot command's case - never needs (start-up, issue 14).
            from zkr.store._legacy import migrate_legacy

            migrate_legacy(conn, version)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
