"""Dense retrieval: an exact float32 scan of one lane's vectors (contract §5.4).

``dense_ranking`` validates the query vector, finds the lane (§6.3), keeps only rows that still
count — valid, target live, revision and hash current — with one set-based query per lane, scores
them with one matrix product, maps each vector to retrieval targets (a source or evidence that
supports a current claim counts for the claim) keeping each target's best score, and ranks by score,
then target order (source < evidence < claim, then id).

The lane's matrix and its target mapping stay in ``db.caches`` between searches of a long-lived
process (``serve``, Hermes). ``MemoryDb.atomic`` drops every cache after a write commit; writes by
other connections or processes are noticed through ``PRAGMA data_version``, and raw statements on
this connection through ``total_changes``, so a cached matrix is never used after the data changed.

Arithmetic: vectors and query are float32 and the scores are computed in float32 with numpy (BLAS).
The reference sums left to right in float32; BLAS sums in blocks, so scores may differ from it in
the last bits and exact ties may break differently in rare cases. Rankings are otherwise the same.
"""

from __future__ import annotations

import operator
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zkr import models as m
from zkr.embeddings import (
    Config,
    Target,
    _checks,
    current_lane,
    input_hash,
)
from zkr.errors import EmbeddingError, UnknownPluginError
from zkr.validation import is_blank
from zkr.vectors import F32, row_vector, to_float32

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from zkr.db import MemoryDb

__all__ = ["DenseLane", "dense_ranking", "load_lane", "query_vector", "score_lane"]

_KIND_ORDER = {"source": 0, "evidence": 1, "claim": 2}
_CURRENT = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
_SUPPORTS = "'\"supports\"'"
# Euclidean scores are computed in row blocks so the difference matrix stays small.
_BLOCK_ROWS = 8192


@dataclass(frozen=True)
class DenseLane:
    """The rows of one lane that count, ready to score.

    ``rows`` are the stored targets in (kind, id) order, ``matrix`` their vectors (float32,
    C-contiguous), ``norms`` their float32 magnitudes. ``targets`` are the retrieval targets the
    rows map to, in target order; ``row_of``/``target_of`` list each (row -> target) mapping pair
    grouped by target, ``starts`` where each target's group begins.
    """

    config: Config | None
    rows: list[Target]
    matrix: NDArray[np.float32]
    norms: NDArray[np.float32]
    targets: list[Target]
    row_of: NDArray[np.intp]
    starts: NDArray[np.intp]
    stamp: tuple[int, int]


def _stamp(conn: sqlite3.Connection) -> tuple[int, int]:
    # A statement first, so a deferred read transaction has its snapshot before data_version.
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
    version: int = conn.execute("PRAGMA data_version").fetchone()[0]
    return version, conn.total_changes


def query_vector(query: m.QueryEmbedding, text: str | None = None) -> NDArray[np.float32]:
    """The validated float32 query vector (§5.4 step 1), embedding *text* when none is given.

    :raises EmbeddingError: blank model/version, empty or non-finite vector.
    :raises UnknownPluginError: no vector and no installed embedder for (model, version).
    """
    if is_blank(query.model):
        raise EmbeddingError("query embedding model must not be empty")
    if is_blank(query.version):
        raise EmbeddingError("query embedding version must not be empty")
    values: Any = query.vector
    if values is None:
        from zkr.plugins import get_embedder

        embedder = get_embedder(query.model, query.version)
        if text is None:
            raise UnknownPluginError("a query embedding without a vector needs the query text")
        try:
            values = next(iter(embedder.embed_batch([text])))
        except Exception as exc:  # an embedder is third-party code: report, don't crash
            raise EmbeddingError(f"embedder failed: {exc}") from exc
    vector = to_float32(values)
    if vector.ndim != 1 or len(vector) == 0 or not bool(np.isfinite(vector).all()):
        raise EmbeddingError("query embedding vector must contain finite values")
    return vector


def dense_ranking(
    db: MemoryDb,
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: m.QueryEmbedding,
    *,
    text: str | None = None,
) -> list[tuple[Target, float]]:
    """The dense list of a search: ``[((kind, id), score), ...]``, best first, not truncated.

    *text* is the search query; it is embedded by the installed embedder of (model, version)
    when ``query.vector`` is omitted. Run it inside the search's read transaction.

    :raises EmbeddingError: the query is refused (§5.4) or cannot be scored against the lane.
    :raises UnknownPluginError: no vector was given and no embedder serves (model, version).
    """
    vector = query_vector(query, text)
    lane = load_lane(db, conn, tenant_id, person_id, query.model, query.version)
    scores = score_lane(lane, vector)
    if not lane.targets:
        return []
    best = np.maximum.reduceat(scores[lane.row_of], lane.starts)
    # Targets are already in target order, so a stable sort on -score breaks ties by it.
    order = np.argsort(-best, kind="stable")
    if len(order) == 1:
        return [(lane.targets[int(order[0])], float(best[order[0]]))]
    ranked = operator.itemgetter(*order.tolist())(lane.targets)
    return list(zip(ranked, best[order].tolist(), strict=True))


def score_lane(lane: DenseLane, vector: NDArray[np.float32]) -> NDArray[np.float32]:
    """One float32 score per counting row of *lane* (empty when the lane has no rows).

    :raises EmbeddingError: dimension mismatch, zero magnitude under cosine, non-finite score.
    """
    n = len(lane.rows)
    if n == 0 or lane.config is None:
        return np.zeros(0, dtype=np.float32)
    dimension, _normalization, distance = lane.config
    if len(vector) != dimension:
        raise EmbeddingError(
            f"query embedding dimension {len(vector)} does not match stored dimension {dimension}"
        )
    with np.errstate(all="ignore"):
        zero = np.zeros(n, dtype=bool)
        if distance == "dot":
            scores = lane.matrix @ vector
        elif distance == "cosine":
            q_norm = np.float32(np.sqrt(np.dot(vector, vector)))
            zero = (lane.norms == 0) | (q_norm == 0)
            scores = (lane.matrix @ vector) / (q_norm * lane.norms)
        else:
            scores = np.empty(n, dtype=np.float32)
            for start in range(0, n, _BLOCK_ROWS):
                diff = lane.matrix[start : start + _BLOCK_ROWS] - vector
                scores[start : start + _BLOCK_ROWS] = -np.sqrt(np.einsum("ij,ij->i", diff, diff))
        scores = scores.astype(np.float32, copy=False)
    bad = zero | ~np.isfinite(scores)
    if bool(bad.any()):
        first = int(np.argmax(bad))  # the reference stops at the first failing row in scan order
        if bool(zero[first]):
            raise EmbeddingError("cosine embeddings must have non-zero magnitude")
        raise EmbeddingError("embedding similarity is not finite")
    return scores


# ----------------------------------------------------------------------------------------------
# Loading a lane (cached)
# ----------------------------------------------------------------------------------------------


def load_lane(
    db: MemoryDb, conn: sqlite3.Connection, tenant_id: str, person_id: str, model: str, version: str
) -> DenseLane:
    """The counting rows of (scope, model, version) with their mapping, from cache when fresh."""
    stamp = _stamp(conn)
    key = f"dense:{tenant_id}\x00{person_id}\x00{model}\x00{version}"
    cached = db.caches.get(key)
    if isinstance(cached, DenseLane) and cached.stamp == stamp:
        return cached
    lane = _build_lane(conn, tenant_id, person_id, model, version, stamp)
    db.caches[key] = lane
    return lane


def _empty(config: Config | None, stamp: tuple[int, int]) -> DenseLane:
    dimension = config[0] if config is not None else 0
    none = np.zeros(0, dtype=np.intp)
    return DenseLane(
        config, [], np.zeros((0, dimension), F32), np.zeros(0, np.float32), [], none, none, stamp
    )


def _build_lane(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    stamp: tuple[int, int],
) -> DenseLane:
    config = current_lane(conn, tenant_id, person_id, model, version)
    if config is None:
        return _empty(None, stamp)
    rows, blobs = _counting_rows(conn, tenant_id, person_id, model, version, config)
    if not rows:
        return _empty(config, stamp)
    matrix = np.frombuffer(b"".join(blobs), dtype=F32).reshape(len(rows), config[0])
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix)).astype(np.float32)
    mapping = _map_targets(conn, tenant_id, person_id, model, version, config, rows)
    targets = sorted({t for mapped in mapping for t in mapped}, key=_target_order)
    position = {t: i for i, t in enumerate(targets)}
    pairs = sorted((position[t], row) for row, mapped in enumerate(mapping) for t in mapped)
    target_of = np.fromiter((p[0] for p in pairs), dtype=np.intp, count=len(pairs))
    row_of = np.fromiter((p[1] for p in pairs), dtype=np.intp, count=len(pairs))
    starts = np.flatnonzero(np.r_[True, target_of[1:] != target_of[:-1]]) if len(pairs) else row_of
    return DenseLane(config, rows, matrix, norms, targets, row_of, starts.astype(np.intp), stamp)


def _target_order(target: Target) -> tuple[int, str]:
    return _KIND_ORDER[target[0]], target[1]


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
  AND {live}
ORDER BY e.target_kind, e.target_id
"""


def _counting_rows(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    config: Config,
) -> tuple[list[Target], list[bytes]]:
    from zkr.embeddings import _live_at_revision
    from zkr.vectors import encode, stored_config

    sql = _ROWS_SQL.format(checks=_checks(conn), live=_live_at_revision("e"))
    rows: list[Target] = []
    blobs: list[bytes] = []
    cursor = conn.execute(sql, (tenant_id, person_id, model, version, config[0]))
    expected_bytes = config[0] * F32.itemsize
    on_lane: dict[tuple[Any, Any, Any], bool] = {}  # a lane has a handful of spellings: parse once
    for kind, target_id, dimension, stored_hash, norm, dist, vector, certified, text in cursor:
        spelling = (dimension, norm, dist)
        if spelling not in on_lane:
            on_lane[spelling] = stored_config(dimension, norm, dist) == config
        if not on_lane[spelling]:
            continue
        if certified:
            # Certified rows were validated on write and nothing changed since (triggers).
            if not isinstance(vector, bytes) or len(vector) != expected_bytes:
                continue
            blobs.append(vector)
        else:
            if text is None or stored_hash != input_hash(text):
                continue
            decoded = row_vector(dimension, norm, dist, vector)
            if decoded is None:
                continue
            blobs.append(encode(decoded))
        rows.append((kind, target_id))
    return rows, blobs


def _map_targets(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    config: Config,
    rows: list[Target],
) -> list[list[Target]]:
    """Each counting row's retrieval targets (§5.4 step 3), computed per kind in set queries."""
    lane = (tenant_id, person_id, model, version, config[0])
    lane_sql = (
        "e.tenant_id = ? AND e.person_id = ? AND e.model = ? AND e.version = ? AND e.dimension = ?"
    )
    # Evidence: live with a live source -> current supported claims; else nothing if it supports
    # any claim; else itself.
    evidence_live: set[str] = set()
    evidence_claims: dict[str, list[str]] = {}
    evidence_supports: set[str] = set()
    for evidence_id, source_live, claim_id, current in conn.execute(
        "SELECT e.target_id, s.id IS NOT NULL, c.id, c.id IS NOT NULL AND "
        + _CURRENT
        + " FROM embeddings e JOIN evidence v ON v.id = e.target_id AND v.tenant_id = e.tenant_id"
        " AND v.person_id = e.person_id AND v.deleted_at IS NULL"
        " LEFT JOIN sources s ON s.id = v.source_id AND s.tenant_id = v.tenant_id"
        " AND s.person_id = v.person_id AND s.deleted_at IS NULL"
        " LEFT JOIN claim_evidence ce ON ce.evidence_id = v.id AND ce.tenant_id = v.tenant_id"
        f" AND ce.person_id = v.person_id AND ce.relation = {_SUPPORTS}"
        " LEFT JOIN claims c ON c.id = ce.claim_id AND c.tenant_id = ce.tenant_id"
        " AND c.person_id = ce.person_id"
        f" WHERE {lane_sql} AND e.target_kind = 'evidence'",
        lane,
    ):
        if source_live:
            evidence_live.add(evidence_id)
        if claim_id is not None:
            evidence_supports.add(evidence_id)
            if current:
                evidence_claims.setdefault(evidence_id, []).append(claim_id)
    # Sources: live -> current claims supported by live evidence; else nothing if any evidence
    # (live or not) supports any claim, or if it has no evidence; else itself.
    source_claims: dict[str, set[str]] = {}
    source_supports: set[str] = set()
    source_has_evidence: set[str] = set()
    for source_id, evidence_id, evidence_live_flag, claim_id, current in conn.execute(
        "SELECT e.target_id, v.id, v.deleted_at IS NULL, c.id, c.id IS NOT NULL AND "
        + _CURRENT
        + " FROM embeddings e JOIN evidence v ON v.source_id = e.target_id"
        " AND v.tenant_id = e.tenant_id AND v.person_id = e.person_id"
        " LEFT JOIN claim_evidence ce ON ce.evidence_id = v.id AND ce.tenant_id = v.tenant_id"
        f" AND ce.person_id = v.person_id AND ce.relation = {_SUPPORTS}"
        " LEFT JOIN claims c ON c.id = ce.claim_id AND c.tenant_id = ce.tenant_id"
        " AND c.person_id = ce.person_id"
        f" WHERE {lane_sql} AND e.target_kind = 'source'",
        lane,
    ):
        source_has_evidence.add(source_id)
        if evidence_id is None:
            continue
        if claim_id is not None:
            source_supports.add(source_id)
            if current and evidence_live_flag:
                source_claims.setdefault(source_id, set()).add(claim_id)
    mapping: list[list[Target]] = []
    for kind, target_id in rows:
        if kind == "claim":
            mapping.append([("claim", target_id)])  # counting rows of claims are current claims
        elif kind == "evidence":
            if target_id not in evidence_live:
                mapping.append([])
            elif target_id in evidence_claims:
                mapping.append([("claim", c) for c in sorted(evidence_claims[target_id])])
            elif target_id in evidence_supports:
                mapping.append([])
            else:
                mapping.append([("evidence", target_id)])
        else:
            if target_id in source_claims:
                mapping.append([("claim", c) for c in sorted(source_claims[target_id])])
            elif target_id in source_supports or target_id not in source_has_evidence:
                mapping.append([])
            else:
                mapping.append([("source", target_id)])
    return mapping
