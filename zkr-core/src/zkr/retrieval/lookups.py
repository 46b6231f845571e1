"""Read operations hosts need about a scope, so that no host reads zkr's tables itself.

``sequence`` (has anything changed since?), ``claims`` (live claims by subject, predicate and a
fragment of the value, each with the live sources supporting it) and ``captures`` (the newest live
captures, optionally only those whose ingestion key has a prefix). (The "now" floors of the write
tools are the writes layer's: :mod:`zkr.writes.now_floors`.)

Every query is scoped to one (tenant, person): another scope's records look missing. A page of
``claims`` or ``captures`` holds at most :data:`~zkr.writes.profiles.MAX_READ_PAGE_BYTES` of compact
JSON, like ``memories`` (newest first, at least one item): a value or a text may be a megabyte, and
100 of them were a 100 MB answer (issue 18). Rows are read one at a time, so memory stays within
the page too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator

from zkr import models as m
from zkr.jsonio import compact_len
from zkr.store.database import Database
from zkr.store.validation import require_scope
from zkr.writes.profiles import MAX_READ_PAGE_BYTES

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from pydantic import BaseModel

    _Item = TypeVar("_Item", bound="BaseModel")

__all__ = ["captures", "claims", "sequence"]

_SUPPORTS = json.dumps(m.EvidenceRelation.supports.value)


def _within_page(items: Iterable[_Item]) -> list[_Item]:
    """The leading *items* whose compact JSON array fits the read page budget (at least one);
    items after the first that does not fit are never built."""
    page: list[_Item] = []
    size = 2  # "[]"
    for item in items:
        item_size = compact_len(item.model_dump(mode="json", by_alias=True)) + (1 if page else 0)
        if page and size + item_size > MAX_READ_PAGE_BYTES:
            break
        page.append(item)
        size += item_size
    return page


def sequence(db: Database, request: m.SequenceRequest) -> m.SequenceResult:
    """The scope's newest commit sequence (0 when the scope has none)."""
    require_scope(request.tenant_id, request.person_id)
    with db.atomic(write=False) as conn:
        row = conn.execute(
            "SELECT max(sequence) FROM memory_commits WHERE tenant_id = ? AND person_id = ?",
            (request.tenant_id, request.person_id),
        ).fetchone()
    return m.SequenceResult(sequence=int(row[0]) if row is not None and row[0] is not None else 0)


def _supporting_sources(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, claim_id: str
) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT e.source_id FROM claim_evidence ce "
        "JOIN evidence e ON e.id = ce.evidence_id "
        "AND e.tenant_id = ce.tenant_id AND e.person_id = ce.person_id "
        "WHERE ce.claim_id = ? AND ce.tenant_id = ? AND ce.person_id = ? "
        "AND ce.relation = ? AND e.deleted_at IS NULL ORDER BY e.source_id",
        (claim_id, tenant_id, person_id, _SUPPORTS),
    ).fetchall()
    return [str(row[0]) for row in rows]


def claims(db: Database, request: m.ClaimsRequest) -> list[m.LiveClaim]:
    """Live claims matching every filter given, newest recorded first."""
    require_scope(request.tenant_id, request.person_id)
    where = [
        "tenant_id = ?",
        "person_id = ?",
        "status = 'accepted'",
        "valid_until IS NULL",
        "recorded_until IS NULL",
    ]
    params: list[Any] = [request.tenant_id, request.person_id]
    if request.subject is not None:
        where.append("subject = ?")
        params.append(request.subject)
    if request.predicate is not None:
        where.append("predicate = ?")
        params.append(request.predicate)
    if request.contains is not None:
        where.append("instr(value, ?) > 0")
        params.append(request.contains)
    params.append(m.bounded_limit(request.limit))
    with db.atomic(write=False) as conn:
        rows: Iterator[Any] = conn.execute(
            "SELECT id, subject, predicate, value, kind, valid_from, recorded_from FROM claims "
            f"WHERE {' AND '.join(where)} ORDER BY recorded_from DESC, id DESC LIMIT ?",
            params,
        )
        return _within_page(
            m.LiveClaim(
                id=row[0],
                subject=row[1],
                predicate=row[2],
                value=row[3],
                kind=m.ClaimKind(row[4]),
                valid_from=row[5],
                recorded_from=row[6],
                source_ids=_supporting_sources(conn, request.tenant_id, request.person_id, row[0]),
            )
            for row in rows
        )


def captures(db: Database, request: m.CapturesRequest) -> list[m.Capture]:
    """Live captures with live evidence, newest recorded first (then newest captured, stored)."""
    require_scope(request.tenant_id, request.person_id)
    prefix = request.key_prefix or ""
    with db.atomic(write=False) as conn:
        rows: Iterator[Any] = conn.execute(
            "SELECT s.id, s.origin_evidence_id, s.kind, s.content, s.captured_at, s.recorded_at "
            "FROM sources s "
            "JOIN evidence e ON e.id = s.origin_evidence_id AND e.deleted_at IS NULL "
            "WHERE s.tenant_id = ? AND s.person_id = ? AND s.deleted_at IS NULL "
            "AND (? = '' OR substr(s.ingestion_key, 1, ?) = ?) "
            "ORDER BY s.recorded_at DESC, s.captured_at DESC, s.rowid DESC LIMIT ?",
            (
                request.tenant_id,
                request.person_id,
                prefix,
                len(prefix),
                prefix,
                m.bounded_limit(request.limit),
            ),
        )
        return _within_page(
            m.Capture(
                source_id=row[0],
                evidence_id=row[1],
                kind=m.SourceKind(json.loads(row[2])),
                text=row[3],
                captured_at=row[4],
                recorded_at=row[5],
            )
            for row in rows
        )
