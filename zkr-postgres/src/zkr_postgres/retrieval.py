"""``search`` and ``get`` answered from PostgreSQL, with zkr's request and response models.

Every read runs in one transaction as :data:`~zkr_postgres.schema.SERVING_ROLE` with the scope set
by ``set_config(…, true)`` (local to the transaction): row-level security then hides every other
scope's rows, whatever the statement says. The statements filter on the scope as well (that is what
makes them use the ``(tenant_id, person_id, …)`` keys).

Ranking: zkr's *recall* ranking (``docs/recall.md``) in SQL, documented in ``docs/zkr-postgres.md``:

- **lexical**: the query's words without zkr's stop words (alphabetic words of 4 letters or more
  also as prefixes), English-stemmed into one OR-ed ``tsquery``, matched against live captures
  (``sources.tsv``: the capture's words weighted A, its neighbours' context D) and current
  claims' statements (``claims.tsv``), ranked by **BM25** as SQLite FTS5 computes it (k1 1.2,
  b 0.75; the context counts :data:`CONTEXT_WEIGHT`; IDF and average length per scope, see
  :func:`lexical_sql`). A capture whose evidence supports a current claim is replaced by that
  claim; a capture whose evidence supports only non-current claims yields nothing (zkr's rule),
  a capture that supports nothing is returned itself;
- **dense** (with a ``query_embedding`` and no ``as_of``): pgvector's distance operator of the
  lane's distance over the scope's vectors (exact: per-person scopes are small), mapped to
  targets the same way;
- **fusion**: zkr's own weighted reciprocal-rank fusion
  (``zkr.retrieval.replica_parts.fuse_weighted``, k :data:`RRF_K`, lexical weight 1, dense weight
  :data:`DENSE_WEIGHT`), over each list's head of ``max(4 × limit, 50)`` candidates; relevance in
  basis points of the best.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from zkr import models as m
from zkr.errors import InvalidRequest, NotFound

# The recall ranking's parameters and fusion, the excerpt cut: zkr's own (one definition).
from zkr.retrieval import replica_parts as core
from zkr.store.validation import require_scope, require_text
from zkr_postgres._db import Conn
from zkr_postgres.believed import corrected_after
from zkr_postgres.nul import has_nul, restored
from zkr_postgres.schema import SCHEMA, SERVING_ROLE

__all__ = ["get", "lexical_params", "lexical_sql", "scoped", "search"]


Target = tuple[str, str]


@contextmanager
def scoped(conn: Conn, tenant_id: str, person_id: str) -> Iterator[Conn]:
    """One read transaction as the serving role, with the scope set for it alone."""
    # Pipeline mode: BEGIN, the settings and the first query travel together.
    with conn.pipeline(), conn.transaction():
        # set_config('role', …, true) is SET LOCAL ROLE; all three end with the transaction.
        conn.execute(
            "SELECT set_config('role', %s, true), set_config('zkr.tenant_id', %s, true),"
            " set_config('zkr.person_id', %s, true)",
            (SERVING_ROLE, tenant_id, person_id),
        )
        yield conn


# ----------------------------------------------------------------------------------------------
# The SQL: visibility rules (current or as_of), hits, and hits mapped to targets
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rules:
    """SQL predicates of zkr's visibility rules, for now or for an ``as_of`` (V, R)."""

    as_of: m.AsOf | None

    def claim(self, c: str) -> str:
        if self.as_of is None:
            return (
                f"{c}.status = 'accepted' AND {c}.valid_until IS NULL"
                f" AND {c}.recorded_until IS NULL"
            )
        # As then believed: a correction recorded after R had not closed the valid time yet.
        return (
            f"{c}.status IN ('accepted', 'superseded') AND {c}.valid_from <= %(v)s"
            f" AND ({c}.valid_until IS NULL OR %(v)s < {c}.valid_until OR {corrected_after(c)})"
            f" AND {c}.recorded_from <= %(r)s"
            f" AND ({c}.recorded_until IS NULL OR %(r)s < {c}.recorded_until)"
        )

    def evidence(self, e: str) -> str:
        extra = "" if self.as_of is None else f" AND {e}.recorded_at <= %(r)s"
        return f"{e}.deleted_at IS NULL{extra}"

    def source(self, s: str) -> str:
        extra = (
            ""
            if self.as_of is None
            else f" AND {s}.captured_at <= %(v)s AND {s}.recorded_at <= %(r)s"
        )
        return f"{s}.deleted_at IS NULL{extra}"

    def params(self) -> dict[str, Any]:
        if self.as_of is None:
            return {}
        return {"v": self.as_of.valid_at, "r": self.as_of.recorded_at}


def _scope(alias: str) -> str:
    return f"{alias}.tenant_id = %(t)s AND {alias}.person_id = %(p)s"


# A supporting evidence that may be cited: live, on a live source ({evidence}, {source}).
_CITABLE = """EXISTS (SELECT 1 FROM zkr.claim_evidence l2
 JOIN zkr.evidence e2 ON {e2} AND e2.id = l2.evidence_id AND {evidence}
 JOIN zkr.sources s2 ON {s2} AND s2.id = e2.source_id AND {source}
 WHERE {l2} AND l2.claim_id = {claim_id} AND l2.relation = 'supports')"""


def _citable(rules: _Rules, claim_id: str) -> str:
    """EXISTS: the claim has a supporting evidence that may be cited (live, on a live source)."""
    aliases = {alias: _scope(alias) for alias in ("e2", "s2", "l2")}
    evidence, source = rules.evidence("e2"), rules.source("s2")
    return _CITABLE.format(**aliases, evidence=evidence, source=source, claim_id=claim_id)


def _mapped(rules: _Rules, hits: str) -> str:
    """Targets of a ``hits(kind, id, score)`` relation of source and claim hits, best score each.

    A source hit becomes the current claims its live evidence supports; without any, the source
    itself if it has live evidence and none of it supports a claim (in ``as_of`` mode: a claim
    visible then). A claim hit stays itself when it is visible and citable.
    """
    fallback_claim = (
        "TRUE"
        if rules.as_of is None
        else (
            "EXISTS (SELECT 1 FROM zkr.claims c4 WHERE "
            f"{_scope('c4')} AND c4.id = l3.claim_id AND {rules.claim('c4')})"
        )
    )
    return f"""
SELECT kind, id, max(score) AS score FROM (
  SELECT 'claim' AS kind, c.id AS id, h.score AS score FROM {hits} h
    JOIN zkr.sources s ON {_scope("s")} AND s.id = h.id AND {rules.source("s")}
    JOIN zkr.evidence e ON {_scope("e")} AND e.source_id = h.id AND {rules.evidence("e")}
    JOIN zkr.claim_evidence l ON {_scope("l")} AND l.evidence_id = e.id
      AND l.relation = 'supports'
    JOIN zkr.claims c ON {_scope("c")} AND c.id = l.claim_id AND {rules.claim("c")}
    WHERE h.kind = 'source'
  UNION ALL
  SELECT 'source', h.id, h.score FROM {hits} h
    JOIN zkr.sources s ON {_scope("s")} AND s.id = h.id AND {rules.source("s")}
    WHERE h.kind = 'source'
    AND EXISTS (SELECT 1 FROM zkr.evidence e WHERE {_scope("e")} AND e.source_id = h.id
                AND {rules.evidence("e")})
    AND NOT EXISTS (SELECT 1 FROM zkr.evidence e3
                JOIN zkr.claim_evidence l3 ON {_scope("l3")} AND l3.evidence_id = e3.id
                  AND l3.relation = 'supports' AND {fallback_claim}
                WHERE {_scope("e3")} AND e3.source_id = h.id AND {rules.evidence("e3")})
  UNION ALL
  SELECT 'claim', h.id, h.score FROM {hits} h
    JOIN zkr.claims c ON {_scope("c")} AND c.id = h.id AND {rules.claim("c")}
    WHERE h.kind = 'claim' AND {_citable(rules, "c.id")}
) mapped GROUP BY kind, id
"""


#: BM25's parameters, as SQLite FTS5's ``bm25()`` (which zkr's recall ranking uses).
BM25_K1 = 1.2
BM25_B = 0.75

# The query's terms: each word's English lexemes (stemmed; PostgreSQL's English stop words give
# none), with whether the term also matches as a prefix; then one tsquery OR-ing them all. Each
# lexeme is quoted for tsquery's input syntax, so no character of the query acts as an operator.
_TERMS = r"""
terms AS (
  SELECT lexeme, prefix, (quoted || CASE WHEN prefix THEN ':*' ELSE '' END)::tsquery AS pq
    FROM (SELECT DISTINCT l.lexeme, w.prefix,
                 '''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''' AS quoted
            FROM unnest(%(words)s::text[], %(prefix)s::bool[]) AS w(word, prefix),
                 unnest(tsvector_to_array(to_tsvector('english', w.word))) AS l(lexeme)) x),
q AS (SELECT coalesce(string_agg(pq::text, ' | '), '')::tsquery AS query FROM terms)"""


def lexical_sql(rules: _Rules) -> str:
    """Ranked lexical targets: ``(kind, id, score)``, best first.

    BM25 as FTS5 computes it (k1 :data:`BM25_K1`, b :data:`BM25_B`), per scope: the documents are
    the scope's live captures (their own words weigh 1, their neighbours' context words
    :data:`CONTEXT_WEIGHT`) and, as a second collection, its current claims' statements. Every
    document holding a query term is a candidate, so a term's document frequency is counted over
    the candidates; the collection size and average length are the scope's;
    ``idf = ln((N - n + 0.5) / (n + 0.5))``, at least 1e-6. A term's frequency is read from the
    document's ``tsv_tf``; a prefix term that matches a document only through longer words counts
    once there (at the weight of the part it matched in).
    """
    return f"""
WITH {_TERMS},
docs AS MATERIALIZED (
  SELECT 'source'::text AS kind, s.id, s.tsv, s.tsv_tf AS tf, s.tsv_tokens AS len
    FROM zkr.sources s, q
   WHERE {_scope("s")} AND {rules.source("s")} AND s.tsv @@ q.query
  UNION ALL
  SELECT 'claim'::text, c.id, c.tsv, c.tsv_tf, c.tsv_tokens
    FROM zkr.claims c, q
   WHERE {_scope("c")} AND {rules.claim("c")} AND c.tsv @@ q.query),
tf AS (
  SELECT d.kind, d.id, d.len, t.lexeme, t.prefix,
         CASE WHEN d.tf ? t.lexeme THEN
                CASE WHEN d.kind = 'claim'
                     THEN (d.tf -> t.lexeme ->> 0)::int + (d.tf -> t.lexeme ->> 1)::int
                     ELSE (d.tf -> t.lexeme ->> 0)::int
                          + %(cw)s * (d.tf -> t.lexeme ->> 1)::int END
              WHEN d.kind = 'claim' OR ts_filter(d.tsv, '{{a}}') @@ t.pq THEN 1
              ELSE %(cw)s END AS f
    FROM docs d CROSS JOIN terms t
   WHERE d.tf ? t.lexeme OR (t.prefix AND d.tsv @@ t.pq)),
df AS (SELECT kind, lexeme, prefix, count(*) AS n FROM tf GROUP BY kind, lexeme, prefix),
stats AS (
  SELECT 'source'::text AS kind, count(*) AS total, avg(s.tsv_tokens) AS avgdl
    FROM zkr.sources s WHERE {_scope("s")} AND s.deleted_at IS NULL
  UNION ALL
  SELECT 'claim'::text, count(*), avg(c.tsv_tokens)
    FROM zkr.claims c WHERE {_scope("c")} AND {_Rules(None).claim("c")}),
hits AS (
  SELECT tf.kind, tf.id, sum(
           greatest(ln((greatest(st.total, df.n) - df.n + 0.5) / (df.n + 0.5)), 1e-6)
           * tf.f * ({BM25_K1} + 1)
           / (tf.f + {BM25_K1} * (1 - {BM25_B}
                                  + {BM25_B} * tf.len / greatest(st.avgdl, 1)))) AS score
    FROM tf JOIN df USING (kind, lexeme, prefix) JOIN stats st USING (kind)
   GROUP BY tf.kind, tf.id
   ORDER BY score DESC, tf.kind DESC, tf.id COLLATE "C" LIMIT %(hits)s)
SELECT kind, id, score FROM ({_mapped(rules, "hits")}) t
ORDER BY score DESC, kind DESC, id COLLATE "C" LIMIT %(cand)s
"""


def query_terms(query: str, prefix_from: int = core.PREFIX_FROM) -> tuple[list[str], list[bool]]:
    """The words a recall query searches for (zkr's rule: its terms without stop words, or all of
    them when only stop words are left) and whether each also matches as a prefix (alphabetic
    words of at least *prefix_from* letters)."""
    # PostgreSQL text cannot hold NUL; for the query's words it only separates them.
    terms = core.token_terms(query.replace("\x00", " "))
    kept = [term for term in terms if term.lower() not in core.STOP_WORDS] or terms
    return kept, [bool(prefix_from) and len(t) >= prefix_from and t.isalpha() for t in kept]


def lexical_params(query: str, candidates: int) -> dict[str, Any]:
    """The parameters of :func:`lexical_sql` besides the scope and the ``as_of`` times."""
    words, prefix = query_terms(query)
    return {
        "words": words,
        "prefix": prefix,
        "cand": candidates,
        # Sources that resolve to nothing (a superseded claim's capture) leave room: read deeper.
        "hits": 2 * candidates,
        "cw": core.CONTEXT_WEIGHT,
    }


_DISTANCE_OPERATORS = {"cosine": "<=>", "dot": "<#>", "euclidean": "<->"}


def dense_sql(table: str, distance: str) -> sql.Composed:
    """Ranked dense targets of one lane: ``(kind, id, score)``, best (highest score) first."""
    operator = _DISTANCE_OPERATORS[distance]
    rules = _Rules(None)
    return sql.SQL(
        "WITH hits AS (SELECT v.target_kind AS kind, v.target_id AS id,"
        " -(v.embedding {op} %(vec)s::vector) AS score FROM {table} v"
        " WHERE v.tenant_id = %(t)s AND v.person_id = %(p)s"
        " ORDER BY v.embedding {op} %(vec)s::vector LIMIT %(cand)s)"
        " SELECT kind, id, score FROM ({mapped}) t ORDER BY score DESC, kind DESC, id"
    ).format(
        op=sql.SQL(operator),
        table=sql.Identifier(SCHEMA, table),
        mapped=sql.SQL(_mapped(rules, "hits")),
    )


def _claim_items_sql(rules: _Rules) -> str:
    return f"""
SELECT c.id, jsonb_build_array(c.subject, c.predicate, c.value),
  (SELECT min(e.id COLLATE "C") FROM zkr.claim_evidence l
     JOIN zkr.evidence e ON {_scope("e")} AND e.id = l.evidence_id AND {rules.evidence("e")}
     JOIN zkr.sources s ON {_scope("s")} AND s.id = e.source_id AND {rules.source("s")}
     WHERE {_scope("l")} AND l.claim_id = c.id AND l.relation = 'supports'), c.exact
FROM zkr.claims c WHERE {_scope("c")} AND c.id = ANY(%(ids)s) AND {rules.claim("c")}
"""


_SOURCE_ITEMS_SQL = f"""
SELECT s.id, s.content,
  (SELECT min(e.id COLLATE "C") FROM zkr.evidence e
     WHERE {_scope("e")} AND e.source_id = s.id AND e.deleted_at IS NULL), s.exact
FROM zkr.sources s WHERE {_scope("s")} AND s.id = ANY(%(ids)s) AND s.deleted_at IS NULL
"""

_EVIDENCE_ITEMS_SQL = f"""
SELECT e.id, e.quote, e.id, e.exact FROM zkr.evidence e
  JOIN zkr.sources s ON {_scope("s")} AND s.id = e.source_id AND s.deleted_at IS NULL
WHERE {_scope("e")} AND e.id = ANY(%(ids)s) AND e.deleted_at IS NULL
"""


def _served_text(kind: str, text: Any, exact: bytes | None) -> str:
    """The item text as zkr holds it (NULs put back): a claim reads ``subject predicate value``."""
    if kind == "claim":
        parts = restored(dict(zip(("subject", "predicate", "value"), text, strict=True)), exact)
        return f"{parts['subject']} {parts['predicate']} {parts['value']}"
    name = "content" if kind == "source" else "quote"
    return str(restored({name: text}, exact)[name])


def _items(
    conn: Conn,
    ranked: Sequence[tuple[Target, int]],
    scope: dict[str, Any],
    rules: _Rules,
) -> list[m.RetrievalItem]:
    """Cited items of ranked targets (one statement per kind); unciteable targets are dropped."""
    wanted: dict[str, list[str]] = {}
    for (kind, target_id), _ in ranked:
        wanted.setdefault(kind, []).append(target_id)
    statements = {
        "claim": _claim_items_sql(rules),
        "source": _SOURCE_ITEMS_SQL,
        "evidence": _EVIDENCE_ITEMS_SQL,
    }
    found: dict[Target, tuple[str, str]] = {}
    for kind, ids in wanted.items():
        params = {**scope, **rules.params(), "ids": ids}
        for target_id, text, evidence_id, exact in conn.execute(statements[kind], params):
            if evidence_id is not None:
                found[(kind, target_id)] = (_served_text(kind, text, exact), evidence_id)
    items = []
    for target, relevance in ranked:
        row = found.get(target)
        if row is None:
            continue
        items.append(
            m.RetrievalItem(
                memory=m.MemoryRef(kind=m.MemoryKind(target[0]), id=target[1]),
                excerpt=core.cap_excerpt(row[0]),
                relevance_basis_points=relevance,
                evidence_ids=[row[1]],
            )
        )
    return items


# ----------------------------------------------------------------------------------------------
# Fusion
# ----------------------------------------------------------------------------------------------

# ----------------------------------------------------------------------------------------------
# Operations
# ----------------------------------------------------------------------------------------------


def _query_vector(
    conn: Conn, embedding: m.QueryEmbedding, query: str
) -> tuple[str, str, list[float]] | None:
    """The lane table, its distance and the query vector; None when no lane has that name.

    Without a ``vector`` the installed embedder of that model and version embeds *query*.
    """
    require_text(embedding.model, "query embedding model")
    require_text(embedding.version, "query embedding version")
    if has_nul(embedding.model, embedding.version):
        return None  # no lane can be named so (PostgreSQL text cannot hold NUL): no dense list
    vector = embedding.vector
    if vector is None:
        from zkr.plugins import get_embedder

        vector = [float(v) for v in get_embedder(embedding.model, embedding.version).embed(query)]
    if not vector or not all(math.isfinite(v) for v in vector):
        raise InvalidRequest("query embedding vector must contain finite values")
    lane = conn.execute(
        "SELECT table_name, distance, dimension FROM zkr.lanes WHERE model = %s AND version = %s",
        (embedding.model, embedding.version),
    ).fetchone()
    if lane is None:
        return None
    table, distance, dimension = lane
    if len(vector) != dimension:
        raise InvalidRequest(
            f"query embedding dimension {len(vector)} does not match stored dimension {dimension}"
        )
    return str(table), str(distance), vector


def _vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in vector) + "]"


def search(conn: Conn, request: m.SearchRequest) -> m.RetrievalPack:
    """A cited, scoped, bounded pack from the replica (recall ranking).

    :raises InvalidRequest: blank scope or query; a refused query embedding.
    """
    require_scope(request.tenant_id, request.person_id)
    require_text(request.query, "query")
    if has_nul(request.tenant_id, request.person_id):
        # No stored scope holds NUL (see zkr_postgres.nul): nothing can match.
        return m.RetrievalPack(query=request.query, items=[], gaps=[core.NO_MATCH_GAP])
    limit = m.bounded_limit(request.limit)
    candidates = max(core.CANDIDATES_PER_ITEM * limit, core.MIN_CANDIDATES)
    rules = _Rules(request.as_of)
    scope = {"t": request.tenant_id, "p": request.person_id}
    with scoped(conn, request.tenant_id, request.person_id):
        rows = conn.execute(
            lexical_sql(rules),
            {**scope, **rules.params(), **lexical_params(request.query, candidates)},
        ).fetchall()
        lists: list[tuple[Sequence[Target], float]] = [
            ([(k, i) for k, i, _ in rows], core.LEXICAL_WEIGHT)
        ]
        # With as_of the embedding is ignored (vectors describe now), as in zkr.
        if request.query_embedding is not None and request.as_of is None:
            lane = _query_vector(conn, request.query_embedding, request.query)
            if lane is not None:
                table, distance, vector = lane
                dense = conn.execute(
                    dense_sql(table, distance),
                    {**scope, "vec": _vector_literal(vector), "cand": candidates},
                ).fetchall()
                lists.append(([(k, i) for k, i, _ in dense], core.DENSE_WEIGHT))
        items = _items(conn, core.fuse_weighted(lists, limit, k=core.RRF_K), scope, rules)
    return m.RetrievalPack(
        query=request.query, items=items, gaps=[] if items else [core.NO_MATCH_GAP]
    )


def get(conn: Conn, request: m.GetRequest) -> m.RetrievalItem:
    """One live source, evidence or current claim as a cited item.

    :raises InvalidRequest: blank scope.
    :raises NotFound: the target is not live in this scope (``record not found``).
    """
    require_scope(request.tenant_id, request.person_id)
    if has_nul(request.tenant_id, request.person_id, request.target.id):
        raise NotFound()  # nothing stored holds NUL in a key (see zkr_postgres.nul)
    target: Target = (request.target.kind.value, request.target.id)
    scope = {"t": request.tenant_id, "p": request.person_id}
    with scoped(conn, request.tenant_id, request.person_id):
        # With as_of: a claim visible then, a capture or quote captured and recorded then.
        rules = _Rules(request.as_of)
        if (
            request.as_of is not None
            and target[0] != "claim"
            and not _existed(conn, target, scope, rules)
        ):
            raise NotFound()
        items = _items(conn, [(target, core.FULL_RELEVANCE)], scope, rules)
    if not items:
        raise NotFound()
    return items[0]


def _existed(conn: Conn, target: Target, scope: dict[str, Any], rules: _Rules) -> bool:
    """Whether the source or evidence *target* was captured and recorded at the rules' as_of."""
    if target[0] == "source":
        query = (
            f"SELECT 1 FROM zkr.sources s WHERE {_scope('s')} AND s.id = %(id)s"
            f" AND {rules.source('s')}"
        )
    else:
        query = (
            f"SELECT 1 FROM zkr.evidence e JOIN zkr.sources s ON {_scope('s')}"
            f" AND s.id = e.source_id AND {rules.source('s')}"
            f" WHERE {_scope('e')} AND e.id = %(id)s AND {rules.evidence('e')}"
        )
    params = {**scope, **rules.params(), "id": target[1]}
    return conn.execute(query, params).fetchone() is not None
