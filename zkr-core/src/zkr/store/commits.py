"""Appending to the export commit feed inside the mutation's transaction (contract §1.12, §7)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from zkr.errors import ExportError, LimitExceeded
from zkr.jsonio import ordered_dumps
from zkr.store.records import ExportRecord

__all__ = [
    "MAX_EXPORT_RECORD_BYTES",
    "append_commit",
    "append_payloads",
    "scope_of",
    "serialize_record",
]

#: No serialized record may be larger; a mutation that would produce one fails atomically.
MAX_EXPORT_RECORD_BYTES = 1_048_576


def serialize_record(record: ExportRecord) -> str:
    """The stored payload: ``{"kind": ..., "record": ...}`` as compact JSON in declaration order."""
    kind, body = record
    return ordered_dumps({"kind": kind, "record": body.model_dump(mode="json", by_alias=True)})


def scope_of(record: ExportRecord) -> tuple[str, str]:
    """The (tenant_id, person_id) a validated record belongs to."""
    kind, body = record
    inner = getattr(body, kind, None) if kind in ("source", "evidence") else body
    tenant_id: str = getattr(inner, "tenant_id")  # noqa: B009 - every record body carries its scope
    person_id: str = getattr(inner, "person_id")  # noqa: B009
    return tenant_id, person_id


def append_commit(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    recorded_at: int,
    records: Sequence[ExportRecord],
) -> int:
    """Append one commit with its events; returns the commit's sequence.

    Must run inside the mutation's transaction. Every record must belong to the commit's scope and
    serialize to at most :data:`MAX_EXPORT_RECORD_BYTES`. The sequence is always the next local one
    (``apply`` keeps upstream numbers in its own cursor, never here).

    :raises LimitExceeded: ``export record exceeds 1048576 bytes``.
    :raises ExportError: ``export record scope does not match its commit``.
    """
    payloads: list[str] = []
    for record in records:
        if scope_of(record) != (tenant_id, person_id):
            raise ExportError("export record scope does not match its commit")
        payload = serialize_record(record)
        if len(payload.encode("utf-8")) > MAX_EXPORT_RECORD_BYTES:
            raise LimitExceeded("export record exceeds 1048576 bytes")
        payloads.append(payload)
    return append_payloads(conn, tenant_id, person_id, recorded_at, payloads)


def append_payloads(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    recorded_at: int,
    payloads: Sequence[str],
) -> int:
    """Append one commit whose events are already serialized (:func:`serialize_record`'s bytes,
    each of the commit's scope and within the size limit: the caller built them so); returns the
    commit's sequence. Must run inside the mutation's transaction."""
    cursor = conn.execute(
        "INSERT INTO memory_commits(tenant_id, person_id, recorded_at) VALUES (?, ?, ?)",
        (tenant_id, person_id, recorded_at),
    )
    appended = cursor.lastrowid
    assert appended is not None
    conn.executemany(
        "INSERT INTO memory_export_events(commit_sequence, event_index, payload) VALUES (?, ?, ?)",
        [(appended, index, payload) for index, payload in enumerate(payloads)],
    )
    return appended
