"""The recall ranking's dense list: the lane's ranking with one entry per memory (an evidence
counts for its source), and as of a past time each row mapped to what was visible then."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from zkr.retrieval._fusion import Target, target_key
from zkr.retrieval._lexical import _resolve
from zkr.retrieval._materialize import visible_claims

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from zkr import models as m
    from zkr.embeddings.dense import DenseRanks
    from zkr.store.database import Database

    _Scanned = TypeVar("_Scanned")

__all__ = [
    "dense_head",
    "recall_dense",
    "recall_dense_as_of",
    "recall_dense_ranks",
    "recall_dense_scan",
]


def _one_per_memory(conn: sqlite3.Connection, head: Sequence[Target]) -> list[Target]:
    """The dense head with each evidence counted as its source, first (best) entry kept."""
    source_of = _sources_of(conn, [target_id for kind, target_id in head if kind == "evidence"])
    memories: list[Target] = []
    seen: set[Target] = set()
    for kind, target_id in head:
        target = ("source", source_of[target_id]) if kind == "evidence" else (kind, target_id)
        if target not in seen:
            seen.add(target)
            memories.append(target)
    return memories


def recall_dense(
    db: Database,
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    wanted: int,
    *,
    cache: bool,
) -> list[Target]:
    """The dense list, one entry per memory, up to *wanted* entries, best first."""
    return dense_head(conn, recall_dense_ranks(db, conn, request, cache=cache), wanted)


def recall_dense_ranks(
    db: Database, conn: sqlite3.Connection, request: m.SearchRequest, *, cache: bool
) -> DenseRanks:
    """The search's dense ranking (every vector target of the scope, lazily ranked)."""
    from zkr.embeddings.dense import dense_ranks

    return _for_request(dense_ranks, db, conn, request, cache)


def recall_dense_scan(
    db: Database, conn: sqlite3.Connection, request: m.SearchRequest, *, cache: bool
) -> Callable[[], DenseRanks]:
    """:func:`recall_dense_ranks` started on the dense-scan worker; call the result to wait."""
    from zkr.embeddings.dense import dense_ranks_started

    return _for_request(dense_ranks_started, db, conn, request, cache)


def _for_request(
    scan: Callable[..., _Scanned], db: Database, conn: sqlite3.Connection,
    request: m.SearchRequest, cache: bool,
) -> _Scanned:  # fmt: skip
    """*scan* (:func:`~zkr.embeddings.dense.dense_ranks` or its started form) for *request*."""
    from zkr.embeddings.dense import DenseScan

    assert request.query_embedding is not None
    return scan(
        DenseScan(
            db,
            conn,
            request.tenant_id,
            request.person_id,
            request.query_embedding,
            text=request.query,
            cache=cache,
        )
    )


def recall_dense_as_of(
    db: Database, conn: sqlite3.Connection, request: m.SearchRequest, *, cache: bool
) -> DenseRanks:
    """The dense list of a search ``as_of`` (V, R): vectors are projections of sources, so each
    row is mapped to what was visible then, by the rules of the lexical lane (issue 24).

    A source's vector (an evidence's counts for its source, as in :func:`dense_head`) goes to the
    claims it supported that were visible at (V, R), or to the source itself when it supported
    none (``_resolve``: not yet captured or recorded at that time -> nothing). A claim's vector
    counts when the claim was visible then with a supporting evidence that existed. Each target
    keeps its best score.
    """
    import numpy as np

    from zkr.embeddings.dense import DenseRanks, row_scores

    assert request.query_embedding is not None and request.as_of is not None
    rows = _for_request(row_scores, db, conn, request, cache)
    params: dict[str, object] = {
        "tenant": request.tenant_id,
        "person": request.person_id,
        "valid_at": request.as_of.valid_at,
        "recorded_at": request.as_of.recorded_at,
    }
    by_source: dict[str, float] = {}
    claim_scores: dict[str, float] = {}
    source_of = _sources_of(conn, [row[0][1] for row in rows if row[0][0] == "evidence"])
    for (kind, target_id), score in rows:
        if kind == "claim":
            claim_scores[target_id] = max(score, claim_scores.get(target_id, score))
            continue
        source_id = target_id if kind == "source" else source_of.get(target_id)
        if source_id is not None:
            by_source[source_id] = max(score, by_source.get(source_id, score))
    best: dict[Target, float] = {}
    for source_id, claims in _resolve(conn, sorted(by_source), params, True).items():
        for claim_id in claims:
            target = ("source", source_id) if claim_id is None else ("claim", claim_id)
            best[target] = max(by_source[source_id], best.get(target, by_source[source_id]))
    visible = visible_claims(
        conn, sorted(claim_scores), request.tenant_id, request.person_id, request.as_of
    )
    for claim_id in visible:
        target = ("claim", claim_id)
        best[target] = max(claim_scores[claim_id], best.get(target, claim_scores[claim_id]))
    keys = sorted(best, key=target_key)
    return DenseRanks(np.asarray([best[k] for k in keys], dtype=np.float32), keys)


def _sources_of(conn: sqlite3.Connection, evidence_ids: Sequence[str]) -> dict[str, str]:
    """``evidence id -> source id``."""
    source_of: dict[str, str] = {}
    for start in range(0, len(evidence_ids), 500):
        chunk = evidence_ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        source_of.update(
            conn.execute(f"SELECT id, source_id FROM evidence WHERE id IN ({marks})", chunk)
        )
    return source_of


def dense_head(conn: sqlite3.Connection, ranks: DenseRanks, wanted: int) -> list[Target]:
    """The first *wanted* entries of *ranks*, one per memory."""
    depth = 2 * wanted
    while True:
        memories = _one_per_memory(conn, ranks.prefix(depth))
        if len(memories) >= wanted or depth >= len(ranks):
            return memories[:wanted]
        depth *= 2
