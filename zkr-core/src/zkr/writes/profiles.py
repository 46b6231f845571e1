"""Profile entries and daily reviews: their writes and their bounded listings (contract §4.6-4.10).

A profile entry is a projection of a live ``profile_fact`` claim (key = predicate, value = value),
one per key. A daily review is stored text citing live evidence; zkr never writes one by itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from zkr import models as m
from zkr.errors import InvalidRequest, LimitExceeded, NotFound
from zkr.jsonio import compact_len, ordered_dumps
from zkr.store.believed import corrected_after
from zkr.store.commits import append_commit
from zkr.store.live_rows import accepted_claim, live_evidence
from zkr.store.records import daily_review_record, profile_record
from zkr.store.validation import new_id, require_scope, require_text

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pydantic import BaseModel

    from zkr.store.database import Database

__all__ = ["MAX_READ_PAGE_BYTES", "check_read_page", "profile", "profiles", "review", "reviews"]

#: Byte budget of one ``profiles``/``reviews`` answer (its compact JSON array).
MAX_READ_PAGE_BYTES = 1_000_000

#: Only a live profile fact (open in valid and recorded time) is projected as a profile entry.
_LIVE_FACT = " AND kind = 'profile_fact' AND valid_until IS NULL AND recorded_until IS NULL"
_PROFILE_COLUMNS = "p.id, p.tenant_id, p.person_id, p.key, p.value, p.stability, p.claim_id,"
_PROFILE_COLUMNS += " p.recorded_at"


def _entry(row: Sequence[object]) -> m.ProfileEntry:
    stability = json.loads(str(row[5]))
    return m.ProfileEntry.model_validate(
        {
            "id": row[0],
            "tenant_id": row[1],
            "person_id": row[2],
            "key": row[3],
            "value": row[4],
            "stability": stability,
            "claim_id": row[6],
            "recorded_at": row[7],
        }
    )


# ----------------------------------------------------------------------------------------------
# profile / profiles
# ----------------------------------------------------------------------------------------------


def profile(db: Database, request: m.ProfileRequest) -> m.ProfileEntry:
    """Project a live ``profile_fact`` claim as the profile entry of its predicate.

    An identical request returns the stored entry without a commit; a replacement keeps the key's
    entry id and must be recorded later than the entry it replaces.

    :raises NotFound: no live ``profile_fact`` claim with that id in the scope.
    :raises InvalidRequest: the entry would predate its claim, or a replacement does not advance.
    """
    require_scope(request.tenant_id, request.person_id)
    tenant, person = request.tenant_id, request.person_id
    stability = json.dumps(request.stability.value)
    with db.atomic() as conn:
        fact = "predicate, value, recorded_from"
        claim = accepted_claim(conn, request.claim_id, tenant, person, fact, also=_LIVE_FACT)
        if claim is None:
            raise NotFound()
        key, value, recorded_from = claim
        if request.recorded_at < recorded_from:
            raise InvalidRequest("profile entry cannot predate its backing claim")
        stored = conn.execute(
            f"SELECT {_PROFILE_COLUMNS} FROM profile_entries p WHERE p.tenant_id = ?"
            " AND p.person_id = ? AND p.key = ?",
            (tenant, person, key),
        ).fetchone()
        if stored is not None:
            if (stored[4], stored[5], stored[6], stored[7]) == (
                value,
                stability,
                request.claim_id,
                request.recorded_at,
            ):
                return _entry(stored)
            if request.recorded_at <= stored[7]:
                raise InvalidRequest("profile replacement must advance recorded_at")
        entry_id = new_id() if stored is None else stored[0]
        conn.execute(
            "INSERT INTO profile_entries(id, tenant_id, person_id, key, value, stability,"
            " claim_id, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(tenant_id, person_id, key) DO UPDATE SET value = excluded.value,"
            " stability = excluded.stability, claim_id = excluded.claim_id,"
            " recorded_at = excluded.recorded_at",
            (
                entry_id,
                tenant,
                person,
                key,
                value,
                stability,
                request.claim_id,
                request.recorded_at,
            ),
        )
        append_commit(conn, tenant, person, request.recorded_at, [profile_record(conn, entry_id)])
        row = conn.execute(
            f"SELECT {_PROFILE_COLUMNS} FROM profile_entries p WHERE p.id = ?", (entry_id,)
        ).fetchone()
    return _entry(row)


def profiles(db: Database, request: m.ProfilesRequest) -> list[m.ProfileEntry]:
    """Entries whose claim is still a live ``profile_fact``: newest first, then by id (with
    ``as_of``, as they were at its recorded time).

    :raises LimitExceeded: the answer would exceed the read page budget (§4.10).
    """
    require_scope(request.tenant_id, request.person_id)
    if request.as_of is not None:
        return _profiles_then(db, request, request.as_of.recorded_at)
    with db.atomic(write=False) as conn:
        rows = conn.execute(
            f"SELECT {_PROFILE_COLUMNS} FROM profile_entries p JOIN claims c ON c.id = p.claim_id"
            " AND c.tenant_id = p.tenant_id AND c.person_id = p.person_id"
            " WHERE p.tenant_id = ? AND p.person_id = ? AND c.kind = 'profile_fact'"
            " AND c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
            " ORDER BY p.recorded_at DESC, p.id ASC LIMIT ?",
            (request.tenant_id, request.person_id, m.bounded_limit(request.limit)),
        ).fetchall()
    entries = [_entry(row) for row in rows]
    check_read_page(entries)
    return entries


# The scope's profile events up to a recorded time, in commit order.
_PROFILE_EVENTS = """
SELECT e.payload FROM memory_commits AS c
JOIN memory_export_events AS e ON e.commit_sequence = c.sequence
WHERE c.tenant_id = ? AND c.person_id = ? AND c.recorded_at <= ?
  AND json_extract(e.payload, '$.kind') IN ('profile', 'deletion')
ORDER BY c.sequence, e.event_index
"""
# A profile_fact claim that was current at R: recorded by then, either current now or superseded
# by a correction recorded after R, and not retracted - nor left without live support, which a
# deletion after R retracts unless a correction closed the claim first (deletions are absorbing).
_CURRENT_THEN = f"""
SELECT c.id FROM claims AS c
WHERE c.id IN (SELECT value FROM json_each(:ids)) AND c.tenant_id = :tenant
  AND c.person_id = :person AND c.kind = 'profile_fact' AND c.recorded_from <= :recorded_at
  AND ((c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL)
       OR (c.status = 'superseded' AND {corrected_after("c")}))
  AND EXISTS (
    SELECT 1 FROM claim_evidence AS ce
    JOIN evidence AS e ON e.id = ce.evidence_id AND e.tenant_id = ce.tenant_id
     AND e.person_id = ce.person_id AND e.deleted_at IS NULL AND e.recorded_at <= :recorded_at
    WHERE ce.claim_id = c.id AND ce.tenant_id = c.tenant_id AND ce.person_id = c.person_id
      AND ce.relation = '"supports"')
"""


def _profiles_then(
    db: Database, request: m.ProfilesRequest, recorded_at: int
) -> list[m.ProfileEntry]:
    """The entries as they were at *recorded_at*. An entry is replaced in place and dropped by a
    correction, so the tables only know the present: the past is read from the scope's commit
    feed, which holds every entry written and every one dropped, each at its commit's time."""
    tenant, person = request.tenant_id, request.person_id
    with db.atomic(write=False) as conn:
        entries: dict[str, dict[str, Any]] = {}  # entry id -> record
        for (payload,) in conn.execute(_PROFILE_EVENTS, (tenant, person, recorded_at)):
            event = json.loads(payload)
            record = event["record"]
            if event["kind"] == "profile":
                entries[record["id"]] = record
            elif record["target"]["kind"] == m.MemoryKind.profile_entry.value:
                entries.pop(record["target"]["id"], None)
        params = {
            "ids": json.dumps(sorted({r["claim_id"] for r in entries.values()})),
            "tenant": tenant,
            "person": person,
            "recorded_at": recorded_at,
        }
        current = {row[0] for row in conn.execute(_CURRENT_THEN, params)}
    kept = sorted(
        (r for r in entries.values() if r["claim_id"] in current),
        key=lambda r: (-r["recorded_at"], r["id"]),
    )
    result = [m.ProfileEntry.model_validate(r) for r in kept[: m.bounded_limit(request.limit)]]
    check_read_page(result)
    return result


# ----------------------------------------------------------------------------------------------
# review / reviews
# ----------------------------------------------------------------------------------------------


def review(db: Database, request: m.ReviewRequest) -> m.ReviewResult:
    """Store a daily review citing live evidence of the scope (never idempotent).

    :raises InvalidRequest: blank day or summary, no evidence, an unavailable evidence id.
    """
    require_scope(request.tenant_id, request.person_id)
    require_text(request.day, "day")
    require_text(request.summary, "summary")
    if not request.evidence_ids:
        raise InvalidRequest("review needs evidence_ids")
    tenant, person = request.tenant_id, request.person_id
    with db.atomic() as conn:
        for evidence_id in request.evidence_ids:
            if live_evidence(conn, evidence_id, tenant, person, "1") is None:
                raise InvalidRequest(f"evidence {evidence_id} is unavailable")
        review_id = new_id()
        conn.execute(
            "INSERT INTO daily_reviews(id, tenant_id, person_id, day, summary, evidence_ids,"
            " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                review_id,
                tenant,
                person,
                request.day,
                request.summary,
                ordered_dumps(list(request.evidence_ids)),
                request.recorded_at,
            ),
        )
        append_commit(
            conn, tenant, person, request.recorded_at, [daily_review_record(conn, review_id)]
        )
    return m.ReviewResult(id=review_id)


def reviews(db: Database, request: m.ReviewsRequest) -> list[m.ReviewItem]:
    """Reviews of the scope (of one day, when asked; recorded by ``as_of``'s recorded time, when
    given), latest day first (string order), then latest recorded first.

    :raises LimitExceeded: the answer would exceed the read page budget (§4.10).
    """
    require_scope(request.tenant_id, request.person_id)
    with db.atomic(write=False) as conn:
        rows = conn.execute(
            "SELECT id, day, summary, evidence_ids, recorded_at FROM daily_reviews"
            " WHERE tenant_id = ?1 AND person_id = ?2 AND (?3 IS NULL OR day = ?3)"
            " AND (?5 IS NULL OR recorded_at <= ?5)"
            " ORDER BY day DESC, recorded_at DESC, id ASC LIMIT ?4",
            (
                request.tenant_id,
                request.person_id,
                request.day,
                m.bounded_limit(request.limit),
                None if request.as_of is None else request.as_of.recorded_at,
            ),
        ).fetchall()
    items = [
        m.ReviewItem(
            id=row[0],
            day=row[1],
            summary=row[2],
            evidence_ids=json.loads(row[3]),
            recorded_at=row[4],
        )
        for row in rows
    ]
    check_read_page(items)
    return items


# ----------------------------------------------------------------------------------------------
# read page byte guard
# ----------------------------------------------------------------------------------------------


def check_read_page(items: Sequence[BaseModel]) -> None:
    """Refuse a listing whose compact JSON array would exceed :data:`MAX_READ_PAGE_BYTES`.

    The page starts at 2 bytes (``[]``); each item adds its compact length plus a comma after the
    first. The listing errors instead of truncating (contract §4.10).

    :raises LimitExceeded: ``read record exceeds ...`` / ``read page exceeds ...``.
    """
    page = 2
    for index, item in enumerate(items):
        size = compact_len(item.model_dump(mode="json", by_alias=True))
        if size + 2 > MAX_READ_PAGE_BYTES:
            raise LimitExceeded("read record exceeds the 1000000-byte page limit")
        if index > 0 and page + size + 1 > MAX_READ_PAGE_BYTES:
            raise LimitExceeded("read page exceeds the 1000000-byte page limit")
        page += size + (1 if index > 0 else 0)
