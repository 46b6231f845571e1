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
from zkr_postgres.analyze import analyze_changed
from zkr_postgres.schema import SCHEMA, create_lane

__all__ = ["RebuildStats", "rebuild"]

_HASH = "'sha256:' || encode(sha256(convert_to({text}, 'UTF8')), 'hex')"

# Work left of one kind, walked once in key order (keyset paging from the last key seen): live
# sources / current claims with no vector, or a vector of other text.
_WORK = {
    "source": """
SELECT s.tenant_id, s.person_id, s.id, {text} AS text, {hash} AS input_hash
  FROM zkr.sources s LEFT JOIN {lane} v ON v.tenant_id = s.tenant_id
    AND v.person_id = s.person_id AND v.target_kind = 'source' AND v.target_id = s.id
 WHERE (s.tenant_id, s.person_id, s.id) > (%(t)s, %(p)s, %(id)s)
   AND s.deleted_at IS NULL AND s.content <> ''
   AND (v.target_id IS NULL OR v.input_hash <> {hash})
 ORDER BY s.tenant_id, s.person_id, s.id LIMIT %(batch)s
""",
    "claim": """
SELECT c.tenant_id, c.person_id, c.id, {text}, {hash}
  FROM zkr.claims c LEFT JOIN {lane} v ON v.tenant_id = c.tenant_id
    AND v.person_id = c.person_id AND v.target_kind = 'claim' AND v.target_id = c.id
 WHERE (c.tenant_id, c.person_id, c.id) > (%(t)s, %(p)s, %(id)s)
   AND c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL
   AND (v.target_id IS NULL OR v.input_hash <> {hash})
 ORDER BY c.tenant_id, c.person_id, c.id LIMIT %(batch)s
""",
}

# The vectors of one batch, written only where the target is still live with the same text: a
# deletion or erasure applied meanwhile wins (FOR SHARE waits for it and re-checks the row).
_UPSERT = """
INSERT INTO {lane}(tenant_id, person_id, target_kind, target_id, input_hash, embedding)
SELECT t.tenant_id, t.person_id, %(kind)s, t.id, x.input_hash, x.embedding::vector
  FROM unnest(%(t)s::text[], %(p)s::text[], %(id)s::text[], %(hash)s::text[], %(vec)s::text[])
       AS x(tenant_id, person_id, id, input_hash, embedding)
  JOIN {table} t ON t.tenant_id = x.tenant_id AND t.person_id = x.person_id AND t.id = x.id
 WHERE {live} AND {hash} = x.input_hash
   FOR SHARE OF t
ON CONFLICT (tenant_id, person_id, target_kind, target_id) DO UPDATE SET
  input_hash = excluded.input_hash, embedding = excluded.embedding
"""

_KINDS = {
    # kind: (table, alias, liveness, projection text)
    "source": ("sources", "s", "{a}.deleted_at IS NULL", "{a}.content"),
    "claim": (
        "claims",
        "c",
        "{a}.status = 'accepted' AND {a}.valid_until IS NULL AND {a}.recorded_until IS NULL",
        "{a}.subject || ' ' || {a}.predicate || ' ' || {a}.value",
    ),
}


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
    stats = RebuildStats(model, version)
    size = batch_size or int(getattr(embedder, "batch_size", 32))
    for kind, (table_name, alias, live, text) in _KINDS.items():
        work = sql.SQL(_WORK[kind]).format(
            lane=lane,
            text=sql.SQL(text.format(a=alias)),
            hash=sql.SQL(_HASH.format(text=text.format(a=alias))),
        )
        upsert = sql.SQL(_UPSERT).format(
            lane=lane,
            table=sql.Identifier(SCHEMA, table_name),
            live=sql.SQL(live.format(a="t")),
            hash=sql.SQL(_HASH.format(text=text.format(a="t"))),
        )
        last = ("", "", "")
        while True:
            rows = conn.execute(
                work, {"t": last[0], "p": last[1], "id": last[2], "batch": size}
            ).fetchall()
            if not rows:
                break
            last = (rows[-1][0], rows[-1][1], rows[-1][2])
            vectors = embedder.embed_batch([row[3] for row in rows])
            params = {
                "kind": kind,
                "t": [row[0] for row in rows],
                "p": [row[1] for row in rows],
                "id": [row[2] for row in rows],
                "hash": [row[4] for row in rows],
                "vec": ["[" + ",".join(repr(float(x)) for x in v) + "]" for v in vectors],
            }
            with conn.transaction():
                conn.execute(upsert, params)
            stats.embedded += len(rows)
            stats.batches += 1
            if progress is not None:
                progress(stats)
    if stats.embedded:
        analyze_changed(conn)  # a filled lane plans like an empty one until analyzed
    return stats
