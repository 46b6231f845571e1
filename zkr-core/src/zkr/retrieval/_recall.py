"""The recall ranking (``"ranking": "recall"``): built to find the memory, not to reproduce 0.2.3.

Same pack as the contract ranking — scoped, bounded, cited, claims replace their captures, ``as_of``
honoured, deleted content never returned (:mod:`zkr.retrieval._materialize` builds the items) — from
different lists:

* **lexical**: the question's words without stop words (:data:`STOP_WORDS`), OR-ed, matched against
  :mod:`zkr.store.recall_index` (Porter-stemmed; capture text, claim statements, neighbours' text at
  :data:`CONTEXT_WEIGHT`) and ranked by BM25, then source id; without ``query_embedding``, a
  question that names a date ranks the lexical head with the fusion's date term as well;
* **dense** (with ``query_embedding``): the lane's ranking with **one entry per memory** — an
  evidence row and its source carry the same text, so the evidence counts for its source; with
  ``as_of`` too (vectors are projections of sources: each row is mapped to what was visible
  then, :func:`recall_dense_as_of`; the contract ranking still ignores the embedding there);
* **score fusion** (:mod:`zkr.retrieval._score_fusion`), over the union of both lists' heads:
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from zkr import models as m
from zkr.retrieval._bounds import scope_has_live_source, search_budget
from zkr.retrieval._fts_query import quote, token_terms
from zkr.retrieval._fusion import Target, target_key
from zkr.retrieval._lexical import _resolve
from zkr.retrieval._materialize import materialize_all, visible_claims
from zkr.retrieval._query_dates import query_date_spans
from zkr.retrieval._score_fusion import (
    DATE_WEIGHT,
    LEXICAL_SHARE,
    MIN_SPREAD,
    NEIGHBOUR_WEIGHT,
    SESSION_WEIGHT,
    anchor_times,
    fuse_scores,
    neighbours,
)

if TYPE_CHECKING:
    from zkr.embeddings.dense import DenseRanks
    from zkr.store.database import Database

__all__ = [
    "STOP_WORDS",
    "RecallTuning",
    "fuse_weighted",
    "recall_lexical",
    "recall_match",
    "recall_search",
]

#: English function and question words, dropped from a recall query. A generic list (not fitted to
#: any question); a query made only of them is searched as it is.
_STOP_WORDS = """
    a an the and or but of to in on at for with by from about as into onto over under after
    before during up down out off again further once than then so such too very just also ever
    is are was were be been being am do does did done doing have has had having
    i you he she it we they me him her them my your his its our their mine yours hers ours theirs
    myself yourself himself herself itself ourselves themselves
    what when where which who whom whose why how that this these those there here
    would could should will can may might must shall not no nor yes if any some all each every
    other own same s t d ll m re ve
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

#: bm25 weight of the context column (neighbours' text); capture text and statements weigh 1.
CONTEXT_WEIGHT = 0.35
#: Alphabetic query words this long also match as prefixes (0: never).
PREFIX_FROM = 4
#: Weighted reciprocal-rank fusion (``fusion="rrf"``, and the replica's): constant and weights.
RRF_K = 10
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHT = 0.3
#: Each list brings this many candidates per requested item (at least :data:`MIN_CANDIDATES`).
CANDIDATES_PER_ITEM = 4
MIN_CANDIDATES = 50
_POINTS = 10_000
_SCALE = 1_000_000_000
_NO_MATCH_GAP = "no cited memory matched"


@dataclass(frozen=True)
class RecallTuning:
    """The recall ranking's parameters (the defaults are the shipped ranking)."""

    context_weight: float = CONTEXT_WEIGHT
    rrf_k: int = RRF_K
    lexical_weight: float = LEXICAL_WEIGHT
    dense_weight: float = DENSE_WEIGHT
    candidates: int = MIN_CANDIDATES
    impute_missing: bool = False
    prefix_from: int = PREFIX_FROM
    #: ``"scores"`` (the shipped hybrid: :mod:`zkr.retrieval._score_fusion`) or ``"rrf"`` (the
    #: weighted reciprocal-rank fusion it replaced, kept to compare).
    fusion: str = "scores"
    lexical_share: float = LEXICAL_SHARE
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    session_weight: float = SESSION_WEIGHT
    date_weight: float = DATE_WEIGHT


DEFAULT_TUNING = RecallTuning()


def recall_match(query: str, prefix_from: int = PREFIX_FROM) -> str | None:
    """The FTS5 expression of a recall query: its non-stop words, quoted, OR-ed; alphabetic words
    of at least *prefix_from* letters also match as prefixes (0: never).

    ``None`` when the query has no word at all (nothing can match).
    """
    terms = token_terms(query)
    if not terms:
        return None
    kept = [term for term in terms if term.lower() not in STOP_WORDS] or terms
    return " OR ".join(
        quote(term) + ("*" if prefix_from and len(term) >= prefix_from and term.isalpha() else "")
        for term in kept
    )


_PAGE = """
SELECT rowid, bm25(recall_fts, 1.0, 1.0, :context) AS score
FROM recall_fts WHERE recall_fts MATCH :match
ORDER BY score LIMIT :limit
"""

_SCOPED = """
SELECT s.id, bm25(recall_fts, 1.0, 1.0, :context) AS score
FROM recall_fts CROSS JOIN sources AS s ON s.rowid = recall_fts.rowid
WHERE recall_fts MATCH :match AND s.tenant_id = :tenant AND s.person_id = :person
  AND s.deleted_at IS NULL
ORDER BY score, s.id LIMIT :limit
"""

_LOCATE = "SELECT rowid, id, tenant_id, person_id, deleted_at FROM sources WHERE rowid IN ({marks})"


def _scored_sources(
    conn: sqlite3.Connection,
    match: str,
    tenant_id: str,
    person_id: str,
    rows: int,
    context_weight: float,
    scores: dict[str, float] | None = None,
) -> tuple[list[str], bool]:
    """The first live sources of the scope by (bm25, id), at least *rows* of them when that many
    exist; and whether more may exist after them.

    The first try ranks the whole index (bm25 only, no column read: FTS5's plain top-N) and keeps
    the scope's rows; when the scope holds too few of them, the scoped join ranks only the scope.
    Every settled source of the page is returned, not only the first *rows*: they are the next
    sources of the same order, and a caller whose sources resolve to fewer targets than it wants
    (a superseded claim's capture, claims shared by several captures) uses them instead of
    ranking every match again. *scores*, when given, receives each returned source's bm25 score
    (FTS5's: lower is better).
    """
    params = {"match": match, "context": context_weight, "tenant": tenant_id, "person": person_id}
    page_size = max(64, 4 * rows)
    page = conn.execute(_PAGE, {**params, "limit": page_size}).fetchall()
    complete = len(page) < page_size
    if page:
        # Rows tied with the page's last score may continue past it: only better ones are final.
        boundary = page[-1][1]
        settled = page if complete else [row for row in page if row[1] < boundary]
        marks = ", ".join("?" * len(settled))
        located = (
            {
                rowid: (source_id, tenant, person, deleted)
                for rowid, source_id, tenant, person, deleted in conn.execute(
                    _LOCATE.format(marks=marks), [rowid for rowid, _ in settled]
                )
            }
            if settled
            else {}
        )
        found: list[tuple[float, str]] = []
        for rowid, score in settled:
            hit = located.get(rowid)
            if hit is not None and hit[1] == tenant_id and hit[2] == person_id and hit[3] is None:
                found.append((score, hit[0]))
        if complete or len(found) >= rows:
            found.sort()
            if scores is not None:
                scores.update((source_id, score) for score, source_id in found)
            return [source_id for _, source_id in found], not complete
    else:
        return [], False
    ranked = conn.execute(_SCOPED, {**params, "limit": rows + 1}).fetchall()
    if scores is not None:
        scores.update(ranked[:rows])
    return [source_id for source_id, _ in ranked[:rows]], len(ranked) > rows


_SUPPORTS = "'\"supports\"'"
# Captures (of *ids*) whose live evidence supports a claim recorded after R: their statement
# column holds words nobody had said at R.
_LATER_STATEMENTS = f"""
SELECT DISTINCT e.source_id FROM evidence AS e
CROSS JOIN claim_evidence AS ce
  ON ce.evidence_id = e.id AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id
 AND ce.relation = {_SUPPORTS}
CROSS JOIN claims AS c
  ON c.id = ce.claim_id AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id
WHERE e.tenant_id = :tenant AND e.person_id = :person AND e.deleted_at IS NULL
  AND e.source_id IN (SELECT value FROM json_each(:ids))
  AND c.status != 'retracted' AND c.recorded_from > :recorded_at
"""
# Those captures' rows as they read at R: their own text and the statements of the claims their
# live evidence supported then (as recall_index builds a row, without the later claims).
_ROWS_THEN = f"""
SELECT s.id, s.content, (
  SELECT group_concat(c.subject || ' ' || replace(c.predicate, '_', ' ') || ' ' || c.value, ' ')
  FROM evidence AS e
  CROSS JOIN claim_evidence AS ce
    ON ce.evidence_id = e.id AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id
   AND ce.relation = {_SUPPORTS}
  CROSS JOIN claims AS c
    ON c.id = ce.claim_id AND c.tenant_id = e.tenant_id AND c.person_id = e.person_id
  WHERE e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
    AND e.deleted_at IS NULL AND c.status != 'retracted' AND c.recorded_from <= :recorded_at)
FROM sources AS s WHERE s.id IN (SELECT value FROM json_each(:ids))
"""
# A scratch index with the recall index's tokenizer, private to the connection (temp schema).
_SCRATCH = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_then"
    " USING fts5(source_id UNINDEXED, content, statement, tokenize='porter unicode61')"
)


def _known_then(
    conn: sqlite3.Connection, sources: list[str], match: str, params: dict[str, object]
) -> list[str]:
    """*sources* without those that *match* only through the statement of a claim recorded
    after R: such a capture is matched again against its row as it read at R."""
    if not sources:
        return sources
    later = sorted(
        row[0] for row in conn.execute(_LATER_STATEMENTS, {**params, "ids": json.dumps(sources)})
    )
    if not later:
        return sources
    conn.execute(_SCRATCH)
    try:
        conn.executemany(
            "INSERT INTO temp.recall_then(source_id, content, statement) VALUES (?, ?, ?)",
            conn.execute(_ROWS_THEN, {**params, "ids": json.dumps(later)}).fetchall(),
        )
        matched = {
            row[0]
            for row in conn.execute(
                "SELECT source_id FROM temp.recall_then WHERE recall_then MATCH ?", (match,)
            )
        }
    finally:
        conn.execute("DELETE FROM temp.recall_then")
    return [s for s in sources if s not in later or s in matched]


def recall_lexical(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: str,
    as_of: m.AsOf | None,
    wanted: int,
    tuning: RecallTuning = DEFAULT_TUNING,
    scored: dict[Target, tuple[float, str]] | None = None,
) -> list[Target]:
    """The recall lexical list: up to *wanted* distinct targets, best first.

    *scored*, when given, receives each target's ``(-bm25, the source it was found through)``
    (a claim scores what its capture's row scored).
    """
    # The scope first: without a live source nothing can match, and a 1 MiB query is not even
    # split into words.
    if wanted <= 0 or not scope_has_live_source(conn, tenant_id, person_id):
        return []
    match = recall_match(query, tuning.prefix_from)
    if match is None:
        return []
    if as_of is not None:
        # A capture's context column describes the timeline now (neighbours recorded later), and
        # its statement column may hold claims recorded after R (linked later). Matched then, a
        # word said only after R would find a capture as of R (knowledge from the future; issue
        # 24): context is left out, and a capture with such a claim is matched again without it.
        match = f"{{content statement}} : ({match})"
    params: dict[str, object] = {"tenant": tenant_id, "person": person_id}
    if as_of is not None:
        params["valid_at"] = as_of.valid_at
        params["recorded_at"] = as_of.recorded_at
    rows = wanted
    while True:
        bm25: dict[str, float] | None = {} if scored is not None else None
        sources, more = _scored_sources(
            conn, match, tenant_id, person_id, rows, tuning.context_weight, bm25
        )
        if as_of is not None:
            sources = _known_then(conn, sources, match, params)
        ranking: list[Target] = []
        seen: set[Target] = set()
        # Resolve the first *rows* sources, then (only when they fell short) the rest in blocks.
        start, block = 0, rows
        while start < len(sources) and len(ranking) < wanted:
            chunk = sources[start : start + block]
            start, block = start + len(chunk), block * 4
            resolved = _resolve(conn, chunk, params, as_of is not None)
            for source_id in chunk:
                claims = sorted(
                    set(resolved.get(source_id, [])),
                    key=lambda claim: (claim is not None, claim or ""),
                )
                for claim_id in claims:
                    target = ("source", source_id) if claim_id is None else ("claim", claim_id)
                    if target not in seen:
                        seen.add(target)
                        ranking.append(target)
                        if scored is not None and bm25 is not None:
                            scored[target] = (-bm25[source_id], source_id)
        if len(ranking) >= wanted or not more:
            return ranking[:wanted]
        rows *= 4  # some sources resolved to nothing (a superseded claim's capture): read deeper


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


_Scanned = TypeVar("_Scanned")


def _for_request(
    scan: Callable[..., _Scanned], db: Database, conn: sqlite3.Connection,
    request: m.SearchRequest, cache: bool,
) -> _Scanned:  # fmt: skip
    """*scan* (:func:`~zkr.embeddings.dense.dense_ranks` or its started form) for *request*."""
    assert request.query_embedding is not None
    return scan(
        db,
        conn,
        request.tenant_id,
        request.person_id,
        request.query_embedding,
        text=request.query,
        cache=cache,
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
    rows = row_scores(
        db,
        conn,
        request.tenant_id,
        request.person_id,
        request.query_embedding,
        text=request.query,
        cache=cache,
    )
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


def fuse_weighted(
    lists: Sequence[tuple[Sequence[Target], float]],
    limit: int,
    *,
    k: int = RRF_K,
    impute_missing: bool = False,
) -> list[tuple[Target, int]]:
    """Weighted reciprocal-rank fusion of ``(ranked targets, weight)`` lists; the best *limit*
    targets with relevance in basis points of the best score.

    Integer arithmetic (weights in parts per million), ties by target order, as the contract's
    fusion. With *impute_missing*, a target missing from a list scores there as the position just
    past that list's end.
    """
    scores: dict[Target, int] = {}
    for ranking, _ in lists:
        for target in ranking:
            scores.setdefault(target, 0)
    for ranking, weight in lists:
        parts = round(weight * 1_000_000)
        positions: dict[Target, int] = {}
        for position, target in enumerate(ranking):
            positions.setdefault(target, position)
        missing = parts * (_SCALE // 1_000_000) // (k + 1 + len(ranking)) if impute_missing else 0
        for target in scores:
            found = positions.get(target)
            if found is None:
                scores[target] += missing
            else:
                scores[target] += parts * (_SCALE // 1_000_000) // (k + 1 + found)
    if not scores:
        return []
    best = max(scores.values())
    ranked = sorted(
        ((target, score * _POINTS // best) for target, score in scores.items()),
        key=lambda pair: (-pair[1], target_key(pair[0])),
    )
    return ranked[:limit]


def recall_search(
    db: Database, request: m.SearchRequest, tuning: RecallTuning = DEFAULT_TUNING
) -> m.RetrievalPack:
    """A search with the recall ranking (scope and query already checked by the caller)."""
    limit = m.bounded_limit(request.limit)
    candidates = max(CANDIDATES_PER_ITEM * limit, tuning.candidates)
    tenant_id, person_id, as_of = request.tenant_id, request.person_id, request.as_of
    # With as_of too: the dense lane's rows are then mapped to what was visible at that time.
    hybrid = request.query_embedding is not None
    # A lexical search whose query names a date ranks its candidates by score, with the date's lift.
    dated = () if hybrid or not tuning.date_weight else query_date_spans(request.query)
    nested = db.conn.in_transaction
    with db.atomic(write=False) as conn, search_budget(conn, db.search_budget_seconds):
        scored: dict[Target, tuple[float, str]] = {}
        # The score fusion's dense scan runs on a worker while the lexical list is ranked.
        scan: Callable[[], DenseRanks] | None = None
        if hybrid and as_of is not None:
            past = recall_dense_as_of(db, conn, request, cache=not nested)
            scan = lambda: past  # noqa: E731 - the same shape as a started scan
        elif hybrid and tuning.fusion != "rrf":
            scan = recall_dense_scan(db, conn, request, cache=not nested)
        lexical = recall_lexical(
            conn,
            tenant_id,
            person_id,
            request.query,
            as_of,
            candidates if hybrid or dated else limit,
            tuning,
            **({"scored": scored} if hybrid or dated else {}),
        )
        lists: list[tuple[Sequence[Target], float]] = [(lexical, tuning.lexical_weight)]
        if dated:
            fused = _fuse_dated(conn, request, lexical, scored, dated, tuning)
        elif not hybrid:
            fused = fuse_weighted(lists, limit, k=tuning.rrf_k)
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
                conn, request, lexical, scored, ranks, dense_head(conn, ranks, candidates), tuning
            )
        items = materialize_all(conn, fused, tenant_id, person_id, as_of)
    return m.RetrievalPack(query=request.query, items=items, gaps=[] if items else [_NO_MATCH_GAP])


def _fuse_dated(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    lexical: Sequence[Target],
    scored: dict[Target, tuple[float, str]],
    spans: Sequence[tuple[int, int]],
    tuning: RecallTuning,
) -> list[tuple[Target, int]]:
    """The lexical candidates by ``bm25 / best bm25``, plus the date term of the hybrid's fusion
    when captured within a date the query names ("what did I do on 8 May 2023?").

    The date lifts the lexical ranking alone as it lifts the hybrid one: on LoCoMo's development
    conversations (0-4, categories 1-4) recall lexical any@10 goes from 81.8 % to 83.2 %
    (held-out, untuned: 78.5 % to 79.6 %; ``docs/recall.md``). The session term is not used here.
    """
    anchors = [scored[target][1] for target in lexical]
    return fuse_scores(
        [(target, *scored[target]) for target in lexical],
        [],
        {},
        {},
        m.bounded_limit(request.limit),
        times=anchor_times(conn, request.tenant_id, request.person_id, anchors),
        date_spans=spans,
        lexical_share=1.0,
        session_weight=0.0,
        date_weight=tuning.date_weight,
    )


def _fuse_hybrid_scores(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    lexical: Sequence[Target],
    scored: dict[Target, tuple[float, str]],
    ranks: DenseRanks,
    dense: Sequence[Target],
    tuning: RecallTuning,
) -> list[tuple[Target, int]]:
    """:func:`zkr.retrieval._score_fusion.fuse_scores` of the two heads: the dense z-scores of
    the candidates and of their timeline neighbours (fetched in one query), and the kind and
    capture time of each candidate's anchor (one more)."""
    mean = float(ranks.best.mean()) if len(ranks) else 0.0
    # Scores that vary by less than MIN_SPREAD across the scope say nothing about the query:
    # the floor keeps float noise between them from becoming whole z-units.
    spread = max(float(ranks.best.std()) if len(ranks) else 0.0, MIN_SPREAD)

    def z(target: Target) -> float | None:
        score = ranks.score(target)
        return None if score is None else (score - mean) / spread

    candidates = [*lexical, *dense]
    dense_z = {target: value for target in candidates if (value := z(target)) is not None}
    anchors = [scored[t][1] for t in lexical] + [t[1] for t in dense if t[0] == "source"]
    neighbour_z: dict[str, float] = {}
    for source_id, around in neighbours(
        conn, request.tenant_id, request.person_id, anchors
    ).items():
        values = [value for n in around if (value := z(("source", n))) is not None]
        if values:
            neighbour_z[source_id] = sum(values) / len(values)
    times = (
        anchor_times(conn, request.tenant_id, request.person_id, anchors)
        if tuning.session_weight or tuning.date_weight
        else {}
    )
    return fuse_scores(
        [(target, *scored[target]) for target in lexical],
        dense,
        dense_z,
        neighbour_z,
        m.bounded_limit(request.limit),
        times=times,
        date_spans=query_date_spans(request.query) if tuning.date_weight else (),
        lexical_share=tuning.lexical_share,
        neighbour_weight=tuning.neighbour_weight,
        session_weight=tuning.session_weight,
        date_weight=tuning.date_weight,
    )
