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
from zkr.retrieval._bounds import scope_has_live_source
from zkr.retrieval._claim_words import statement_words
from zkr.retrieval._fts_query import quote, token_terms
from zkr.retrieval._fusion import Target, target_key
from zkr.retrieval._lexical import _resolve
from zkr.retrieval._materialize import materialize_all, visible_claims
from zkr.retrieval._query_dates import query_date_spans
from zkr.retrieval._score_fusion import (
    CLAIM_WEIGHT,
    DATE_WEIGHT,
    LEXICAL_SHARE,
    MIN_SPREAD,
    NEIGHBOUR_WEIGHT,
    SESSION_WEIGHT,
    anchor_times,
    fuse_scores,
    neighbours,
)
from zkr.store.budget import search_budget

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
    other own same s t d ll m re ve now
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

#: bm25 weight of the context column (neighbours' text); capture text and statements weigh 1.
CONTEXT_WEIGHT = 0.35
#: bm25 weight of the statement column (claims read as words): a claim that says what is asked
#: ranks before a capture that only shares an incidental word with the question.
STATEMENT_WEIGHT = 2.0
#: A hybrid candidate whose own words do not match matches on its own when its dense z-score
#: (how far above the scope's usual similarity it is, in standard deviations) exceeds this.
OWN_Z = 0.0
#: A row's bm25 is multiplied by ``floor + (1 - floor) * share``, ``share`` being the share of the
#: query's words (each with the everyday predicate words it names) that the row holds: a memory
#: that holds several of the question's words outranks one that holds a single word strongly
#: (Lucene's classic "coord" factor, with a floor so that one rare word still counts). Chosen on
#: the everyday benchmark (0.4-0.6 alike there).
COVERAGE_FLOOR = 0.5
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
_SUPPORTS = "'\"supports\"'"


@dataclass(frozen=True)
class RecallTuning:
    """The recall ranking's parameters (the defaults are the shipped ranking)."""

    context_weight: float = CONTEXT_WEIGHT
    statement_weight: float = STATEMENT_WEIGHT
    own_z: float = OWN_Z
    claim_weight: float = CLAIM_WEIGHT
    #: 1.0: bm25 alone, whatever share of the query's words a row holds.
    coverage_floor: float = COVERAGE_FLOOR
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


def _kept_terms(query: str) -> list[str]:
    """The query's words without stop words (all of them when only stop words remain)."""
    terms = token_terms(query)
    return [term for term in terms if term.lower() not in STOP_WORDS] or terms


def _word_match(term: str, prefix_from: int) -> str:
    """One query word as FTS5: quoted, and as a prefix when alphabetic and long enough."""
    prefix = prefix_from and len(term) >= prefix_from and term.isalpha()
    return quote(term) + ("*" if prefix else "")


def recall_match(query: str, prefix_from: int = PREFIX_FROM) -> str | None:
    """The FTS5 expression of a recall query: its non-stop words, quoted, OR-ed; alphabetic words
    of at least *prefix_from* letters also match as prefixes (0: never); and the everyday words
    of the claim predicates they name, in the statement column only
    (:mod:`zkr.retrieval._claim_words`: "work" also finds ``me employer Globex``).

    ``None`` when the query has no word at all (nothing can match).
    """
    kept = _kept_terms(query)
    if not kept:
        return None
    words = [_word_match(term, prefix_from) for term in kept]
    words.extend(f"statement : {quote(word)}" for word in statement_words(kept))
    return " OR ".join(words)


def recall_concepts(query: str, prefix_from: int = PREFIX_FROM) -> list[str]:
    """One FTS5 expression per word of :func:`recall_match`: the word (in any column: a turn's
    neighbours' words count, as they do for its bm25), or the everyday predicate words it names
    in a statement."""
    concepts = []
    for term in _kept_terms(query):
        either = [
            _word_match(term, prefix_from),
            *(f"statement : {quote(word)}" for word in statement_words([term])),
        ]
        concepts.append(" OR ".join(either))
    return concepts


# The sources of :ids whose own words match one query word (the index's rowid is the source's).
_COVERS = """
SELECT s.id FROM sources AS s CROSS JOIN recall_fts ON recall_fts.rowid = s.rowid
WHERE s.id IN (SELECT value FROM json_each(:ids)) AND recall_fts MATCH :match
"""


def _coverage(
    conn: sqlite3.Connection, query: str, sources: Sequence[str], prefix_from: int
) -> dict[str, float]:
    """The share of the query's words (:func:`recall_concepts`) each source's row holds; empty
    when the query has fewer than two words (a match then holds all of it).

    bm25 sums its words' scores, so one rare word — or a predicate's several spellings, each
    counted — can outweigh a memory that holds every word asked: "where does Priya work?" was
    answered by the person's own employer claim above ``Priya works_at …``. One query per word,
    each reading only the given sources' rows."""
    concepts = recall_concepts(query, prefix_from)
    if len(concepts) < 2 or not sources:
        return {}
    ids = json.dumps(list(dict.fromkeys(sources)))
    held = dict.fromkeys(sources, 0)
    for concept in concepts:
        for (source_id,) in conn.execute(_COVERS, {"match": concept, "ids": ids}):
            held[source_id] += 1
    return {source_id: count / len(concepts) for source_id, count in held.items()}


# Each row's score with every column, whether it matches by its own words at all (the score
# without the context column: FTS5's bm25 of a row whose only hits carry weight 0 is 0) and
# whether its claims' statements match. A row that matches only through its neighbours' text
# ranks after every row that matches itself.
_PAGE = """
SELECT rowid, bm25(recall_fts, 1.0, :statement, :context) AS score,
  bm25(recall_fts, 1.0, :statement, 0.0) < 0 AS own, bm25(recall_fts, 0.0, 1.0, 0.0) < 0 AS stated
FROM recall_fts WHERE recall_fts MATCH :match
ORDER BY own DESC, score LIMIT :limit
"""

_SCOPED = """
SELECT s.id, bm25(recall_fts, 1.0, :statement, :context) AS score,
  bm25(recall_fts, 1.0, :statement, 0.0) < 0 AS own, bm25(recall_fts, 0.0, 1.0, 0.0) < 0 AS stated
FROM recall_fts CROSS JOIN sources AS s ON s.rowid = recall_fts.rowid
WHERE recall_fts MATCH :match AND s.tenant_id = :tenant AND s.person_id = :person
  AND s.deleted_at IS NULL
ORDER BY own DESC, score, s.id LIMIT :limit
"""

_LOCATE = "SELECT rowid, id, tenant_id, person_id, deleted_at FROM sources WHERE rowid IN ({marks})"


def _scored_sources(
    conn: sqlite3.Connection,
    match: str,
    tenant_id: str,
    person_id: str,
    rows: int,
    tuning: RecallTuning,
    scores: dict[str, float] | None = None,
    context_only: set[str] | None = None,
    stated: set[str] | None = None,
) -> tuple[list[str], bool]:
    """The first live sources of the scope by (own match first, bm25, id), at least *rows* of
    them when that many exist; and whether more may exist after them.

    The first try ranks the whole index (bm25 only, no column read: FTS5's plain top-N) and keeps
    the scope's rows; when the scope holds too few of them, the scoped join ranks only the scope.
    Every settled source of the page is returned, not only the first *rows*: they are the next
    sources of the same order, and a caller whose sources resolve to fewer targets than it wants
    (a superseded claim's capture, claims shared by several captures) uses them instead of
    ranking every match again. *scores*, when given, receives each returned source's bm25 score
    (FTS5's: lower is better); *context_only* the returned sources that match only through their
    neighbours' text; *stated* those whose claims' statements match.
    """
    params = {
        "match": match,
        "context": tuning.context_weight,
        "statement": tuning.statement_weight,
        "tenant": tenant_id,
        "person": person_id,
    }
    page_size = max(64, 4 * rows)
    page = conn.execute(_PAGE, {**params, "limit": page_size}).fetchall()
    complete = len(page) < page_size
    if page:
        # Rows tied with the page's last key may continue past it: only better ones are final.
        boundary = (-page[-1][2], page[-1][1])
        settled = page if complete else [row for row in page if (-row[2], row[1]) < boundary]
        marks = ", ".join("?" * len(settled))
        located = (
            {
                rowid: (source_id, tenant, person, deleted)
                for rowid, source_id, tenant, person, deleted in conn.execute(
                    _LOCATE.format(marks=marks), [row[0] for row in settled]
                )
            }
            if settled
            else {}
        )
        found: list[tuple[int, float, str, int]] = []
        for rowid, score, own, statement in settled:
            hit = located.get(rowid)
            if hit is not None and hit[1] == tenant_id and hit[2] == person_id and hit[3] is None:
                found.append((-own, score, hit[0], statement))
        if complete or len(found) >= rows:
            found.sort()
            ranked = [
                (source_id, score, -own, statement) for own, score, source_id, statement in found
            ]
            _note(ranked, scores, context_only, stated)
            return [row[0] for row in ranked], not complete
    else:
        return [], False
    ranked = conn.execute(_SCOPED, {**params, "limit": rows + 1}).fetchall()
    _note(ranked[:rows], scores, context_only, stated)
    return [row[0] for row in ranked[:rows]], len(ranked) > rows


def _note(
    ranked: Sequence[tuple[str, float, int, int]],
    scores: dict[str, float] | None,
    context_only: set[str] | None,
    stated: set[str] | None,
) -> None:
    """Record what :func:`_scored_sources` reports about its ``(source id, bm25, own, stated)``
    rows."""
    if scores is not None:
        scores.update((source_id, score) for source_id, score, _, _ in ranked)
    if context_only is not None:
        context_only.update(source_id for source_id, _, own, _ in ranked if not own)
    if stated is not None:
        stated.update(source_id for source_id, _, _, statement in ranked if statement)


# The current versions of the claims a source's live evidence supports, when those claims were
# corrected: each superseded claim followed along its corrections to the version in force now.
_SUCCESSORS = f"""
WITH RECURSIVE chain(source_id, claim_id) AS (
  SELECT e.source_id, ce.claim_id
  FROM evidence AS e
  CROSS JOIN claim_evidence AS ce
    ON ce.evidence_id = e.id AND ce.tenant_id = e.tenant_id AND ce.person_id = e.person_id
   AND ce.relation = {_SUPPORTS}
  WHERE e.tenant_id = :tenant AND e.person_id = :person AND e.deleted_at IS NULL
    AND e.source_id IN ({{ids}})
  UNION
  SELECT chain.source_id, co.claim_id
  FROM chain CROSS JOIN corrections AS co
    ON co.superseded_claim_id = chain.claim_id AND co.tenant_id = :tenant
   AND co.person_id = :person
)
SELECT chain.source_id, c.id FROM chain CROSS JOIN claims AS c
  ON c.id = chain.claim_id AND c.tenant_id = :tenant AND c.person_id = :person
 AND c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL
ORDER BY chain.source_id, c.id
"""


def _successors(
    conn: sqlite3.Connection, source_ids: Sequence[str], tenant_id: str, person_id: str
) -> dict[str, list[str | None]]:
    """The current versions of the corrected claims of each source of *source_ids*."""
    found: dict[str, list[str | None]] = {}
    for start in range(0, len(source_ids), 500):
        chunk = source_ids[start : start + 500]
        names = {f"s{index}": source_id for index, source_id in enumerate(chunk)}
        sql = _SUCCESSORS.replace("{ids}", ", ".join(f":{name}" for name in names))
        params = {"tenant": tenant_id, "person": person_id, **names}
        for source_id, claim_id in conn.execute(sql, params):
            found.setdefault(source_id, []).append(claim_id)
    return found


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
    context_only: set[Target] | None = None,
    stated: set[Target] | None = None,
) -> list[Target]:
    """The recall lexical list: up to *wanted* distinct targets, best first — every target that
    matches by its own words (its capture's text or its claims' statements) before any that
    matches only through its neighbours' text.

    A capture whose claims were corrected stands for their **current versions** (without
    ``as_of``): a claim is found by any word of any version's statement, and the version found
    is the one in force, never a superseded one.

    *scored*, when given, receives each target's ``(-bm25, the source it was found through)``
    (a claim scores what its best capture's row scored); *context_only* the targets found only
    through neighbours' text; *stated* the claims found through a statement that matches.
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
        bm25: dict[str, float] = {}
        neighbours_only: set[str] = set()
        statements: set[str] = set()
        sources, more = _scored_sources(
            conn, match, tenant_id, person_id, rows, tuning, bm25, neighbours_only, statements
        )
        if as_of is not None:
            sources = _known_then(conn, sources, match, params)
        elif tuning.coverage_floor < 1.0:
            # (As of a past time the context column is left out and a statement may hold a
            # later claim: the order stays bm25's there.)
            sources, more = _covered_first(
                conn, query, sources, more, bm25, neighbours_only, tuning
            )
        ranking: list[Target] = []
        seen: set[Target] = set()
        # Resolve the first *rows* sources, then (only when they fell short) the rest in blocks.
        start, block = 0, rows
        while start < len(sources) and len(ranking) < wanted:
            chunk = sources[start : start + block]
            start, block = start + len(chunk), block * 4
            resolved = _resolve(conn, chunk, params, as_of is not None)
            corrected = [source_id for source_id in chunk if resolved.get(source_id) == []]
            if corrected and as_of is None:
                resolved.update(_successors(conn, corrected, tenant_id, person_id))
            for source_id in chunk:
                claims = sorted(
                    set(resolved.get(source_id, [])),
                    key=lambda claim: (claim is not None, claim or ""),
                )
                for claim_id in claims:
                    target = ("source", source_id) if claim_id is None else ("claim", claim_id)
                    if target in seen:
                        continue
                    seen.add(target)
                    ranking.append(target)
                    if scored is not None:
                        scored[target] = (-bm25[source_id], source_id)
                    if context_only is not None and source_id in neighbours_only:
                        context_only.add(target)
                    if stated is not None and claim_id is not None and source_id in statements:
                        stated.add(target)
        if len(ranking) >= wanted or not more:
            return ranking[:wanted]
        rows *= 4  # some sources resolved to nothing (a retracted claim's capture): read deeper


def _covered_first(
    conn: sqlite3.Connection,
    query: str,
    sources: list[str],
    more: bool,
    bm25: dict[str, float],
    neighbours_only: set[str],
    tuning: RecallTuning,
) -> tuple[list[str], bool]:
    """*sources* (a page of :func:`_scored_sources`, best first) ordered again by (own matches
    first, bm25 times the coverage factor (:data:`COVERAGE_FLOOR`), id), their *bm25* scores
    scaled in place; and whether more may follow.

    A factor never exceeds 1 and bm25 here is negative (lower is better), so a row past the page
    scores no better than the page's last row did unscaled: only the rows that now score better
    than that are settled, the others are left for a deeper page (*more* stays true)."""
    coverage = _coverage(conn, query, sources, tuning.prefix_from)
    if not coverage:
        return sources, more
    last = sources[-1]
    boundary = (last in neighbours_only, bm25[last])
    floor = tuning.coverage_floor
    for source_id, share in coverage.items():
        bm25[source_id] *= floor + (1.0 - floor) * share
    ordered = sorted(sources, key=lambda s: (s in neighbours_only, bm25[s], s))
    if more:
        ordered = [s for s in ordered if (s in neighbours_only, bm25[s]) < boundary]
    return ordered, more


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
        context_only: set[Target] = set()
        stated: set[Target] = set()
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
            scored,
            context_only,
            stated,
        )
        lists: list[tuple[Sequence[Target], float]] = [(lexical, tuning.lexical_weight)]
        if not hybrid:
            fused = _fuse_lexical(
                conn, request, lexical, scored, context_only, stated, dated, tuning
            )
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
                conn,
                request,
                lexical,
                scored,
                context_only,
                stated,
                ranks,
                dense_head(conn, ranks, candidates),
                tuning,
            )
        items = materialize_all(conn, fused, tenant_id, person_id, as_of)
    return m.RetrievalPack(query=request.query, items=items, gaps=[] if items else [_NO_MATCH_GAP])


def _fuse_lexical(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    lexical: Sequence[Target],
    scored: dict[Target, tuple[float, str]],
    context_only: set[Target],
    stated: set[Target],
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
    anchors = [scored[target][1] for target in lexical]
    return fuse_scores(
        [(target, *scored[target]) for target in lexical],
        [],
        {},
        {},
        m.bounded_limit(request.limit),
        times=anchor_times(conn, request.tenant_id, request.person_id, anchors) if spans else {},
        date_spans=spans,
        lexical_share=1.0,
        session_weight=0.0,
        date_weight=tuning.date_weight,
        weak=context_only,
        stated=stated,
        claim_weight=tuning.claim_weight,
    )


def _fuse_hybrid_scores(
    conn: sqlite3.Connection,
    request: m.SearchRequest,
    lexical: Sequence[Target],
    scored: dict[Target, tuple[float, str]],
    context_only: set[Target],
    stated: set[Target],
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
    # A candidate matches on its own when its own words match the query or its own vector is
    # closer to it than the scope's usual (z above OWN_Z); one that does neither is only lent
    # its place by its neighbours and ranks after every one that matches.
    direct = set(lexical) - context_only
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
        neighbour_weight=tuning.neighbour_weight,
        session_weight=tuning.session_weight,
        date_weight=tuning.date_weight,
        weak=weak,
        stated=stated,
        claim_weight=tuning.claim_weight,
    )
