"""The v8 migration's feed bootstrap (contract §7.5): one commit per scope of every current row.

A database from before the export feed gets, once, a commit per scope that holds each of its rows as
an export record, so a replica can start from the feed alone. Called by :mod:`zkr.store._legacy`
inside the migration's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from zkr.errors import LimitExceeded, MigrationError
from zkr.store import records
from zkr.store.commits import append_commit
from zkr.store.records import ExportRecord

__all__ = ["bootstrap_feed"]

_MEMORY_TABLES = ("sources", "evidence", "claims", "profile_entries", "daily_reviews")


def bootstrap_feed(conn: sqlite3.Connection) -> None:
    """One commit per scope holding every current row of that scope (contract §7.5).

    Deleted rows appear with their tombstones; there are no deletion or correction records, because
    the releases before the feed did not keep correction lineage.

    :raises MigrationError: a record would exceed the 1 MiB export compatibility limit.
    """
    union = " UNION ".join(f"SELECT tenant_id, person_id FROM {table}" for table in _MEMORY_TABLES)
    scopes = conn.execute(f"{union} ORDER BY 1, 2").fetchall()
    for tenant_id, person_id in scopes:
        commit_records = _scope_snapshot(conn, tenant_id, person_id)
        try:
            append_commit(
                conn,
                tenant_id,
                person_id,
                _scope_recorded_at(conn, tenant_id, person_id),
                commit_records,
            )
        except LimitExceeded as exc:
            raise MigrationError(
                "legacy authoritative record exceeds the 1048576-byte export compatibility limit"
            ) from exc


def _scope_recorded_at(conn: sqlite3.Connection, tenant_id: str, person_id: str) -> int:
    # Deletion and embedding times do not count: only when rows were recorded.
    parts = (
        ("sources", "recorded_at"),
        ("evidence", "recorded_at"),
        ("claims", "recorded_from"),
        ("profile_entries", "recorded_at"),
        ("daily_reviews", "recorded_at"),
    )
    union = " UNION ALL ".join(
        f"SELECT max({column}) AS t FROM {table} WHERE tenant_id = ?1 AND person_id = ?2"
        for table, column in parts
    )
    row = conn.execute(f"SELECT max(t) FROM ({union})", (tenant_id, person_id)).fetchone()
    return int(row[0])


def _ids(conn: sqlite3.Connection, table: str, tenant_id: str, person_id: str) -> list[str]:
    rows = conn.execute(
        f"SELECT id FROM {table} WHERE tenant_id = ? AND person_id = ? ORDER BY id",
        (tenant_id, person_id),
    ).fetchall()
    return [row[0] for row in rows]


def _scope_snapshot(conn: sqlite3.Connection, tenant_id: str, person_id: str) -> list[ExportRecord]:
    builders: list[tuple[str, Callable[[sqlite3.Connection, str], ExportRecord]]] = [
        ("sources", records.source_record),
        ("evidence", records.evidence_record),
        ("claims", records.claim_record),
    ]
    snapshot: list[ExportRecord] = []
    try:
        for table, build in builders:
            snapshot.extend(build(conn, i) for i in _ids(conn, table, tenant_id, person_id))
        links = conn.execute(
            "SELECT claim_id, evidence_id FROM claim_evidence WHERE tenant_id = ? AND person_id = ?"
            " ORDER BY claim_id, evidence_id",
            (tenant_id, person_id),
        ).fetchall()
        snapshot.extend(
            records.claim_evidence_record(conn, tenant_id, person_id, claim_id, evidence_id)
            for claim_id, evidence_id in links
        )
        snapshot.extend(
            records.profile_record(conn, i)
            for i in _ids(conn, "profile_entries", tenant_id, person_id)
        )
        snapshot.extend(
            records.daily_review_record(conn, i)
            for i in _ids(conn, "daily_reviews", tenant_id, person_id)
        )
    except ValueError as exc:
        # An enum or shape the export records cannot represent (hand-edited legacy data).
        raise MigrationError(f"legacy record cannot be exported: {exc}") from exc
    return snapshot
