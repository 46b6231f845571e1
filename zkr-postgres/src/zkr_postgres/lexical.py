"""The replica's recall lexical list: zkr's recall index matched and ranked as SQLite does it.

The documents are a scope's live captures (``sources.terms``: their own terms weigh 1, their
neighbours' ``context`` :data:`~zkr.retrieval.replica_parts.CONTEXT_WEIGHT`) and, as a second
collection, its visible claims (``claims.terms``: the statement, weighing the statement column's
weight). Terms are zkr's (:mod:`zkr_postgres.terms`), the query's words zkr's
(:func:`zkr.retrieval.replica_parts.recall_words`, through the same FTS5 tokenizer), so a word
matches here exactly when it matches in zkr's recall index — in every language zkr analyses.

PostgreSQL finds the candidates (the GIN index on ``tsv``) and reads each candidate's frequency of
every query phrase (``tsv_tf``: own and context counts; a prefix phrase counts every longer term,
as FTS5 does); Python then scores them as zkr ranks its recall index: FTS5's ``bm25`` (k1
:data:`BM25_K1`, b :data:`BM25_B`, IDF and average length per scope and collection), times the
coverage factor (the share of the question's words a document holds), own matches before matches
through neighbours only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zkr.retrieval import replica_parts as core

__all__ = ["BM25_B", "BM25_K1", "Phrase", "Scored", "lexical_params", "lexical_sql", "score"]

#: BM25's parameters, as SQLite FTS5's ``bm25()`` (which zkr's recall ranking uses).
BM25_K1 = 1.2
BM25_B = 0.75


@dataclass(frozen=True)
class Phrase:
    """One phrase of the query's OR: a term, whether it matches as a prefix, the word of the
    question it stands for (for coverage), and whether it searches claims' statements only."""

    term: str
    prefix: bool
    word: int
    statement_only: bool


def phrases(query: str, prefix_from: int = core.PREFIX_FROM) -> list[Phrase]:
    """The phrases zkr's recall query ORs, as the index's tokens (a word the tokenizer splits in
    several tokens gives one phrase per token)."""
    words = core.recall_words(query.replace("\x00", " "), prefix_from)
    texts = [w.term for w in words] + [s for w in words for s in w.statement_words]
    tokens = iter(core.fts_tokens(texts))
    found: list[Phrase] = []
    for index, word in enumerate(words):
        found.extend(Phrase(t, word.prefix, index, False) for t in next(tokens))
    for index, word in enumerate(words):
        for _ in word.statement_words:
            found.extend(Phrase(t, False, index, True) for t in next(tokens))
    return found


def _tsquery(found: Sequence[Phrase]) -> str:
    """The OR of *found* as tsquery input (each term quoted: nothing in it acts as an operator)."""
    quoted = (
        "'" + p.term.replace("\\", "\\\\").replace("'", "''") + "'" + (":*" if p.prefix else "")
        for p in found
    )
    return " | ".join(dict.fromkeys(quoted))


def lexical_sql(rules: Any) -> str:
    """Every candidate document's frequencies of the query's phrases: rows ``(kind, id, length,
    phrase, own, near)``, then one row per collection ``(kind, NULL, live documents, NULL, total
    length, NULL)`` for its statistics. *rules* (``zkr_postgres.retrieval._Rules``) decide which
    sources and claims are visible."""
    scope_s = "s.tenant_id = %(t)s AND s.person_id = %(p)s"
    scope_c = "c.tenant_id = %(t)s AND c.person_id = %(p)s"
    return f"""
WITH terms AS (SELECT * FROM unnest(%(terms)s::text[], %(prefix)s::bool[], %(claims_only)s::bool[])
                 WITH ORDINALITY AS t(term, prefix, claims_only, i)),
docs AS MATERIALIZED (
  SELECT 'source'::text AS kind, s.id, s.tsv_tf AS tf, s.tsv_tokens AS len
    FROM zkr.sources s
   WHERE {scope_s} AND {rules.source("s")} AND s.tsv @@ %(query)s::tsquery
  UNION ALL
  SELECT 'claim'::text, c.id, c.tsv_tf, c.tsv_tokens
    FROM zkr.claims c
   WHERE {scope_c} AND {rules.claim("c")} AND c.tsv @@ %(query)s::tsquery)
SELECT d.kind, d.id, d.len, t.i::int, sum((e.v ->> 0)::int)::int, sum((e.v ->> 1)::int)::int
  FROM docs d CROSS JOIN LATERAL jsonb_each(d.tf) AS e(k, v)
  JOIN terms t ON (e.k = t.term OR (t.prefix AND starts_with(e.k, t.term)))
   AND (d.kind = 'claim' OR NOT t.claims_only)
 GROUP BY d.kind, d.id, d.len, t.i
UNION ALL
SELECT 'source', NULL, count(*)::int, NULL, coalesce(sum(s.tsv_tokens), 0)::int, NULL
  FROM zkr.sources s WHERE {scope_s} AND s.deleted_at IS NULL
UNION ALL
SELECT 'claim', NULL, count(*)::int, NULL, coalesce(sum(c.tsv_tokens), 0)::int, NULL
  FROM zkr.claims c WHERE {scope_c} AND c.status = 'accepted' AND c.valid_until IS NULL
   AND c.recorded_until IS NULL
"""


def lexical_params(query: str, found: Sequence[Phrase] | int = 0) -> dict[str, Any]:
    """The parameters of :func:`lexical_sql` besides the scope and the ``as_of`` times (*found*:
    the query's :func:`phrases`, when already known)."""
    found = phrases(query) if isinstance(found, int) else found
    return {
        "terms": [p.term for p in found],
        "prefix": [p.prefix for p in found],
        "claims_only": [p.statement_only for p in found],
        # An empty OR matches nothing (a query of no word).
        "query": _tsquery(found) or "''",
    }


@dataclass
class Scored:
    """The lexical list's documents, best first, with what the fusion reads of each."""

    order: list[tuple[str, str]] = field(default_factory=list)
    score: dict[tuple[str, str], float] = field(default_factory=dict)
    own: set[tuple[str, str]] = field(default_factory=set)


def score(
    rows: Sequence[tuple[Any, ...]],
    found: Sequence[Phrase],
    as_of: bool,
    tuning: core.RecallTuning = core.DEFAULT_TUNING,
) -> Scored:
    """Rank the rows of :func:`lexical_sql` as zkr ranks its recall index: bm25 (positive:
    higher is better), times the coverage factor when the question has two words or more (not
    ``as_of``: SQLite then reads the row as it was, without its context), own matches first."""
    stats: dict[str, tuple[int, float]] = {}
    hits: dict[tuple[str, str], dict[int, tuple[int, int]]] = {}
    length: dict[tuple[str, str], int] = {}
    for kind, doc_id, size, phrase, own, near in rows:
        if doc_id is None:
            stats[kind] = (size, own / size if size else 0.0)
            continue
        near = 0 if as_of else near
        if own or near:
            hits.setdefault((kind, doc_id), {})[phrase - 1] = (own, near)
            length[(kind, doc_id)] = size
    frequency: dict[tuple[str, int], int] = {}
    for (kind, _), by_phrase in hits.items():
        for phrase in by_phrase:
            frequency[(kind, phrase)] = frequency.get((kind, phrase), 0) + 1
    words = len({p.word for p in found})
    scored = Scored()
    for doc, by_phrase in hits.items():
        kind = doc[0]
        total, average = stats.get(kind, (0, 0.0))
        # A claim is its statement column; a capture its text, and its neighbours' as context.
        weights = (
            (tuning.statement_weight, 0.0) if kind == "claim" else (1.0, tuning.context_weight)
        )
        value = 0.0
        for phrase, (own, near) in by_phrase.items():
            w = weights[0] * own + weights[1] * near
            if w <= 0:
                continue
            n = frequency[(kind, phrase)]
            idf = max(math.log((max(total, n) - n + 0.5) / (n + 0.5)), 1e-6)
            norm = 1 - BM25_B + BM25_B * length[doc] / max(average, 1e-9)
            value += idf * w * (BM25_K1 + 1) / (w + BM25_K1 * norm)
        if words >= 2 and not as_of:
            held = len({found[phrase].word for phrase in by_phrase})
            value *= tuning.coverage_floor + (1 - tuning.coverage_floor) * held / words
        scored.score[doc] = value
        if kind == "claim" or any(own for own, _ in by_phrase.values()):
            scored.own.add(doc)
    scored.order = sorted(
        scored.score, key=lambda d: (d not in scored.own, -scored.score[d], d[0] != "source", d[1])
    )
    return scored
