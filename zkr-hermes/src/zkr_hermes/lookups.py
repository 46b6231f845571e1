"""Read-only look-ups the operations do not offer, made on the provider's own connection.

They fill defaults that must respect the stored history (a correction or deletion made "now" in
the same second as the claim it touches must still advance its intervals) and find what a
built-in Hermes memory note became in zkr. Every query is scoped to one (tenant, person).
"""

from __future__ import annotations

from dataclasses import dataclass

from zkr.db import MemoryDb
from zkr_hermes.config import Scope

__all__ = [
    "StoredTurn",
    "correction_times",
    "deletion_time",
    "live_note_claim",
    "recent_turns",
    "scope_sequence",
    "supporting_sources",
]

TURN_KEY_PREFIX = "hermes-turn:"
NOTE_KEY_PREFIX = "hermes-memory:"
NOTE_PREDICATE = "noted"


def correction_times(db: MemoryDb, scope: Scope, claim_id: str, now: int) -> tuple[int, int]:
    """Default ``(valid_at, recorded_at)`` for correcting *claim_id*: now, or just after it."""
    with db.atomic(write=False) as conn:
        row = conn.execute(
            "SELECT valid_from, recorded_from FROM claims "
            "WHERE id = ? AND tenant_id = ? AND person_id = ? AND status = 'accepted'",
            (claim_id, scope.tenant_id, scope.person_id),
        ).fetchone()
    if row is None:
        return now, now
    return max(now, int(row[0]) + 1), max(now, int(row[1]) + 1)


def deletion_time(db: MemoryDb, scope: Scope, source_id: str, now: int) -> int:
    """Default ``deleted_at`` for *source_id*: now, or late enough to retract what it supports."""
    with db.atomic(write=False) as conn:
        source = conn.execute(
            "SELECT recorded_at FROM sources WHERE id = ? AND tenant_id = ? AND person_id = ?",
            (source_id, scope.tenant_id, scope.person_id),
        ).fetchone()
        claims = conn.execute(
            "SELECT max(c.recorded_from) FROM evidence e "
            "JOIN claim_evidence ce ON ce.evidence_id = e.id "
            "AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id "
            "JOIN claims c ON c.id = ce.claim_id "
            "AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id "
            "WHERE e.source_id = ? AND e.tenant_id = ? AND e.person_id = ? "
            "AND c.status = 'accepted'",
            (source_id, scope.tenant_id, scope.person_id),
        ).fetchone()
    at = now
    if source is not None:
        at = max(at, int(source[0]))
    if claims is not None and claims[0] is not None:
        at = max(at, int(claims[0]) + 1)
    return at


def scope_sequence(db: MemoryDb, scope: Scope) -> int:
    """The scope's newest commit: every write to the scope (from any process) appends one, so an
    unchanged number means a recall made earlier is still what a search would find."""
    with db.atomic(write=False) as conn:
        row = conn.execute(
            "SELECT max(sequence) FROM memory_commits WHERE tenant_id = ? AND person_id = ?",
            (scope.tenant_id, scope.person_id),
        ).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def live_note_claim(db: MemoryDb, scope: Scope, subject: str, fragment: str) -> str | None:
    """The newest current note claim about *subject* whose value contains *fragment*."""
    with db.atomic(write=False) as conn:
        row = conn.execute(
            "SELECT id FROM claims WHERE tenant_id = ? AND person_id = ? AND subject = ? "
            "AND predicate = ? AND status = 'accepted' AND valid_until IS NULL "
            "AND recorded_until IS NULL AND instr(value, ?) > 0 "
            "ORDER BY recorded_from DESC, id DESC LIMIT 1",
            (scope.tenant_id, scope.person_id, subject, NOTE_PREDICATE, fragment),
        ).fetchone()
    return None if row is None else str(row[0])


def supporting_sources(db: MemoryDb, scope: Scope, claim_id: str) -> list[str]:
    """Live sources whose evidence supports *claim_id*."""
    with db.atomic(write=False) as conn:
        rows = conn.execute(
            "SELECT DISTINCT e.source_id FROM claim_evidence ce "
            "JOIN evidence e ON e.id = ce.evidence_id "
            "AND e.tenant_id = ce.tenant_id AND e.person_id = ce.person_id "
            "WHERE ce.claim_id = ? AND ce.tenant_id = ? AND ce.person_id = ? "
            "AND ce.relation = '\"supports\"' AND e.deleted_at IS NULL ORDER BY e.source_id",
            (claim_id, scope.tenant_id, scope.person_id),
        ).fetchall()
    return [str(row[0]) for row in rows]


@dataclass(frozen=True)
class StoredTurn:
    source_id: str
    evidence_id: str
    text: str
    captured_at: int


def recent_turns(db: MemoryDb, scope: Scope, limit: int) -> list[StoredTurn]:
    """The newest live conversation turns the provider stored, newest first."""
    with db.atomic(write=False) as conn:
        rows = conn.execute(
            "SELECT s.id, s.origin_evidence_id, s.content, s.captured_at FROM sources s "
            "JOIN evidence e ON e.id = s.origin_evidence_id AND e.deleted_at IS NULL "
            "WHERE s.tenant_id = ? AND s.person_id = ? AND s.deleted_at IS NULL "
            "AND substr(s.ingestion_key, 1, ?) = ? "
            "ORDER BY s.recorded_at DESC, s.captured_at DESC, s.rowid DESC LIMIT ?",
            (scope.tenant_id, scope.person_id, len(TURN_KEY_PREFIX), TURN_KEY_PREFIX, limit),
        ).fetchall()
    return [StoredTurn(str(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]
