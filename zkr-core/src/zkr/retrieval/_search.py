"""``search`` and ``get``: scoped, bounded, cited recall (contract §5).

A search builds a lexical list (:mod:`zkr.retrieval._lexical`), optionally a dense list
(:mod:`zkr.embeddings.dense`,
imported only when a query embedding is given, so a lexical search never loads numpy), fuses them
by integer reciprocal rank (:mod:`zkr.retrieval._fusion`) and materializes the best targets as
cited items
(:mod:`zkr.retrieval._materialize`). Everything runs in one read transaction, so the lists and the
items come
from the same snapshot.
"""

from __future__ import annotations

import sqlite3

from zkr.enums import Ranking, bounded_limit
from zkr.errors import NotFound
from zkr.retrieval._fusion import Target, fuse
from zkr.retrieval._lexical import lexical_ranking
from zkr.retrieval._materialize import materialize, materialize_all
from zkr.store.budget import search_budget
from zkr.store.validation import require_scope, require_text

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr import models as m
    from zkr.store.database import Database

__all__ = ["NO_MATCH_GAP", "get", "search"]

#: The pack's gap when nothing was found.
NO_MATCH_GAP = "no cited memory matched"
#: Relevance of an item fetched by ``get``.
FULL_RELEVANCE = 10_000
#: Each ranked list may bring this many candidates per requested item.
CANDIDATES_PER_ITEM = 4


def search(db: Database, request: m.SearchRequest) -> m.RetrievalPack:
    """Run one search (contract §5.1).

    A one-shot process runs this on light classes (:mod:`zkr.fastpath`): the same code, the same
    answer, without importing pydantic.

    :raises InvalidRequest: blank scope or query; a refused query embedding (dense path only).
    :raises NotFound: a fused target could not be materialized (only on inconsistent data).
    """
    require_scope(request.tenant_id, request.person_id)
    require_text(request.query, "query")
    if request.ranking == Ranking.recall:
        from zkr.retrieval._recall import recall_search

        return recall_search(db, request)
    return _contract_search(db, request)


def _contract_search(db: Database, request: m.SearchRequest) -> m.RetrievalPack:
    """zkr 0.2.3's ranking: the contract's lexical list, fused with a dense one when asked."""
    from zkr import models as m

    limit = bounded_limit(request.limit)
    candidate_limit = CANDIDATES_PER_ITEM * limit
    tenant_id, person_id, as_of = request.tenant_id, request.person_id, request.as_of
    # With as_of the embedding is ignored entirely (not even validated): vectors describe now.
    hybrid = request.query_embedding is not None and as_of is None
    # Inside a caller's write transaction the dense path must not cache what it sees.
    nested = db.conn.in_transaction
    with db.atomic(write=False) as conn, search_budget(conn, db.search_budget_seconds):
        # Alone, the lexical list fuses to its own first `limit` targets in order (one list's
        # relevance falls strictly with the position for every position up to the 400 a list can
        # have; tests/core/test_fusion.py checks it), so only those are built. With a dense list
        # any lexical candidate may still reach the top.
        lexical = lexical_ranking(
            conn,
            tenant_id,
            person_id,
            request.query,
            as_of,
            candidate_limit,
            wanted=None if hybrid else limit,
        )
        if hybrid:
            assert request.query_embedding is not None
            from zkr.embeddings.dense import DenseScan, dense_ranks
            from zkr.retrieval._hybrid import fuse_hybrid

            # Ranked lazily: the fusion reads the dense list's head and the dense positions of
            # the lexical candidates, never the whole list (every vector target of the scope).
            dense = dense_ranks(
                DenseScan(
                    db,
                    conn,
                    tenant_id,
                    person_id,
                    request.query_embedding,
                    text=request.query,
                    cache=not nested,
                )
            )
            fused = fuse_hybrid(lexical, dense, limit)
        else:
            fused = fuse([lexical], limit)
        items = materialize_all(conn, fused, tenant_id, person_id, as_of)
    return m.RetrievalPack(query=request.query, items=items, gaps=[] if items else [NO_MATCH_GAP])


def get(db: Database, request: m.GetRequest) -> m.RetrievalItem:
    """One live source, evidence or current claim as a cited item (contract §5.6).

    A source is returned as itself even when it supports a claim. With ``as_of`` (an addition):
    a claim visible then, cited by evidence that existed then (as search ``as_of`` materialises
    it), or a source or evidence already captured and recorded then.

    :raises InvalidRequest: blank scope.
    :raises NotFound: the target is not live in this scope.
    """
    require_scope(request.tenant_id, request.person_id)
    target: Target = (request.target.kind.value, request.target.id)
    as_of = request.as_of
    with db.atomic(write=False) as conn:
        if as_of is not None and target[0] != "claim":
            _require_existing_then(conn, target, request.tenant_id, request.person_id, as_of)
        return materialize(
            conn, target, FULL_RELEVANCE, request.tenant_id, request.person_id, as_of
        )


# A capture, or a quote of one, exists at (V, R) once captured by V and recorded by R (as search
# ``as_of`` reads them, contract §5.3). A capture has one evidence, recorded with it, so the
# evidence it cites is then the same.
_SOURCE_THEN = """
SELECT 1 FROM sources WHERE id = :id AND tenant_id = :tenant AND person_id = :person
  AND deleted_at IS NULL AND captured_at <= :valid_at AND recorded_at <= :recorded_at
"""
_EVIDENCE_THEN = """
SELECT 1 FROM evidence AS e JOIN sources AS s ON s.id = e.source_id
 AND s.tenant_id = e.tenant_id AND s.person_id = e.person_id AND s.deleted_at IS NULL
 AND s.captured_at <= :valid_at AND s.recorded_at <= :recorded_at
WHERE e.id = :id AND e.tenant_id = :tenant AND e.person_id = :person AND e.deleted_at IS NULL
  AND e.recorded_at <= :recorded_at
"""


def _require_existing_then(
    conn: sqlite3.Connection, target: Target, tenant_id: str, person_id: str, as_of: m.AsOf
) -> None:
    """:raises NotFound: the capture or quote did not exist yet at *as_of*."""
    params = {
        "id": target[1],
        "tenant": tenant_id,
        "person": person_id,
        "valid_at": as_of.valid_at,
        "recorded_at": as_of.recorded_at,
    }
    sql = _SOURCE_THEN if target[0] == "source" else _EVIDENCE_THEN
    if conn.execute(sql, params).fetchone() is None:
        raise NotFound()
