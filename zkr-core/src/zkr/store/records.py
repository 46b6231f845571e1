"""Snapshots of stored rows as export records (contract §7.3).

A record is the row *after* the mutation that emits it, read by column name through its table's
description (:mod:`zkr.store.record_tables`, which also knows the contract's mixed encodings:
source kind, relation, stability stored JSON-quoted; claim kind and status bare).
"""

from __future__ import annotations

import sqlite3

from zkr import models as m
from zkr.store.record_tables import (
    CLAIM,
    CLAIM_EVIDENCE,
    CORRECTION,
    DAILY_REVIEW,
    EVIDENCE,
    EVIDENCE_LOCATOR,
    PROFILE,
    SOURCE,
    RecordTable,
    read_record,
)

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pydantic import BaseModel

__all__ = [
    "ExportRecord",
    "claim_evidence_record",
    "claim_record",
    "correction_record",
    "daily_review_record",
    "deletion_record",
    "evidence_record",
    "profile_record",
    "source_record",
    "stored_locator",
    "time_range",
]

#: ``(kind, record)``: the envelope ``{"kind": kind, "record": record}`` of one feed event.
ExportRecord = tuple[str, "BaseModel"]


def time_range(start: int, until: int | None) -> m.TimeRange:
    """A half-open range ``{"from": start, "until": until}``."""
    return m.TimeRange.model_validate({"from": start, "until": until})


def _row(
    conn: sqlite3.Connection, table: RecordTable, where: str, params: tuple[Any, ...]
) -> dict[str, Any] | None:
    """One stored row of *table*, by column name."""
    row = conn.execute(table.select_sql(where), params).fetchone()
    return None if row is None else dict(zip(table.names, row, strict=True))


def _snapshot(
    conn: sqlite3.Connection, table: RecordTable, *key: str, where: str | None = None
) -> ExportRecord:
    """The record of *table*'s row with this key (by id, or by scope and key)."""
    row = _row(conn, table, where or table.key_where(), key)
    assert row is not None, f"{table.kind} {key} is not stored"
    return (table.kind, read_record(table, row))


def source_record(conn: sqlite3.Connection, source_id: str) -> ExportRecord:
    return _snapshot(conn, SOURCE, source_id, where="id = ?")


def stored_locator(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, evidence_id: str
) -> m.LocatorInput | None:
    """The transcript locator stored for an evidence row in scope, or ``None``."""
    row = _row(
        conn, EVIDENCE_LOCATOR, EVIDENCE_LOCATOR.key_where(), (tenant_id, person_id, evidence_id)
    )
    return None if row is None else m.LocatorInput.model_validate(row)


def evidence_record(conn: sqlite3.Connection, evidence_id: str) -> ExportRecord:
    kind, record = _snapshot(conn, EVIDENCE, evidence_id, where="id = ?")
    assert isinstance(record, m.EvidenceRecord)
    body = record.evidence
    locator = stored_locator(conn, body.tenant_id, body.person_id, body.id)
    return (kind, record.model_copy(update={"locator": locator}))


def claim_record(conn: sqlite3.Connection, claim_id: str) -> ExportRecord:
    return _snapshot(conn, CLAIM, claim_id, where="id = ?")


def claim_evidence_record(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, claim_id: str, evidence_id: str
) -> ExportRecord:
    return _snapshot(conn, CLAIM_EVIDENCE, tenant_id, person_id, claim_id, evidence_id)


def correction_record(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    superseded_claim_id: str,
    claim_id: str,
) -> ExportRecord:
    return _snapshot(conn, CORRECTION, tenant_id, person_id, superseded_claim_id, claim_id)


def deletion_record(
    tenant_id: str, person_id: str, kind: m.MemoryKind, target_id: str, deleted_at: int
) -> ExportRecord:
    record = m.DeletionRecord(
        tenant_id=tenant_id,
        person_id=person_id,
        target=m.MemoryRef(kind=kind, id=target_id),
        deleted_at=deleted_at,
    )
    return ("deletion", record)


def profile_record(conn: sqlite3.Connection, entry_id: str) -> ExportRecord:
    return _snapshot(conn, PROFILE, entry_id, where="id = ?")


def daily_review_record(conn: sqlite3.Connection, review_id: str) -> ExportRecord:
    return _snapshot(conn, DAILY_REVIEW, review_id, where="id = ?")
