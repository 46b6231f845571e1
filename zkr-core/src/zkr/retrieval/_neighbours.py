"""What the hybrid fusion (:func:`zkr.retrieval.fusion.fuse_scores`) reads from the database:
each candidate's live timeline neighbours and each anchor's kind and capture time (one query
each)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from zkr.store.recall_index import SESSION_GAP_SECONDS

__all__ = ["MIN_SPREAD", "SPREAD", "anchor_times", "neighbours"]

#: Timeline neighbours on each side whose dense score a capture borrows.
SPREAD = 2
#: The least spread of dense scores a z-score divides by (cosines; e5 on LoCoMo spreads ~0.03).
MIN_SPREAD = 1e-3

# Each candidate's live neighbours, both sides, by the timeline index (one statement for all).
_SIDE = """
SELECT c.id, n.id FROM c CROSS JOIN sources AS n ON n.rowid IN (
  SELECT rowid FROM sources
  WHERE tenant_id = :tenant AND person_id = :person AND kind = c.kind AND deleted_at IS NULL
    AND captured_at BETWEEN {low} AND {high} AND rowid != c.rid AND {side}
  ORDER BY captured_at {order}, rowid {order} LIMIT :window)
"""
_NEIGHBOURS = (
    """
WITH c AS (
  SELECT s.rowid AS rid, s.id, s.kind, s.captured_at AS at
  FROM json_each(:ids) AS j CROSS JOIN sources AS s ON s.id = j.value
  WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
)"""
    + _SIDE.format(
        low="c.at - :gap",
        high="c.at",
        side="(captured_at < c.at OR rowid < c.rid)",
        order="DESC",
    )
    + " UNION ALL "
    + _SIDE.format(
        low="c.at",
        high="c.at + :gap",
        side="(captured_at > c.at OR rowid > c.rid)",
        order="ASC",
    )
)


def neighbours(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, source_ids: Sequence[str]
) -> dict[str, list[str]]:
    """The live timeline neighbours of each live source among *source_ids* (one query)."""
    found: dict[str, list[str]] = {}
    if not source_ids:
        return found
    params = {
        "ids": json.dumps(list(dict.fromkeys(source_ids))),
        "tenant": tenant_id,
        "person": person_id,
        "gap": SESSION_GAP_SECONDS,
        "window": SPREAD,
    }
    for source_id, neighbour_id in conn.execute(_NEIGHBOURS, params):
        found.setdefault(source_id, []).append(neighbour_id)
    return found


_ANCHORS = """
SELECT s.id, s.kind, s.captured_at
FROM json_each(:ids) AS j CROSS JOIN sources AS s ON s.id = j.value
WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
"""


def anchor_times(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, source_ids: Sequence[str]
) -> dict[str, tuple[str, int]]:
    """``(kind, captured_at)`` of each live source among *source_ids* (one query)."""
    if not source_ids:
        return {}
    params = {
        "ids": json.dumps(list(dict.fromkeys(source_ids))),
        "tenant": tenant_id,
        "person": person_id,
    }
    return {
        source_id: (kind, captured_at)
        for source_id, kind, captured_at in conn.execute(_ANCHORS, params)
    }
