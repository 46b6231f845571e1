"""``rebuild``: embed the replica's memories with an installed embedder plugin, into a lane table.

Vectors are not in the feed (they are projections): like zkr's ``rebuild``, the replica embeds
with the same embedder plugins. One lane = one (model, version) = one ``vector(dimension)`` table
(:func:`zkr_postgres.schema.create_lane`). What is embedded, per scope:

- every live capture (source ``content``): a capture and its evidence carry the same text, so the
  dense list holds each capture once;
- every current claim (``subject predicate value``, zkr's projection text of a claim).

A row is (re)embedded when it is missing or its ``input_hash`` (``sha256:<hex>`` of the text) no
longer matches. Each batch is one transaction, so an interrupted rebuild resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from zkr.plugins import get_embedder, load_plugins
from zkr_postgres._db import Conn
from zkr_postgres.schema import SCHEMA, create_lane

__all__ = ["RebuildStats", "rebuild"]

_HASH = "'sha256:' || encode(sha256(convert_to({text}, 'UTF8')), 'hex')"
_SOURCE_TEXT = "s.content"
_CLAIM_TEXT = "c.subject || ' ' || c.predicate || ' ' || c.value"

# Work left: live sources and current claims with no vector, or a vector of other text.
_WORK = """
(SELECT s.tenant_id, s.person_id, 'source' AS kind, s.id, {source_text} AS text,
        {source_hash} AS input_hash
   FROM zkr.sources s LEFT JOIN {lane} v ON v.tenant_id = s.tenant_id
     AND v.person_id = s.person_id AND v.target_kind = 'source' AND v.target_id = s.id
  WHERE s.deleted_at IS NULL AND s.content <> ''
    AND (v.target_id IS NULL OR v.input_hash <> {source_hash})
  LIMIT %(batch)s)
UNION ALL
(SELECT c.tenant_id, c.person_id, 'claim', c.id, {claim_text}, {claim_hash}
   FROM zkr.claims c LEFT JOIN {lane} v ON v.tenant_id = c.tenant_id
     AND v.person_id = c.person_id AND v.target_kind = 'claim' AND v.target_id = c.id
  WHERE c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL
    AND (v.target_id IS NULL OR v.input_hash <> {claim_hash})
  LIMIT %(batch)s)
LIMIT %(batch)s
"""


@dataclass
class RebuildStats:
    model: str
    version: str
    embedded: int = 0
    batches: int = 0


def rebuild(
    conn: Conn,
    model: str,
    version: str,
    *,
    batch_size: int | None = None,
    embedder: Any = None,
    progress: Callable[[RebuildStats], None] | None = None,
) -> RebuildStats:
    """Embed every missing or stale target of every scope into the lane of (model, version).

    :raises UnknownPluginError: no installed embedder serves that model and version.
    :raises ValueError: the lane exists with another dimension or configuration.
    """
    if embedder is None:
        load_plugins()
        embedder = get_embedder(model, version)
    with conn.transaction():
        table = create_lane(
            conn, model, version, embedder.dimension, embedder.normalization, embedder.distance
        )
    lane = sql.Identifier(SCHEMA, table)
    work = sql.SQL(_WORK).format(
        lane=lane,
        source_text=sql.SQL(_SOURCE_TEXT),
        claim_text=sql.SQL(_CLAIM_TEXT),
        source_hash=sql.SQL(_HASH.format(text=_SOURCE_TEXT)),
        claim_hash=sql.SQL(_HASH.format(text=_CLAIM_TEXT)),
    )
    # The vector is written only if its target is still live with the same text: a deletion or
    # erasure applied meanwhile wins (FOR SHARE waits for it and re-checks the row).
    upserts = {
        kind: sql.SQL(
            "INSERT INTO {lane}(tenant_id, person_id, target_kind, target_id, input_hash,"
            " embedding) SELECT t.tenant_id, t.person_id, %(kind)s, t.id, %(hash)s, %(vec)s::vector"
            " FROM {table} t WHERE t.tenant_id = %(t)s AND t.person_id = %(p)s AND t.id = %(id)s"
            " AND {live} AND {hash} = %(hash)s FOR SHARE OF t"
            " ON CONFLICT (tenant_id, person_id, target_kind, target_id) DO UPDATE SET"
            " input_hash = excluded.input_hash, embedding = excluded.embedding"
        ).format(
            lane=lane,
            table=sql.Identifier(SCHEMA, table_name),
            live=sql.SQL(live),
            hash=sql.SQL(_HASH.format(text=text.replace("s.", "t.").replace("c.", "t."))),
        )
        for kind, table_name, live, text in (
            ("source", "sources", "t.deleted_at IS NULL", _SOURCE_TEXT),
            (
                "claim",
                "claims",
                "t.status = 'accepted' AND t.valid_until IS NULL AND t.recorded_until IS NULL",
                _CLAIM_TEXT,
            ),
        )
    }
    stats = RebuildStats(model, version)
    size = batch_size or int(getattr(embedder, "batch_size", 32))
    while True:
        rows = conn.execute(work, {"batch": size}).fetchall()
        if not rows:
            return stats
        vectors = embedder.embed_batch([row[4] for row in rows])
        with conn.transaction(), conn.pipeline():
            for row, vector in zip(rows, vectors, strict=True):
                params = {
                    "t": row[0],
                    "p": row[1],
                    "kind": row[2],
                    "id": row[3],
                    "hash": row[5],
                    "vec": "[" + ",".join(repr(float(x)) for x in vector) + "]",
                }
                conn.execute(upserts[row[2]], params)
        stats.embedded += len(rows)
        stats.batches += 1
        if progress is not None:
            progress(stats)
