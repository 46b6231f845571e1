"""``memories`` (an addition): a person's paged list of what a scope holds.

Live claims (current ones, or with ``as_of`` those visible then) and live captures, each with the
live evidence it cites, newest recorded first (then by id, descending). Paging is keyset, never
OFFSET: the opaque cursor is the (recorded time, id) of the last item, and each claim kind and each
source kind is read along its own index (``claims_kind_listing``, ``sources_kind_listing``) from
that point, at most ``limit + 1`` rows per kind; the per-kind pages are merged. A page costs the
same at the first item and at the 100,000th, and items recorded later never shift a cursor.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from collections.abc import Sequence

from zkr import models as m
from zkr.errors import InvalidRequest
from zkr.jsonio import compact_len
from zkr.retrieval._materialize import cap_excerpt
from zkr.store.believed import (
    recorded_until_as_of,
    status_as_of,
    valid_until_as_of,
    visible_claim,
)
from zkr.store.records import time_range
from zkr.store.validation import require_scope
from zkr.writes.profiles import MAX_READ_PAGE_BYTES

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.store.database import Database

__all__ = [
    "capture_item",
    "capture_statements",
    "claim_item",
    "claim_statements",
    "decode_cursor",
    "encode_cursor",
    "listed_kinds",
    "memories",
    "memories_page",
    "page_bound",
]

_SUPPORTS = "'\"supports\"'"
_CURSOR_PREFIX = "m1:"
_INVALID_CURSOR = "cursor is not a memories cursor"

# Keyset: strictly after (older than) the cursor in (recorded, id) descending order.
_AFTER = "(({col}, {alias}.id) < (:after_recorded, :after_id))"

_CLAIM_CURRENT = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
# ``recorded_from <= :recorded_at`` is the keyset bound (see :func:`page_bound`), so that the index
# range starts at the page, not at as_of.
_CLAIM_AS_OF = visible_claim("c", recorded_from=False)
# The live supporting evidence of claim c (on a live source; with as_of, existing then).
_CLAIM_EVIDENCE = f"""
SELECT e.id FROM claim_evidence AS ce
JOIN evidence AS e ON e.id = ce.evidence_id AND e.tenant_id = c.tenant_id
 AND e.person_id = c.person_id AND e.deleted_at IS NULL {{evidence_as_of}}
JOIN sources AS s ON s.id = e.source_id AND s.tenant_id = c.tenant_id
 AND s.person_id = c.person_id AND s.deleted_at IS NULL {{source_as_of}}
WHERE ce.claim_id = c.id AND ce.tenant_id = c.tenant_id AND ce.person_id = c.person_id
  AND ce.relation = {_SUPPORTS}
"""
_COLUMNS_NOW = "c.valid_until, c.recorded_from, c.recorded_until, c.status"
# With as_of, a claim is listed as it was believed then: a correction recorded later neither
# closed its intervals nor superseded it yet (zkr.store.believed).
_COLUMNS_AS_OF = (
    f"{valid_until_as_of('c')}, c.recorded_from, {recorded_until_as_of('c')}, {status_as_of('c')}"
)
_CLAIMS = """
SELECT c.id, c.kind, c.subject, c.predicate, c.value, c.valid_from, {columns}
FROM claims AS c
WHERE c.tenant_id = :tenant AND c.person_id = :person AND c.kind = :kind
  AND {visible} AND {after} AND EXISTS ({evidence})
ORDER BY c.recorded_from DESC, c.id DESC
LIMIT :rows
"""
_CAPTURE_EVIDENCE = """
SELECT e.id FROM evidence AS e
WHERE e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
  AND e.deleted_at IS NULL {evidence_as_of}
"""
_CAPTURES = """
SELECT s.id, s.kind, s.content, s.captured_at, s.recorded_at, s.ingestion_key
FROM sources AS s
WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.kind = :kind
  AND s.deleted_at IS NULL {visible} AND {after} AND EXISTS ({evidence})
ORDER BY s.recorded_at DESC, s.id DESC
LIMIT :rows
"""
_EVIDENCE_AS_OF = "AND e.recorded_at <= :recorded_at"
_SOURCE_AS_OF = "AND s.captured_at <= :valid_at AND s.recorded_at <= :recorded_at"
# recorded_at is the keyset bound; the unary + keeps the planner on the listing index (a
# captured_at range would pick the timeline index and sort).
_CAPTURE_AS_OF = "AND +s.captured_at <= :valid_at"


def encode_cursor(recorded: int, memory_id: str) -> str:
    """The opaque cursor after an item recorded at *recorded* with id *memory_id*."""
    raw = f"{_CURSOR_PREFIX}{recorded}:{memory_id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """``(recorded, id)`` of a cursor made by :func:`encode_cursor`.

    :raises InvalidRequest: anything else.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        raise InvalidRequest(_INVALID_CURSOR) from None
    if not raw.startswith(_CURSOR_PREFIX):
        raise InvalidRequest(_INVALID_CURSOR)
    recorded, sep, memory_id = raw[len(_CURSOR_PREFIX) :].partition(":")
    try:
        value = int(recorded)
    except ValueError:
        raise InvalidRequest(_INVALID_CURSOR) from None
    if not sep or not memory_id or str(value) != recorded or not m.I64_MIN <= value <= m.I64_MAX:
        raise InvalidRequest(_INVALID_CURSOR)
    return value, memory_id


def page_bound(request: m.MemoriesRequest) -> tuple[int, str] | None:
    """Items must sort strictly before this (recorded, id): the cursor's, or with ``as_of`` the
    first key past its recorded time (``(R + 1, "")``), whichever comes first."""
    bound = None if request.cursor is None else decode_cursor(request.cursor)
    as_of = request.as_of
    if as_of is not None and as_of.recorded_at < m.I64_MAX:
        as_of_bound = (as_of.recorded_at + 1, "")
        bound = as_of_bound if bound is None else min(bound, as_of_bound)
    return bound


def listed_kinds(request: m.MemoriesRequest) -> tuple[list[str], list[str]]:
    """The claim kinds and source kinds to read."""
    claim_kinds = [k.value for k in request.claim_kinds]
    source_kinds = [k.value for k in request.source_kinds]
    if not claim_kinds and not source_kinds:
        return [k.value for k in m.ClaimKind], [k.value for k in m.SourceKind]
    return sorted(set(claim_kinds)), sorted(set(source_kinds))


def memories(db: Database, request: m.MemoriesRequest) -> m.MemoriesPage:
    """One page of the scope's live claims and captures, newest recorded first.

    The page holds at most ``limit`` items (0 -> 10, at most 100) and at most 1,000,000 bytes of
    compact JSON items; ``next_cursor`` continues after its last item.

    :raises InvalidRequest: blank scope, a cursor that is not one.
    """
    require_scope(request.tenant_id, request.person_id)
    limit = m.bounded_limit(request.limit)
    params: dict[str, Any] = {
        "tenant": request.tenant_id,
        "person": request.person_id,
        "rows": limit + 1,
    }
    as_of = request.as_of
    if as_of is not None:
        params["valid_at"], params["recorded_at"] = as_of.valid_at, as_of.recorded_at
    bound = page_bound(request)
    keyset = bound is not None
    if bound is not None:
        params["after_recorded"], params["after_id"] = bound
    claim_kinds, source_kinds = listed_kinds(request)
    as_of_mode = as_of is not None
    claim_sql, claim_evidence = claim_statements(keyset, as_of_mode)
    capture_sql, capture_evidence = capture_statements(keyset, as_of_mode)
    with db.atomic(write=False) as conn:
        # Each kind's page is a range of its index; only the merged first limit + 1 rows are
        # turned into items (their citations read in one query per table).
        rows: list[tuple[int, str, bool, tuple[Any, ...]]] = []
        for kind in claim_kinds:
            for row in conn.execute(claim_sql, {**params, "kind": kind}):
                rows.append((row[7], row[0], True, row))
        for kind in source_kinds:
            for row in conn.execute(capture_sql, {**params, "kind": json.dumps(kind)}):
                rows.append((row[4], row[0], False, row))
        rows.sort(key=lambda row: (row[0], row[1]), reverse=True)
        rows = rows[: limit + 1]
        claim_cited = _evidence_of(
            conn, [r[1] for r in rows if r[2]], "c", "claims", claim_evidence, params
        )
        capture_cited = _evidence_of(
            conn, [r[1] for r in rows if not r[2]], "s", "sources", capture_evidence, params
        )
    items = [
        _claim_item(row, claim_cited) if is_claim else _capture_item(row, capture_cited)
        for _, _, is_claim, row in rows
    ]
    return memories_page(items, limit)


def memories_page(items: Sequence[m.MemoryListItem], limit: int) -> m.MemoriesPage:
    """At most *limit* items and MAX_READ_PAGE_BYTES of compact JSON, with the next cursor (every
    store that answers ``memories`` pages the same way)."""
    page: list[m.MemoryListItem] = []
    size = 2  # "[]"
    for item in items[:limit]:
        item_size = compact_len(item.model_dump(mode="json", by_alias=True)) + (1 if page else 0)
        if page and size + item_size > MAX_READ_PAGE_BYTES:
            break
        page.append(item)
        size += item_size
    more = len(items) > len(page)
    next_cursor = encode_cursor(page[-1].recorded_at, page[-1].memory.id) if more else None
    return m.MemoriesPage(items=page, next_cursor=next_cursor)


def claim_statements(keyset: bool, as_of: bool) -> tuple[str, str]:
    """The page statement of one claim kind and its citation subquery (correlated to ``c``)."""
    evidence = _CLAIM_EVIDENCE.format(
        evidence_as_of=_EVIDENCE_AS_OF if as_of else "",
        source_as_of=_SOURCE_AS_OF if as_of else "",
    )
    sql = _CLAIMS.format(
        columns=_COLUMNS_AS_OF if as_of else _COLUMNS_NOW,
        visible=_CLAIM_AS_OF if as_of else _CLAIM_CURRENT,
        after=_AFTER.format(col="c.recorded_from", alias="c") if keyset else "1",
        evidence=evidence,
    )
    return sql, evidence


def capture_statements(keyset: bool, as_of: bool) -> tuple[str, str]:
    """The page statement of one source kind and its citation subquery (correlated to ``s``)."""
    evidence = _CAPTURE_EVIDENCE.format(evidence_as_of=_EVIDENCE_AS_OF if as_of else "")
    sql = _CAPTURES.format(
        visible=_CAPTURE_AS_OF if as_of else "",
        after=_AFTER.format(col="s.recorded_at", alias="s") if keyset else "1",
        evidence=evidence,
    )
    return sql, evidence


def claim_item(row: Sequence[Any], evidence_ids: list[str]) -> m.MemoryListItem:
    """A listed claim from its stored values (id, kind, subject, predicate, value, valid from and
    until, recorded from and until, status), texts cut as every excerpt is (zkr-postgres too)."""
    cid, kind, subject, predicate, value, vf, vu, rf, ru, status = row
    claim = m.ListedClaim(
        id=cid,
        kind=m.ClaimKind(kind),
        subject=cap_excerpt(subject),
        predicate=cap_excerpt(predicate),
        value=cap_excerpt(value),
        valid_time=time_range(vf, vu),
        recorded_time=time_range(rf, ru),
        status=m.ClaimStatus(status),
    )
    return _listed(m.MemoryKind.claim, cid, rf, evidence_ids, claim=claim)


def capture_item(row: Sequence[Any], evidence_ids: list[str]) -> m.MemoryListItem:
    """A listed capture from its values (id, kind as its name, content, captured and recorded
    times, ingestion key), the text cut as every excerpt is (zkr-postgres too)."""
    sid, kind, content, captured_at, recorded_at, ingestion_key = row
    capture = m.ListedCapture(
        id=sid,
        kind=m.SourceKind(kind),
        text=cap_excerpt(content),
        captured_at=captured_at,
        recorded_at=recorded_at,
        ingestion_key=ingestion_key,
    )
    return _listed(m.MemoryKind.source, sid, recorded_at, evidence_ids, capture=capture)


def _listed(
    kind: m.MemoryKind,
    memory_id: str,
    recorded_at: int,
    evidence_ids: list[str],
    *,
    claim: m.ListedClaim | None = None,
    capture: m.ListedCapture | None = None,
) -> m.MemoryListItem:
    """One listed memory: exactly one of *claim* and *capture* is given."""
    return m.MemoryListItem(
        memory=m.MemoryRef(kind=kind, id=memory_id),
        recorded_at=recorded_at,
        claim=claim,
        capture=capture,
        evidence_ids=evidence_ids,
    )


def _claim_item(row: tuple[Any, ...], cited: dict[str, list[str]]) -> m.MemoryListItem:
    return claim_item(row, cited.get(row[0], []))


def _capture_item(row: tuple[Any, ...], cited: dict[str, list[str]]) -> m.MemoryListItem:
    # SQLite stores the source kind JSON-quoted.
    return capture_item((row[0], json.loads(row[1]), *row[2:]), cited.get(row[0], []))


def _evidence_of(
    conn: sqlite3.Connection,
    ids: Sequence[str],
    alias: str,
    table: str,
    evidence: str,
    params: dict[str, Any],
) -> dict[str, list[str]]:
    """``id -> sorted evidence ids`` for the page's rows of one kind (one query)."""
    if not ids:
        return {}
    names = {f"p{index}": value for index, value in enumerate(ids)}
    marks = ", ".join(f":{name}" for name in names)
    grouped = evidence.replace("SELECT e.id", "SELECT json_group_array(e.id)", 1)
    query = f"SELECT {alias}.id, ({grouped}) FROM {table} AS {alias} WHERE {alias}.id IN ({marks})"
    return {
        owner: sorted(json.loads(listed))
        for owner, listed in conn.execute(query, {**params, **names})
    }
