"""The "now" floors of the write tools: the earliest time a host's "now" may take.

A host that fills ``valid_at``/``recorded_at``, ``deleted_at`` or ``erased_at`` with "now" must
still land after what is stored, or a correction made in the same second as its claim would be
refused. The operation table names these in each write's ``ToolProjection`` (``now_floor``); they
only read, and answer nothing (``{}``) when the payload does not name a live record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zkr.store.live_rows import accepted_claim

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["correction_now_floor", "deletion_now_floor", "erasure_now_floor"]


def _named(payload: dict[str, Any], key: str) -> tuple[str, str, str] | None:
    """The record id under *key* and the scope the payload names, or ``None`` when any of the
    three is missing or not a string (the write itself will refuse the payload, in its words)."""
    values = (payload.get(key), payload.get("tenant_id"), payload.get("person_id"))
    record_id, tenant_id, person_id = values
    if isinstance(record_id, str) and isinstance(tenant_id, str) and isinstance(person_id, str):
        return record_id, tenant_id, person_id
    return None


def correction_now_floor(db: Database, payload: dict[str, Any]) -> dict[str, int]:
    """The earliest ``valid_at``/``recorded_at`` a correction of the payload's claim can take:
    just after the claim's own valid and recorded starts (nothing when the claim is not live)."""
    named = _named(payload, "claim_id")
    if named is None:
        return {}
    with db.atomic(write=False) as conn:
        row = accepted_claim(conn, *named, "valid_from, recorded_from")
    if row is None:
        return {}
    return {"valid_at": int(row[0]) + 1, "recorded_at": int(row[1]) + 1}


def deletion_now_floor(db: Database, payload: dict[str, Any]) -> dict[str, int]:
    """The earliest ``deleted_at`` for the payload's source: not before it was recorded, and after
    every live claim it supports was recorded (so that deleting can retract them)."""
    named = _named(payload, "source_id")
    if named is None:
        return {}
    with db.atomic(write=False) as conn:
        source = conn.execute(
            "SELECT recorded_at FROM sources WHERE id = ? AND tenant_id = ? AND person_id = ?",
            named,
        ).fetchone()
        supported = conn.execute(
            "SELECT max(c.recorded_from) FROM evidence e "
            "JOIN claim_evidence ce ON ce.evidence_id = e.id "
            "AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id "
            "JOIN claims c ON c.id = ce.claim_id "
            "AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id "
            "WHERE e.source_id = ? AND e.tenant_id = ? AND e.person_id = ? "
            "AND c.status = 'accepted'",
            named,
        ).fetchone()
    floors = [int(source[0])] if source is not None else []
    if supported is not None and supported[0] is not None:
        floors.append(int(supported[0]) + 1)
    return {"deleted_at": max(floors)} if floors else {}


def erasure_now_floor(db: Database, payload: dict[str, Any]) -> dict[str, int]:
    """The earliest ``erased_at`` a host's "now" may take for the payload's source: what
    ``delete`` needs (:func:`deletion_now_floor`), and not before the
    source's deletion when it is already deleted."""
    floor = deletion_now_floor(db, payload).get("deleted_at")
    named = _named(payload, "source_id")
    if named is not None:
        with db.atomic(write=False) as conn:
            row = conn.execute(
                "SELECT deleted_at FROM sources WHERE id = ? AND tenant_id = ? AND person_id = ?",
                named,
            ).fetchone()
        if row is not None and row[0] is not None:
            floor = row[0] if floor is None else max(floor, row[0])
    return {} if floor is None else {"erased_at": floor}
