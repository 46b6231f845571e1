"""``delete``: tombstone a source and propagate to what it supported (contract §4.5).

Sources, evidence and claims are never physically removed: the source and its evidence get a
``deleted_at``, and accepted claims left without live supporting evidence are retracted. Derived
projections (FTS rows, embeddings, profile entries of retracted claims, reviews citing the source)
are hard-deleted.
"""

from __future__ import annotations

import sqlite3

from zkr import models as m
from zkr.errors import InvalidRequest, NotFound
from zkr.store.commits import append_commit
from zkr.store.recall_index import purge_source
from zkr.store.records import (
    ExportRecord,
    claim_record,
    deletion_record,
    evidence_record,
    source_record,
)
from zkr.store.validation import require_scope
from zkr.writes.capture import SUPPORTS

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    from zkr.store.database import Database
else:
    from zkr._named_tuple import NamedTuple

__all__ = ["Tombstone", "delete", "tombstone", "tombstone_records"]

# Claims linked (any relation) to some evidence of the source; parameters: tenant, person, source.
# CROSS JOIN fixes the order: the source's evidence (evidence_scope), then its links through
# claim_evidence_by_evidence. The unary + keeps the scope terms out of index choice: otherwise the
# planner may prefer the primary key's (tenant, person) prefix and read the scope's every link.
_LINKED_CLAIMS = (
    "SELECT ce.claim_id FROM evidence e CROSS JOIN claim_evidence ce ON ce.evidence_id = e.id"
    " WHERE e.tenant_id = ?1 AND e.person_id = ?2 AND e.source_id = ?3"
    " AND +ce.tenant_id = ?1 AND +ce.person_id = ?2"
)


def _linked(alias: str) -> str:
    """*alias* (a claims row) is linked to the source: looked up by id from the linked ids, not
    found by scanning the scope's claims (``claims_scope``)."""
    return (
        f"{alias}.id IN ({_LINKED_CLAIMS}) AND +{alias}.tenant_id = ?1 AND +{alias}.person_id = ?2"
    )


def delete(db: Database, request: m.DeleteRequest) -> m.DeleteResult:
    """Tombstone a live source of the scope at ``deleted_at``.

    :raises NotFound: the source is missing, deleted, or in another scope.
    :raises InvalidRequest: ``deleted_at`` precedes the source's recording, or does not advance the
        recorded interval of a claim it would retract (nothing is changed).
    """
    require_scope(request.tenant_id, request.person_id)
    tenant, person = request.tenant_id, request.person_id
    with db.atomic() as conn:
        done = tombstone(conn, tenant, person, request.source_id, request.deleted_at)
        append_commit(conn, tenant, person, request.deleted_at, tombstone_records(conn, done))
    return m.DeleteResult(
        source_id=request.source_id,
        evidence_count=done.evidence_count,
        claim_count=done.claim_count,
    )


class Tombstone(NamedTuple):
    """What one deletion changed (ids collected before anything changed)."""

    tenant_id: str
    person_id: str
    source_id: str
    deleted_at: int
    evidence_ids: list[str]
    candidate_claims: list[str]
    profile_ids: list[str]
    review_ids: list[str]
    evidence_count: int
    claim_count: int


def tombstone(
    conn: sqlite3.Connection,
    tenant: str,
    person: str,
    source_id: str,
    deleted_at: int,
    *,
    field: str = "deleted_at",
) -> Tombstone:
    """Delete a live source in the caller's transaction (``delete``'s rows; ``forget`` reuses it).

    *field* names the timestamp in error messages.

    :raises NotFound: the source is missing, deleted, or in another scope.
    :raises InvalidRequest: the time precedes the source's recording, or does not advance a claim
        it would retract.
    """
    scope_args = (tenant, person, source_id)
    # What the deletion may touch, collected before anything changes.
    evidence_ids = _column(
        conn,
        "SELECT id FROM evidence WHERE tenant_id = ?1 AND person_id = ?2 AND source_id = ?3"
        " ORDER BY id",
        scope_args,
    )
    candidate_claims = _column(
        conn,
        f"SELECT DISTINCT c.id FROM claims c WHERE {_linked('c')} AND +c.status = 'accepted'"
        " ORDER BY c.id",
        scope_args,
    )
    profile_ids = _column(
        conn,
        "SELECT p.id FROM profile_entries p WHERE +p.tenant_id = ?1 AND +p.person_id = ?2"
        f" AND p.claim_id IN ({_LINKED_CLAIMS}) ORDER BY p.id",
        scope_args,
    )
    review_ids = _column(
        conn,
        "SELECT r.id FROM daily_reviews r WHERE r.tenant_id = ?1 AND r.person_id = ?2"
        " AND EXISTS (SELECT 1 FROM json_each(r.evidence_ids) j JOIN evidence e"
        " ON e.id = j.value WHERE e.tenant_id = ?1 AND e.person_id = ?2 AND e.source_id = ?3)"
        " ORDER BY r.id",
        scope_args,
    )

    source = conn.execute(
        "SELECT recorded_at FROM sources WHERE id = ?3 AND tenant_id = ?1 AND person_id = ?2"
        " AND deleted_at IS NULL",
        scope_args,
    ).fetchone()
    if source is None:
        raise NotFound()
    if deleted_at < source[0]:
        raise InvalidRequest(f"{field} cannot predate source recording")

    conn.execute(
        "UPDATE sources SET deleted_at = ?, revision = revision + 1 WHERE id = ?",
        (deleted_at, source_id),
    )
    purge_source(conn, source_id)
    evidence_count = conn.execute(
        "UPDATE evidence SET deleted_at = ?4 WHERE tenant_id = ?1 AND person_id = ?2"
        " AND source_id = ?3 AND deleted_at IS NULL",
        (*scope_args, deleted_at),
    ).rowcount
    claim_count = _retract_unsupported(conn, tenant, person, source_id, deleted_at, field)
    _purge_projections(conn, tenant, person, source_id, review_ids)
    return Tombstone(
        tenant,
        person,
        source_id,
        deleted_at,
        evidence_ids,
        candidate_claims,
        profile_ids,
        review_ids,
        evidence_count,
        claim_count,
    )


def tombstone_records(conn: sqlite3.Connection, done: Tombstone) -> list[ExportRecord]:
    """The feed records of a deletion, snapshotting the rows as they are now."""
    tenant, person, deleted_at = done.tenant_id, done.person_id, done.deleted_at
    records: list[ExportRecord] = [
        source_record(conn, done.source_id),
        deletion_record(tenant, person, m.MemoryKind.source, done.source_id, deleted_at),
    ]
    for evidence_id in done.evidence_ids:
        records.append(evidence_record(conn, evidence_id))
        records.append(
            deletion_record(tenant, person, m.MemoryKind.evidence, evidence_id, deleted_at)
        )
    for claim_id in done.candidate_claims:
        record = claim_record(conn, claim_id)
        body = record[1]
        assert isinstance(body, m.ClaimRecord)
        if body.status == m.ClaimStatus.retracted and body.recorded_time.until == deleted_at:
            records.append(record)
    records.extend(
        deletion_record(tenant, person, m.MemoryKind.profile_entry, pid, deleted_at)
        for pid in done.profile_ids
        if conn.execute("SELECT 1 FROM profile_entries WHERE id = ?", (pid,)).fetchone() is None
    )
    records.extend(
        deletion_record(tenant, person, m.MemoryKind.daily_review, rid, deleted_at)
        for rid in done.review_ids
    )
    return records


def _column(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[str]:
    return [row[0] for row in conn.execute(sql, args)]


def _retract_unsupported(
    conn: sqlite3.Connection, tenant: str, person: str, source_id: str, deleted_at: int, field: str
) -> int:
    """Retract accepted claims linked to the source that have no live ``supports`` evidence left."""
    try:
        return conn.execute(
            "UPDATE claims SET status = 'retracted', recorded_until = ?4"
            f" WHERE {_linked('claims')} AND +status = 'accepted'"
            " AND NOT EXISTS (SELECT 1 FROM claim_evidence ce JOIN evidence e"
            " ON e.id = ce.evidence_id WHERE ce.tenant_id = ?1 AND ce.person_id = ?2"
            " AND ce.claim_id = claims.id AND ce.relation = ?5 AND e.deleted_at IS NULL)",
            (tenant, person, source_id, deleted_at, SUPPORTS),
        ).rowcount
    except sqlite3.DatabaseError as exc:
        # The interval trigger: a retraction must close the recorded interval after it opened.
        if str(exc) == "invalid claim half-open time interval":
            raise InvalidRequest(
                f"{field} must advance affected claims' recorded intervals"
            ) from None
        raise


def _purge_projections(
    conn: sqlite3.Connection, tenant: str, person: str, source_id: str, review_ids: list[str]
) -> None:
    """Hard-delete what was derived from the source and has lost its support."""
    # One statement per target kind, each a seek on embeddings_scope (tenant, person, kind, id);
    # OR-ed together they made the planner read the scope's every embedding.
    scope_args = (tenant, person, source_id)
    for target_kind, target_ids in (
        ("source", "?3"),
        (
            "evidence",
            "SELECT id FROM evidence WHERE tenant_id = ?1 AND person_id = ?2 AND source_id = ?3",
        ),
        ("claim", f"SELECT c.id FROM claims c WHERE {_linked('c')} AND +c.status = 'retracted'"),
    ):
        conn.execute(
            "DELETE FROM embeddings WHERE tenant_id = ?1 AND person_id = ?2"
            f" AND target_kind = '{target_kind}' AND target_id IN ({target_ids})",
            scope_args,
        )
    # Any profile entry of the scope whose claim is retracted (§4.5 step 6), not only this
    # source's: one primary-key probe per entry of the scope (a scope has one entry per key).
    conn.execute(
        "DELETE FROM profile_entries WHERE tenant_id = ?1 AND person_id = ?2 AND EXISTS"
        " (SELECT 1 FROM claims c WHERE c.id = profile_entries.claim_id AND c.tenant_id = ?1"
        " AND c.person_id = ?2 AND c.status = 'retracted')",
        (tenant, person),
    )
    conn.executemany("DELETE FROM daily_reviews WHERE id = ?", [(rid,) for rid in review_ids])
