"""The recall ranking (``"ranking": "recall"``): built to find the memory, not to reproduce 0.2.3.

Same pack as the contract ranking — scoped, bounded, cited, claims replace their captures, ``as_of``
honoured, deleted content never returned (:mod:`zkr.retrieval._materialize` builds the items) — from
different lists:

* **lexical**: the question's words without stop words (:data:`STOP_WORDS`), OR-ed, matched against
  :mod:`zkr.store.recall_index` (Porter-stemmed; capture text, claim statements, neighbours' text at
  :data:`CONTEXT_WEIGHT`) and ranked by BM25 times the share of the query's words a row holds
  (:data:`COVERAGE_FLOOR`; not under ``as_of``), then source id; without ``query_embedding``, a
  question that names a date ranks the lexical head with the fusion's date term as well;
* **claims first**: the statement column weighs :data:`STATEMENT_WEIGHT`, the query also
  searches statements for the everyday words of the predicates it names
  (:mod:`zkr.retrieval._claim_words`), a capture whose claims were corrected stands for their
  current versions, a claim whose statement matches gains the fusion's claim term, and a memory
  that matches only through its neighbours ranks after every one that matches on its own
  (``docs/recall.md``, issue 24);
* **dense** (with ``query_embedding``): the lane's ranking with **one entry per memory** — an
  evidence row and its source carry the same text, so the evidence counts for its source; with
  ``as_of`` too (vectors are projections of sources: each row is mapped to what was visible
  then, :func:`recall_dense_as_of`; the contract ranking still ignores the embedding there);
* **score fusion** (:func:`zkr.retrieval.fusion.fuse_scores`), over the union of both lists' heads:
  the lexical bm25 as a share of the best, plus the dense z-score of the memory and of its
  timeline neighbours (live ones only), plus the best lexical
  score of its session and a lift when it was captured within a date the query names. On
  LoCoMo's development conversations (0-4, e5) it finds the cited turn in the top 10 for 87 % of
  questions against 82 % for the weighted reciprocal-rank fusion it replaced (``fuse_weighted``:
  kept, selectable with ``RecallTuning(fusion="rrf")``, and used by the PostgreSQL replica); the
  sweep is in ``docs/recall.md``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from zkr import models as m
from zkr.retrieval._fusion import Target
from zkr.retrieval._materialize import materialize_all
from zkr.retrieval._neighbours import MIN_SPREAD, anchor_times, neighbours
from zkr.retrieval._query_dates import query_date_spans
from zkr.retrieval._recall_dense import (
    dense_head,
    recall_dense,
    recall_dense_as_of,
    recall_dense_scan,
)
from zkr.retrieval._recall_lexical import recall_lexical
from zkr.retrieval._recall_query import PREFIX_FROM, STOP_WORDS, recall_match
from zkr.retrieval._recall_tuning import (
    CANDIDATES_PER_ITEM,
    CONTEXT_WEIGHT,
    DEFAULT_TUNING,
    MIN_CANDIDATES,
    RecallTuning,
    model_tuning,
)
from zkr.retrieval.fusion import DENSE_WEIGHT, LEXICAL_WEIGHT, RRF_K, fuse_scores, fuse_weighted
from zkr.retrieval.keyword_trust import HEAD, keyword_trust
from zkr.store.budget import search_budget

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.embeddings.dense import DenseRanks
    from zkr.store.database import Database

# The parameters and parts that hosts and benchmarks read from here (the PostgreSQL replica
# ranks with the same ones).
__all__ = [
    "CANDIDATES_PER_ITEM",
    "CONTEXT_WEIGHT",
    "DENSE_WEIGHT",
    "LEXICAL_WEIGHT",
    "MIN_CANDIDATES",
    "PREFIX_FROM",
    "RRF_K",
    "STOP_WORDS",
    "RecallTuning",
    "fuse_weighted",
    "recall_lexical",
    "recall_match",
    "recall_search",
]

_NO_MATCH_GAP = "no cited memory matched"


class _Lexical:
    """The lexical list and what :func:`recall_lexical` noted about its items while ranking them
    (each target's bm25 share and anchor, the targets matched only through their neighbours and
    those a claim states), which both fusions read."""

    __slots__ = ("context_only", "scored", "stated", "targets")

    def __init__(self) -> None:
        self.targets: list[Target] = []
        self.scored: dict[Target, tuple[float, str]] = {}
        self.context_only: set[Target] = set()
        self.stated: set[Target] = set()


def recall_search(
    db: Database, request: m.SearchRequest, tuning: RecallTuning = DEFAULT_TUNING
) -> m.RetrievalPack:
    """A search with the recall ranking (scope and query already checked by the caller)."""
    limit = m.bounded_limit(request.limit)
    candidates = max(CANDIDATES_PER_ITEM * limit, tuning.candidates)
    tenant_id, person_id, as_of = request.tenant_id, request.person_id, request.as_of
    # With as_of too: the dense lane's rows are then mapped to what was visible at that time.
    hybrid = request.query_embedding is not None
    if request.query_embedding is not None:
        # The fusion is calibrated per embedding model (zkr.retrieval._recall_tuning.MODEL_TUNING).
        tuning = model_tuning(request.query_embedding.model, tuning)
    # A lexical search whose query names a date ranks its candidates by score, with the date's lift.
    dated = () if hybrid or not tuning.date_weight else query_date_spans(request.query)
    nested = db.conn.in_transaction
    # reads_recall: the capture's recall rows that remember deferred are written first.
    with (
        db.atomic(write=False, reads_recall=True) as conn,
        search_budget(conn, db.search_budget_seconds),
    ):
        found = _Lexical()
        # The score fusion's dense scan runs on a worker while the lexical list is ranked.
        scan: Callable[[], DenseRanks] | None = None
        if hybrid and as_of is not None:
            past = recall_dense_as_of(db, conn, request, cache=not nested)
            scan = lambda: past  # noqa: E731 - the same shape as a started scan
        elif hybrid and tuning.fusion != "rrf":
            scan = recall_dense_scan(db, conn, request, cache=not nested)
        found.targets = recall_lexical(
            conn,
            tenant_id,
            person_id,
            request.query,
            as_of,
            candidates if hybrid or dated else limit,
            tuning,
            found.scored,
            found.context_only,
            found.stated,
        )
        lists: list[tuple[Sequence[Target], float]] = [(found.targets, tuning.lexical_weight)]
        if not hybrid:
            fused = _fuse_lexical(conn, request, found, dated, tuning)
        elif tuning.fusion == "rrf":
            dense = (
                recall_dense(db, conn, request, candidates, cache=not nested)
                if scan is None
                else dense_head(conn, scan(), candidates)
            )
            lists.append((dense, tuning.dense_weight))
            fused = fuse_weighted(
                lists, limit, k=tuning.rrf_k, impute_missing=tuning.impute_missing
            )
        else:
            assert scan is not None
            ranks = scan()
            fused = _fuse_hybrid_scores(
                conn, request, found, ranks, dense_head(conn, ranks, candidates), tuning
            )
        items = materialize_all(conn, fused, tenant_id, person_id, as_of)
    return m.RetrievalPack(query=request.query, items=items, gaps=[] if items else [_NO_MATCH_GAP])


def _fuse_lexical(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    found: _Lexical,
    spans: Sequence[tuple[int, int]],
    tuning: RecallTuning,
) -> list[tuple[Target, int]]:
    """The lexical list by ``bm25 / best bm25`` (so relevance is each item's share of the best
    item's score), plus the date term of the hybrid's fusion when captured within a date the
    query names ("what did I do on 8 May 2023?"); matches through neighbours only come last.

    The date lifts the lexical ranking alone as it lifts the hybrid one: on LoCoMo's development
    conversations (0-4, categories 1-4) recall lexical any@10 goes from 81.8 % to 83.2 %
    (held-out, untuned: 78.5 % to 79.6 %; ``docs/recall.md``). The session term is not used here.
    """
    anchors = [found.scored[target][1] for target in found.targets]
    return fuse_scores(
        [(target, *found.scored[target]) for target in found.targets],
        [],
        {},
        {},
        m.bounded_limit(request.limit),
        times=anchor_times(conn, request.tenant_id, request.person_id, anchors) if spans else {},
        date_spans=spans,
        lexical_share=1.0,
        session_weight=0.0,
        date_weight=tuning.date_weight,
        weak=found.context_only,
        stated=found.stated,
        claim_weight=tuning.claim_weight,
    )


def _texts(conn: sqlite3.Connection, source_ids: Sequence[str]) -> list[str]:
    """The texts of *source_ids*, in order (the keyword list's first hits)."""
    found = dict(
        conn.execute(
            "SELECT id, content FROM sources WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(source_ids)),),
        ).fetchall()
    )
    return [found[source_id] for source_id in source_ids if source_id in found]


def _fuse_hybrid_scores(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    found: _Lexical,
    ranks: DenseRanks,
    dense: Sequence[Target],
    tuning: RecallTuning,
) -> list[tuple[Target, int]]:
    """:func:`zkr.retrieval.fusion.fuse_scores` of the two heads: the dense z-scores of
    the candidates and of their timeline neighbours (fetched in one query), and the kind and
    capture time of each candidate's anchor (one more)."""
    z = _z_scores(ranks)
    lexical, scored = found.targets, found.scored
    candidates = [*lexical, *dense]
    dense_z = {target: value for target in candidates if (value := z(target)) is not None}
    anchors = [scored[t][1] for t in lexical] + [t[1] for t in dense if t[0] == "source"]
    neighbour_z = _neighbour_z(conn, request, anchors, z)
    times = (
        anchor_times(conn, request.tenant_id, request.person_id, anchors)
        if tuning.session_weight or tuning.date_weight
        else {}
    )
    # A candidate matches on its own when its own words match the query or its own vector is
    # closer to it than the scope's usual (z above OWN_Z); one that does neither is only lent
    # its place by its neighbours and ranks after every one that matches.
    direct = set(lexical) - found.context_only
    weak = {
        target
        for target in candidates
        if target not in direct and dense_z.get(target, tuning.own_z) <= tuning.own_z
    }
    return fuse_scores(
        [(target, *scored[target]) for target in lexical],
        dense,
        dense_z,
        neighbour_z,
        m.bounded_limit(request.limit),
        times=times,
        date_spans=query_date_spans(request.query) if tuning.date_weight else (),
        lexical_share=tuning.lexical_share,
        # Keywords in another language than the question's are noise (zkr.retrieval.keyword_trust).
        keyword_trust=keyword_trust(request.query, _texts(conn, anchors[:HEAD])),
        neighbour_weight=tuning.neighbour_weight,
        session_weight=tuning.session_weight,
        date_weight=tuning.date_weight,
        weak=weak,
        stated=found.stated,
        claim_weight=tuning.claim_weight,
    )


def _z_scores(ranks: DenseRanks) -> Callable[[Target], float | None]:
    """A target's dense score as a z-score over the scope's lane (``None``: no vector)."""
    mean = float(ranks.best.mean()) if len(ranks) else 0.0
    # Scores that vary by less than MIN_SPREAD across the scope say nothing about the query:
    # the floor keeps float noise between them from becoming whole z-units.
    spread = max(float(ranks.best.std()) if len(ranks) else 0.0, MIN_SPREAD)

    def z(target: Target) -> float | None:
        score = ranks.score(target)
        return None if score is None else (score - mean) / spread

    return z


def _neighbour_z(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    anchors: Sequence[str],
    z: Callable[[Target], float | None],
) -> dict[str, float]:
    """The mean z-score of each anchor's live timeline neighbours that have a vector."""
    found: dict[str, float] = {}
    for source_id, around in neighbours(
        conn, request.tenant_id, request.person_id, anchors
    ).items():
        values = [value for n in around if (value := z(("source", n))) is not None]
        if values:
            found[source_id] = sum(values) / len(values)
    return found
