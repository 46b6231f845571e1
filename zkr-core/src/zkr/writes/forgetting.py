"""``forget`` (an addition): irreversibly erase a capture and everything derived only from it.

A live source is first deleted exactly as ``delete`` does (same rows, same retractions, same feed
records), at ``erased_at``. Then :func:`zkr.erasure.erase` blanks the source's text, its evidence
and locators, the statements of claims left without live support, the profile entries of those
claims and the daily reviews citing only erased evidence - in the tables and in every earlier feed
event. One commit carries the snapshots and an ``erasure`` record, which ``apply`` repeats on a
replica. After the commit the WAL is checkpointed (TRUNCATE) so that no old page image keeps the
text. What stays: ids, timestamps, kinds, statuses, links, corrections, ingestion keys, and the
fact of the erasure (``erasures``, the feed record, ``history``). See ``docs/erasure.md``.
"""

from __future__ import annotations

import sqlite3

from zkr import models as m
from zkr.errors import InvalidRequest, NotFound
from zkr.feed.erasure import erase, feed_dependents
from zkr.store.commits import append_commit
from zkr.store.records import claim_record, deletion_record, evidence_record, source_record
from zkr.store.validation import require_scope
from zkr.writes.deletion import Tombstone, tombstone, tombstone_records

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database
    from zkr.store.records import ExportRecord

__all__ = ["forget"]

_SUPPORTS = "'\"supports\"'"


def forget(db: Database, request: m.ForgetRequest) -> m.ForgetResult:
    """Erase the source (live or deleted) of the scope; a repeated call answers the first result.

    :raises NotFound: no such source in the scope.
    :raises InvalidRequest: ``erased_at`` predates the source's recording or deletion, or does not
        advance a claim the deletion retracts.
    """
    require_scope(request.tenant_id, request.person_id)
    tenant, person, source_id, at = (
        request.tenant_id,
        request.person_id,
        request.source_id,
        request.erased_at,
    )
    nested = db.conn.in_transaction
    with db.atomic() as conn:
        row = conn.execute(
            "SELECT recorded_at, deleted_at FROM sources WHERE id = ? AND tenant_id = ?"
            " AND person_id = ?",
            (source_id, tenant, person),
        ).fetchone()
        if row is None:
            raise NotFound()
        stored = _stored_result(conn, tenant, person, source_id)
        if stored is not None:
            return stored
        recorded_at, deleted_at = row
        done = None
        if deleted_at is None:
            done = tombstone(conn, tenant, person, source_id, at, field="erased_at")
        else:
            _check_after_deletion(at, recorded_at, deleted_at)
        erasure, removed_profiles = _erase(conn, tenant, person, source_id, at)
        records = _erasure_records(conn, erasure, done, removed_profiles)
        append_commit(conn, tenant, person, at, records)
    if not nested:
        db.checkpoint()
    return _result(erasure)


def _check_after_deletion(at: int, recorded_at: int, deleted_at: int) -> None:
    """An already deleted source is erased no earlier than it was recorded and deleted."""
    if at < recorded_at:
        raise InvalidRequest("erased_at cannot predate source recording")
    if at < deleted_at:
        raise InvalidRequest("erased_at cannot predate source deletion")


def _erasure_records(
    conn: sqlite3.Connection,
    erasure: m.ErasureRecord,
    done: Tombstone | None,
    removed_profiles: list[str],
) -> list[ExportRecord]:
    """The commit of a forget: the deletion's records (or, for a source deleted before, the
    erased source and evidence), every erased claim once, the removed profile entries' deletions
    and the erasure record last."""
    tenant, person, at = erasure.tenant_id, erasure.person_id, erasure.erased_at
    if done is not None:
        records = tombstone_records(conn, done)
    else:
        records = [source_record(conn, erasure.source_id)]
        records.extend(evidence_record(conn, eid) for eid in erasure.evidence_ids)
    written = {(kind, getattr(body, "id", None)) for kind, body in records}
    records.extend(
        claim_record(conn, claim_id)
        for claim_id in erasure.claim_ids
        if ("claim", claim_id) not in written
    )
    already_deleted = {
        body.target.id
        for _, body in records
        if isinstance(body, m.DeletionRecord) and body.target.kind is m.MemoryKind.profile_entry
    }
    records.extend(
        deletion_record(tenant, person, m.MemoryKind.profile_entry, entry_id, at)
        for entry_id in removed_profiles
        if entry_id not in already_deleted
    )
    records.append(("erasure", erasure))
    return records


def _erase(
    conn: sqlite3.Connection, tenant: str, person: str, source_id: str, at: int
) -> tuple[m.ErasureRecord, list[str]]:
    """Decide what the erasure covers, erase it; also the live profile entries it removed."""
    scope = (tenant, person, source_id)
    evidence_ids = _column(
        conn,
        "SELECT id FROM evidence WHERE tenant_id = ?1 AND person_id = ?2 AND source_id = ?3"
        " ORDER BY id",
        scope,
    )
    # Claims this source's evidence supports that no live evidence supports any more (the source
    # is deleted by now, so its own evidence no longer counts), and not erased before.
    claim_ids = _column(
        conn,
        "SELECT DISTINCT c.id FROM evidence e"
        " CROSS JOIN claim_evidence ce ON ce.evidence_id = e.id"
        " CROSS JOIN claims c ON c.id = ce.claim_id"
        " WHERE e.tenant_id = ?1 AND e.person_id = ?2 AND e.source_id = ?3"
        f" AND +ce.tenant_id = ?1 AND +ce.person_id = ?2 AND ce.relation = {_SUPPORTS}"
        " AND +c.tenant_id = ?1 AND +c.person_id = ?2"
        " AND NOT EXISTS (SELECT 1 FROM claim_evidence l JOIN evidence le"
        "  ON le.id = l.evidence_id AND le.tenant_id = ?1 AND le.person_id = ?2"
        f"  WHERE l.claim_id = c.id AND l.relation = {_SUPPORTS} AND le.deleted_at IS NULL"
        "  AND l.tenant_id = ?1 AND l.person_id = ?2)"
        " AND NOT EXISTS (SELECT 1 FROM erasures x WHERE x.tenant_id = ?1 AND x.person_id = ?2"
        "  AND x.target_kind = 'claim' AND x.target_id = c.id)"
        " ORDER BY c.id",
        scope,
    )
    profile_ids, review_ids = feed_dependents(conn, tenant, person, evidence_ids, claim_ids)
    removed_profiles = [
        entry_id
        for entry_id in profile_ids
        if conn.execute("SELECT 1 FROM profile_entries WHERE id = ?", (entry_id,)).fetchone()
    ]
    erasure = m.ErasureRecord(
        tenant_id=tenant,
        person_id=person,
        source_id=source_id,
        erased_at=at,
        evidence_ids=evidence_ids,
        claim_ids=claim_ids,
        profile_entry_ids=profile_ids,
        daily_review_ids=review_ids,
    )
    erase(conn, erasure)
    return erasure, removed_profiles


def _column(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[str]:
    return [row[0] for row in conn.execute(sql, args)]


def _result(erasure: m.ErasureRecord) -> m.ForgetResult:
    """The answer is the erasure record without its scope (the caller's own)."""
    return m.ForgetResult(**erasure.model_dump(exclude={"tenant_id", "person_id"}))


def _stored_result(
    conn: sqlite3.Connection, tenant: str, person: str, source_id: str
) -> m.ForgetResult | None:
    """The first forget's answer, rebuilt from ``erasures``; ``None`` when never forgotten."""
    rows = conn.execute(
        "SELECT target_kind, target_id, erased_at FROM erasures WHERE tenant_id = ?"
        " AND person_id = ? AND source_id = ? ORDER BY target_kind, target_id",
        (tenant, person, source_id),
    ).fetchall()
    ids: dict[str, list[str]] = {}
    erased_at = None
    for kind, target_id, at in rows:
        ids.setdefault(kind, []).append(target_id)
        if kind == "source":
            erased_at = at
    if erased_at is None:
        return None
    return m.ForgetResult(
        source_id=source_id,
        erased_at=erased_at,
        evidence_ids=ids.get("evidence", []),
        claim_ids=ids.get("claim", []),
        profile_entry_ids=ids.get("profile_entry", []),
        daily_review_ids=ids.get("daily_review", []),
    )
