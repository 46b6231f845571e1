"""What a lane holds, read from SQLite: the counting rows and the targets each maps to (§5.4).

A row *counts* when its target is live at the stored revision, its configuration is the lane's and
its vector is valid for the text it stands for. A certified row (``embedding_checks``: validated
on write, nothing changed since, triggers keep that true) needs no check of its own, so a full
build reads certified rows in blocks (:func:`certified_blocks`: kinds, ids and one joined bytes
object per block, no Python per row) and only the few uncertified rows one by one
(:func:`checked_rows`, which hashes each one's current text).

Mapping (:func:`mapping_pairs`, set-based SQL): a claim's vector counts for the claim; an evidence
vector with a live source counts for the current claims the evidence supports, for nothing when it
supports only closed claims, else for itself; a source's vector counts for the current claims its
live evidence supports, for nothing when any of its evidence supports any claim or when it has no
evidence, else for itself.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from zkr.embeddings.projections import Config, Target, _checks, _live_at_revision, input_hash
from zkr.embeddings.vectors import F32, encode, row_vector, stored_config

__all__ = [
    "LaneKey",
    "Only",
    "certified_blocks",
    "checked_rows",
    "lane_row_count",
    "mapping_blocks",
    "mapping_pairs",
    "spellings_on_lane",
]

#: (tenant_id, person_id, model, version).
LaneKey = tuple[str, str, str, str]
#: Targets to restrict a read to, by kind (``None``: the whole lane).
Only = dict[str, list[str]] | None

_LANE = "e.tenant_id = ? AND e.person_id = ? AND e.model = ? AND e.version = ? AND e.dimension = ?"
_CHECKED = (
    " JOIN {checks} k ON k.tenant_id = e.tenant_id AND k.person_id = e.person_id"
    " AND k.target_kind = e.target_kind AND k.target_id = e.target_id AND k.model = e.model"
    " AND k.version = e.version"
)

# Certified rows: the certificate vouches for the vector; only liveness and bytes are checked.
_CERTIFIED_SQL = (
    "SELECT e.target_kind, e.target_id, e.vector FROM embeddings e" + _CHECKED + " WHERE " + _LANE
    + " AND {live} AND typeof(e.vector) = 'blob' AND length(e.vector) = ?"
)  # fmt: skip

# The lane's rows whose target is live at the stored revision, with the certificate and, for
# uncertified rows only, the current text to hash.
_ROWS_SQL = """
SELECT e.target_kind, e.target_id, e.dimension, e.input_hash, e.normalization, e.distance,
  e.vector, k.target_id IS NOT NULL AS certified,
  CASE WHEN k.target_id IS NULL THEN CASE e.target_kind
    WHEN 'source' THEN (SELECT content FROM sources s WHERE s.id = e.target_id
      AND s.tenant_id = e.tenant_id AND s.person_id = e.person_id)
    WHEN 'evidence' THEN (SELECT quote FROM evidence v WHERE v.id = e.target_id
      AND v.tenant_id = e.tenant_id AND v.person_id = e.person_id)
    WHEN 'claim' THEN (SELECT c.subject || ' ' || c.predicate || ' ' || c.value FROM claims c
      WHERE c.id = e.target_id AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id)
  END END AS text
FROM embeddings e LEFT JOIN {checks} k ON k.tenant_id = e.tenant_id AND k.person_id = e.person_id
  AND k.target_kind = e.target_kind AND k.target_id = e.target_id AND k.model = e.model
  AND k.version = e.version
WHERE e.tenant_id = ? AND e.person_id = ? AND e.model = ? AND e.version = ? AND e.dimension = ?
  AND {live}{certified}{only}
ORDER BY e.target_kind, e.target_id
"""

# Restricts a query on `embeddings e` to the targets of one kind listed in a JSON array.
_ONLY = " AND e.target_kind = ? AND e.target_id IN (SELECT value FROM json_each(?))"

_CURRENT = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
_SCOPED = "{a}.tenant_id = {b}.tenant_id AND {a}.person_id = {b}.person_id"
# CROSS JOIN: SQLite keeps the written order, from the lane's rows to their links, instead of
# scanning every link of the scope first (3x the CPU at 100,000 rows); the unary + keeps it on
# claim_evidence_by_evidence rather than the scope prefix of the primary key.
_SUPPORTS = (
    " CROSS JOIN claim_evidence ce ON ce.evidence_id = v.id AND +ce.tenant_id = v.tenant_id"
    " AND +ce.person_id = v.person_id AND ce.relation = '\"supports\"'"
    " CROSS JOIN claims c ON c.id = ce.claim_id AND " + _SCOPED.format(a="c", b="ce")
)  # fmt: skip
_LIVE_EVIDENCE = (
    " CROSS JOIN evidence v ON v.id = e.target_id AND " + _SCOPED.format(a="v", b="e")
    + " AND v.deleted_at IS NULL"
    " CROSS JOIN sources s ON s.id = v.source_id AND " + _SCOPED.format(a="s", b="v")
    + " AND s.deleted_at IS NULL"
)  # fmt: skip
# Does evidence `v` support any claim (of any status)? Correlated on v.id, so it uses
# claim_evidence_by_evidence instead of scanning the scope's links.
_SUPPORTED = (
    "EXISTS (SELECT 1 FROM claim_evidence ce JOIN claims c ON c.id = ce.claim_id AND "
    + _SCOPED.format(a="c", b="ce") + " WHERE ce.evidence_id = v.id AND "
    + _SCOPED.format(a="ce", b="v") + " AND ce.relation = '\"supports\"')"
)  # fmt: skip
_OF_SOURCE = " CROSS JOIN evidence v ON v.source_id = e.target_id AND " + _SCOPED.format(
    a="v", b="e"
)

# (row kind, row id, mapped kind, mapped id) for every row of the lane, in no particular order
# (each part of the UNION ALL lists distinct pairs; a row is in at most two parts).
_MAPPING_SQL = (
    "SELECT 'claim' AS k, e.target_id AS i, 'claim' AS mk, e.target_id AS mi FROM embeddings e"
    " WHERE " + _LANE + " AND e.target_kind = 'claim'{only_claim}"
    " UNION ALL SELECT 'evidence', e.target_id, 'claim', c.id FROM embeddings e" + _LIVE_EVIDENCE
    + _SUPPORTS + " AND " + _CURRENT
    + " WHERE " + _LANE + " AND e.target_kind = 'evidence'{only_evidence}"
    " UNION ALL SELECT 'evidence', e.target_id, 'evidence', e.target_id FROM embeddings e"
    + _LIVE_EVIDENCE + " WHERE " + _LANE + " AND e.target_kind = 'evidence'{only_evidence}"
    + " AND NOT " + _SUPPORTED
    + " UNION ALL SELECT DISTINCT 'source', e.target_id, 'claim', c.id FROM embeddings e"
    + _OF_SOURCE
    + " AND v.deleted_at IS NULL" + _SUPPORTS + " AND " + _CURRENT
    + " WHERE " + _LANE + " AND e.target_kind = 'source'{only_source}"
    " UNION ALL SELECT 'source', e.target_id, 'source', e.target_id FROM embeddings e"
    " WHERE " + _LANE + " AND e.target_kind = 'source'{only_source}"
    " AND EXISTS (SELECT 1 FROM evidence v WHERE v.source_id = e.target_id AND "
    + _SCOPED.format(a="v", b="e") + ")"
    " AND NOT EXISTS (SELECT 1 FROM evidence v WHERE v.source_id = e.target_id AND "
    + _SCOPED.format(a="v", b="e") + " AND " + _SUPPORTED + ")"
)  # fmt: skip
_ONLY_IDS = " AND e.target_id IN (SELECT value FROM json_each(?))"


def lane_row_count(conn: sqlite3.Connection, lane_key: LaneKey, config: Config) -> int:
    """How many rows of the lane's dimension are stored (an upper bound on the counting rows)."""
    count: int = conn.execute(
        "SELECT count(*) FROM embeddings e WHERE " + _LANE, (*lane_key, config[0])
    ).fetchone()[0]
    return count


def spellings_on_lane(conn: sqlite3.Connection, lane_key: LaneKey, config: Config) -> bool:
    """Whether every stored spelling of (dimension, normalization, distance) is the lane's own
    (the certified block read filters nothing else; a lane with stray spellings is read row by
    row)."""
    spellings = conn.execute(
        "SELECT DISTINCT e.dimension, e.normalization, e.distance FROM embeddings e WHERE " + _LANE,
        (*lane_key, config[0]),
    ).fetchall()
    return all(stored_config(*spelling) == config for spelling in spellings)


def certified_blocks(
    conn: sqlite3.Connection, lane_key: LaneKey, config: Config, size: int
) -> Iterator[tuple[list[Target], bytes]]:
    """The lane's certified counting rows in blocks of *size*: their targets, their vectors joined.

    Only valid when :func:`spellings_on_lane` holds; the rows come in no particular order.
    """
    sql = _CERTIFIED_SQL.format(checks=_checks(conn), live=_live_at_revision("e"))
    cursor = conn.execute(sql, (*lane_key, config[0], config[0] * F32.itemsize))
    while rows := cursor.fetchmany(size):
        kinds, ids, blobs = zip(*rows, strict=True)
        yield list(zip(kinds, ids, strict=True)), b"".join(blobs)


def _restricted(only: Only) -> list[tuple[str, tuple[str, ...]]]:
    """(SQL suffix, parameters) per query: one unrestricted, or one per listed kind."""
    if only is None:
        return [("", ())]
    return [(_ONLY, (kind, json.dumps(ids))) for kind, ids in sorted(only.items())]


def checked_rows(
    conn: sqlite3.Connection,
    lane_key: LaneKey,
    config: Config,
    only: Only,
    *,
    uncertified: bool = False,
) -> Iterator[tuple[Target, bytes]]:
    """The lane's counting rows (of the *only* targets, when given), each checked here: target
    and float32 bytes. *uncertified*: only the rows without a certificate."""
    on_lane: dict[tuple[Any, Any, Any], bool] = {}  # a lane has a handful of spellings: parse once
    certified_filter = " AND k.target_id IS NULL" if uncertified else ""
    for suffix, extra in _restricted(only):
        sql = _ROWS_SQL.format(
            checks=_checks(conn),
            live=_live_at_revision("e"),
            certified=certified_filter,
            only=suffix,
        )
        for row in conn.execute(sql, (*lane_key, config[0], *extra)):
            spelling = (row[2], row[4], row[5])
            if spelling not in on_lane:
                on_lane[spelling] = stored_config(*spelling) == config
            if on_lane[spelling] and (vector := _counting_vector(row, config)) is not None:
                yield (row[0], row[1]), vector


def _counting_vector(row: tuple[Any, ...], config: Config) -> bytes | None:
    """The float32 bytes of an on-lane ``_ROWS_SQL`` row, ``None`` when the row doesn't count."""
    _kind, _id, dimension, stored_hash, norm, dist, vector, certified, text = row
    if certified:
        # Certified rows were validated on write and nothing changed since (triggers).
        if isinstance(vector, bytes) and len(vector) == config[0] * F32.itemsize:
            return vector
        return None
    if text is None or stored_hash != input_hash(text):
        return None
    decoded = row_vector(dimension, norm, dist, vector)
    return None if decoded is None else encode(decoded)


def mapping_pairs(
    conn: sqlite3.Connection, lane_key: LaneKey, config: Config, only: Only
) -> tuple[list[Target], list[Target]]:
    """(rows, mapped): row ``rows[i]`` of the lane counts for retrieval target ``mapped[i]``.

    In no particular order; a row that counts for nothing has no pair.
    Rows are the lane's stored rows (counting or not): callers keep the pairs of their rows.
    """
    rows: list[Target] = []
    mapped: list[Target] = []
    for block_rows, block_mapped in mapping_blocks(conn, lane_key, config, only):
        rows.extend(block_rows)
        mapped.extend(block_mapped)
    return rows, mapped


def mapping_blocks(
    conn: sqlite3.Connection, lane_key: LaneKey, config: Config, only: Only, size: int = 4096
) -> Iterator[tuple[list[Target], list[Target]]]:
    """:func:`mapping_pairs` in blocks of up to *size* pairs, in the same order: a full build
    consumes them as they come instead of holding two tuples per pair of the whole lane (at
    100,000 vectors about 37 MB at the build's peak)."""
    lane: tuple[Any, ...] = (*lane_key, config[0])
    filters = {"only_claim": "", "only_evidence": "", "only_source": ""}
    listed: dict[str, str] = {}
    if only is not None:
        listed = {kind: json.dumps(ids) for kind, ids in only.items()}
        filters = {f"only_{kind}": _ONLY_IDS for kind in ("claim", "evidence", "source")}
    params: list[Any] = []
    # One parameter group per SELECT of the UNION, in order: its lane, then its id list.
    for kind in ("claim", "evidence", "evidence", "source", "source"):
        params.extend(lane)
        if only is not None:
            params.append(listed.get(kind, "[]"))
    cursor = conn.execute(_MAPPING_SQL.format(**filters), params)
    while block := cursor.fetchmany(size):
        kinds, ids, mapped_kinds, mapped_ids = zip(*block, strict=True)
        yield (
            list(zip(kinds, ids, strict=True)),
            list(zip(mapped_kinds, mapped_ids, strict=True)),
        )
