"""``memories`` answered from PostgreSQL: zkr's paged list of what a scope holds.

The same answer as zkr's ``memories`` (``zkr.retrieval.listing``) for the same records: live claims
(current ones, or with ``as_of`` those visible then) and live captures, each with the live evidence
it cites, newest recorded first, then by id descending; at most ``limit`` items and 1,000,000
bytes of compact JSON items per page; zkr's own opaque keyset cursor (``encode_cursor`` /
``decode_cursor``), so a cursor from one side continues the same list on the other. Ids compare
byte-wise (``COLLATE "C"``), as SQLite compares them. Every read runs as the serving role inside
the scope (:func:`zkr_postgres.retrieval.scoped`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zkr import models as m
from zkr.retrieval.listing import capture_item, claim_item, listed_kinds, memories_page, page_bound
from zkr.store.validation import require_scope
from zkr_postgres._db import Conn
from zkr_postgres.believed import (
    corrected_after,
    recorded_until_as_of,
    status_as_of,
    valid_until_as_of,
)
from zkr_postgres.nul import NUL, has_nul, restored
from zkr_postgres.retrieval import scoped

__all__ = ["memories"]

_SCOPE = "{a}.tenant_id = %(t)s AND {a}.person_id = %(p)s"
# Keyset: strictly older than the bound in (recorded, id) descending order.
_AFTER = (
    "({col} < %(after_recorded)s"
    ' OR ({col} = %(after_recorded)s AND {a}.id COLLATE "C" < %(after_id)s))'
)
_CLAIM_CURRENT = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
# As then believed: a correction recorded after R had not closed the valid time yet.
_CLAIM_AS_OF = (
    "c.status IN ('accepted', 'superseded')"
    " AND (c.recorded_until IS NULL OR %(r)s < c.recorded_until)"
    " AND c.valid_from <= %(v)s AND (c.valid_until IS NULL OR %(v)s < c.valid_until"
    f" OR {corrected_after('c')})"
)
_COLUMNS_NOW = "c.valid_until, c.recorded_from, c.recorded_until, c.status"
_COLUMNS_AS_OF = (
    f"{valid_until_as_of('c')}, c.recorded_from, {recorded_until_as_of('c')}, {status_as_of('c')}"
)
# The live supporting evidence of claim c (on a live source; with as_of, existing then).
_CLAIM_EVIDENCE = """
SELECT e.id FROM zkr.claim_evidence ce
JOIN zkr.evidence e ON e.tenant_id = c.tenant_id AND e.person_id = c.person_id
 AND e.id = ce.evidence_id AND e.deleted_at IS NULL {evidence_as_of}
JOIN zkr.sources s ON s.tenant_id = c.tenant_id AND s.person_id = c.person_id
 AND s.id = e.source_id AND s.deleted_at IS NULL {source_as_of}
WHERE ce.tenant_id = c.tenant_id AND ce.person_id = c.person_id AND ce.claim_id = c.id
  AND ce.relation = 'supports'
"""
_CAPTURE_EVIDENCE = """
SELECT e.id FROM zkr.evidence e
WHERE e.tenant_id = s.tenant_id AND e.person_id = s.person_id AND e.source_id = s.id
  AND e.deleted_at IS NULL {evidence_as_of}
"""
_EVIDENCE_AS_OF = "AND e.recorded_at <= %(r)s"
_SOURCE_AS_OF = "AND s.captured_at <= %(v)s AND s.recorded_at <= %(r)s"

_CLAIMS = """
SELECT c.id, c.kind, c.subject, c.predicate, c.value, c.valid_from, {columns},
  ARRAY(SELECT x.id FROM ({evidence}) x ORDER BY x.id COLLATE "C"), c.exact
FROM zkr.claims c
WHERE {scope} AND c.kind = ANY(%(claim_kinds)s) AND {visible} AND {after}
  AND EXISTS ({evidence})
ORDER BY c.recorded_from DESC, c.id COLLATE "C" DESC
LIMIT %(rows)s
"""
_CAPTURES = """
SELECT s.id, s.kind, s.content, s.captured_at, s.recorded_at, s.ingestion_key,
  ARRAY(SELECT x.id FROM ({evidence}) x ORDER BY x.id COLLATE "C"), s.exact
FROM zkr.sources s
WHERE {scope} AND s.kind = ANY(%(source_kinds)s) AND s.deleted_at IS NULL {visible} AND {after}
  AND EXISTS ({evidence})
ORDER BY s.recorded_at DESC, s.id COLLATE "C" DESC
LIMIT %(rows)s
"""


def _statements(keyset: bool, as_of: bool) -> tuple[str, str]:
    """The claims statement and the captures statement for a page."""
    claim_evidence = _CLAIM_EVIDENCE.format(
        evidence_as_of=_EVIDENCE_AS_OF if as_of else "",
        source_as_of=_SOURCE_AS_OF if as_of else "",
    )
    capture_evidence = _CAPTURE_EVIDENCE.format(evidence_as_of=_EVIDENCE_AS_OF if as_of else "")
    claims = _CLAIMS.format(
        columns=_COLUMNS_AS_OF if as_of else _COLUMNS_NOW,
        evidence=claim_evidence,
        scope=_SCOPE.format(a="c"),
        visible=_CLAIM_AS_OF if as_of else _CLAIM_CURRENT,
        after=_AFTER.format(col="c.recorded_from", a="c") if keyset else "TRUE",
    )
    captures = _CAPTURES.format(
        evidence=capture_evidence,
        scope=_SCOPE.format(a="s"),
        visible="AND s.captured_at <= %(v)s" if as_of else "",
        after=_AFTER.format(col="s.recorded_at", a="s") if keyset else "TRUE",
    )
    return claims, captures


def _claim_item(row: Sequence[Any]) -> m.MemoryListItem:
    cid, kind, subject, predicate, value, vf, vu, rf, ru, status, cited, exact = row
    text = restored({"subject": subject, "predicate": predicate, "value": value}, exact)
    served = (text["subject"], text["predicate"], text["value"])
    return claim_item((cid, kind, *served, vf, vu, rf, ru, status), list(cited))


def _capture_item(row: Sequence[Any]) -> m.MemoryListItem:
    sid, kind, content, captured_at, recorded_at, ingestion_key, cited, exact = row
    text = restored({"content": content, "ingestion_key": ingestion_key}, exact)
    values = (sid, kind, text["content"], captured_at, recorded_at, text["ingestion_key"])
    return capture_item(values, list(cited))


def _id_key(memory_id: str) -> bytes:
    return memory_id.encode("utf-8")


def memories(conn: Conn, request: m.MemoriesRequest) -> m.MemoriesPage:
    """One page of the scope's live claims and captures, newest recorded first.

    :raises InvalidRequest: blank scope; a cursor that is not a ``memories`` cursor.
    """
    require_scope(request.tenant_id, request.person_id)
    limit = m.bounded_limit(request.limit)
    bound = page_bound(request)
    if has_nul(request.tenant_id, request.person_id):
        return m.MemoriesPage(items=[], next_cursor=None)  # no stored scope holds NUL
    if bound is not None and has_nul(bound[1]):
        # Stored ids hold no NUL: the ids before "x\0…" in byte order are those before "x\1".
        bound = (bound[0], bound[1].split(NUL, 1)[0] + "\x01")

    claim_kinds, source_kinds = listed_kinds(request)
    params: dict[str, Any] = {
        "t": request.tenant_id,
        "p": request.person_id,
        "rows": limit + 1,
        "claim_kinds": claim_kinds,
        "source_kinds": source_kinds,
    }
    if request.as_of is not None:
        params["v"], params["r"] = request.as_of.valid_at, request.as_of.recorded_at
    if bound is not None:
        params["after_recorded"], params["after_id"] = bound
    claims_sql, captures_sql = _statements(bound is not None, request.as_of is not None)
    rows: list[tuple[int, bytes, m.MemoryListItem]] = []
    with scoped(conn, request.tenant_id, request.person_id):
        claim_rows = conn.execute(claims_sql, params).fetchall() if claim_kinds else []
        capture_rows = conn.execute(captures_sql, params).fetchall() if source_kinds else []
    for row in claim_rows:
        rows.append((row[7], _id_key(row[0]), _claim_item(row)))
    for row in capture_rows:
        rows.append((row[4], _id_key(row[0]), _capture_item(row)))
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    return memories_page([item for _, _, item in rows[: limit + 1]], limit)
