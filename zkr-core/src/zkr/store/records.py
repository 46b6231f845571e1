"""Snapshots of stored rows as export records (contract §7.3).

A record is the row *after* the mutation that emits it. Column encodings are the contract's mixed
ones: source kind, relation, stability are stored JSON-quoted; claim kind and status are bare.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from zkr import models as m

if TYPE_CHECKING:
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


def _unquote(stored: str) -> str:
    """Decode a JSON-quoted enum column (``'"supports"'`` -> ``supports``)."""
    value = json.loads(stored)
    if not isinstance(value, str):
        raise ValueError(f"stored enum is not a JSON string: {stored!r}")
    return value


def time_range(start: int, until: int | None) -> m.TimeRange:
    """A half-open range ``{"from": start, "until": until}``."""
    return m.TimeRange.model_validate({"from": start, "until": until})


def source_record(conn: sqlite3.Connection, source_id: str) -> ExportRecord:
    row = conn.execute(
        "SELECT id, tenant_id, person_id, revision, kind, content, captured_at, recorded_at,"
        " deleted_at, ingestion_key, origin_evidence_id, origin_claim_id FROM sources WHERE id = ?",
        (source_id,),
    ).fetchone()
    body = m.SourceBody(
        id=row[0],
        tenant_id=row[1],
        person_id=row[2],
        revision=row[3],
        kind=m.SourceKind(_unquote(row[4])),
        content=row[5],
        captured_at=row[6],
        recorded_at=row[7],
        deleted_at=row[8],
    )
    record = m.SourceRecord(
        source=body, ingestion_key=row[9], origin_evidence_id=row[10], origin_claim_id=row[11]
    )
    return ("source", record)


def stored_locator(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, evidence_id: str
) -> m.LocatorInput | None:
    """The transcript locator stored for an evidence row in scope, or ``None``."""
    row = conn.execute(
        "SELECT device_id, provider, stream_id, segment_id, start_ms, end_ms"
        " FROM evidence_locators WHERE tenant_id = ? AND person_id = ? AND evidence_id = ?",
        (tenant_id, person_id, evidence_id),
    ).fetchone()
    if row is None:
        return None
    return m.LocatorInput(
        device_id=row[0],
        provider=row[1],
        stream_id=row[2],
        segment_id=row[3],
        start_ms=row[4],
        end_ms=row[5],
    )


def evidence_record(conn: sqlite3.Connection, evidence_id: str) -> ExportRecord:
    row = conn.execute(
        "SELECT id, tenant_id, person_id, source_id, source_revision, quote, recorded_at,"
        " deleted_at"
        " FROM evidence WHERE id = ?",
        (evidence_id,),
    ).fetchone()
    locator = stored_locator(conn, row[1], row[2], row[0])
    body = m.EvidenceBody(
        id=row[0],
        tenant_id=row[1],
        person_id=row[2],
        source_id=row[3],
        source_revision=row[4],
        quote=row[5],
        byte_range=None,
        recorded_at=row[6],
    )
    return ("evidence", m.EvidenceRecord(evidence=body, locator=locator, deleted_at=row[7]))


def claim_record(conn: sqlite3.Connection, claim_id: str) -> ExportRecord:
    row = conn.execute(
        "SELECT id, tenant_id, person_id, subject, predicate, value, kind, valid_from, valid_until,"
        " recorded_from, recorded_until, status FROM claims WHERE id = ?",
        (claim_id,),
    ).fetchone()
    record = m.ClaimRecord(
        id=row[0],
        tenant_id=row[1],
        person_id=row[2],
        subject=row[3],
        predicate=row[4],
        value=row[5],
        kind=m.ClaimKind(row[6]),
        valid_time=time_range(row[7], row[8]),
        recorded_time=time_range(row[9], row[10]),
        status=m.ClaimStatus(row[11]),
    )
    return ("claim", record)


def claim_evidence_record(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, claim_id: str, evidence_id: str
) -> ExportRecord:
    row = conn.execute(
        "SELECT relation, confidence_basis_points FROM claim_evidence WHERE tenant_id = ?"
        " AND person_id = ? AND claim_id = ? AND evidence_id = ?",
        (tenant_id, person_id, claim_id, evidence_id),
    ).fetchone()
    record = m.ClaimEvidenceRecord(
        tenant_id=tenant_id,
        person_id=person_id,
        claim_id=claim_id,
        evidence_id=evidence_id,
        relation=m.EvidenceRelation(_unquote(row[0])),
        confidence_basis_points=row[1],
    )
    return ("claim_evidence", record)


def correction_record(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    superseded_claim_id: str,
    claim_id: str,
) -> ExportRecord:
    row = conn.execute(
        "SELECT source_id, evidence_id, valid_at, recorded_at FROM corrections WHERE tenant_id = ?"
        " AND person_id = ? AND superseded_claim_id = ? AND claim_id = ?",
        (tenant_id, person_id, superseded_claim_id, claim_id),
    ).fetchone()
    record = m.CorrectionRecord(
        tenant_id=tenant_id,
        person_id=person_id,
        superseded_claim_id=superseded_claim_id,
        claim_id=claim_id,
        source_id=row[0],
        evidence_id=row[1],
        valid_at=row[2],
        recorded_at=row[3],
    )
    return ("correction", record)


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
    row = conn.execute(
        "SELECT id, tenant_id, person_id, key, value, stability, claim_id, recorded_at"
        " FROM profile_entries WHERE id = ?",
        (entry_id,),
    ).fetchone()
    record = m.ProfileRecord(
        id=row[0],
        tenant_id=row[1],
        person_id=row[2],
        key=row[3],
        value=row[4],
        stability=m.ProfileStability(_unquote(row[5])),
        claim_id=row[6],
        recorded_at=row[7],
    )
    return ("profile", record)


def daily_review_record(conn: sqlite3.Connection, review_id: str) -> ExportRecord:
    row = conn.execute(
        "SELECT id, tenant_id, person_id, day, summary, evidence_ids, recorded_at"
        " FROM daily_reviews WHERE id = ?",
        (review_id,),
    ).fetchone()
    ids: Any = json.loads(row[5])
    record = m.DailyReviewRecord(
        id=row[0],
        tenant_id=row[1],
        person_id=row[2],
        day=row[3],
        summary=row[4],
        evidence_ids=ids,
        recorded_at=row[6],
    )
    return ("daily_review", record)
