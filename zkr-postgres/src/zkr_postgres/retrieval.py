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
from zkr_postgres.lexical import lexical_params, lexical_sql, phrases, score
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


def _mapping(rules: _Rules, hits: str) -> str:
    """``(hit kind, hit id, target kind, target id)`` of a ``hits(kind, id)`` relation of source
    and claim hits.

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
  SELECT h.kind, h.id, 'claim' AS kind, c.id AS id FROM {hits} h
    JOIN zkr.sources s ON {_scope("s")} AND s.id = h.id AND {rules.source("s")}
    JOIN zkr.evidence e ON {_scope("e")} AND e.source_id = h.id AND {rules.evidence("e")}
    JOIN zkr.claim_evidence l ON {_scope("l")} AND l.evidence_id = e.id
      AND l.relation = 'supports'
    JOIN zkr.claims c ON {_scope("c")} AND c.id = l.claim_id AND {rules.claim("c")}
    WHERE h.kind = 'source'
  UNION
  SELECT h.kind, h.id, 'source', h.id FROM {hits} h
    JOIN zkr.sources s ON {_scope("s")} AND s.id = h.id AND {rules.source("s")}
    WHERE h.kind = 'source'
    AND EXISTS (SELECT 1 FROM zkr.evidence e WHERE {_scope("e")} AND e.source_id = h.id
                AND {rules.evidence("e")})
    AND NOT EXISTS (SELECT 1 FROM zkr.evidence e3
                JOIN zkr.claim_evidence l3 ON {_scope("l3")} AND l3.evidence_id = e3.id
                  AND l3.relation = 'supports' AND {fallback_claim}
                WHERE {_scope("e3")} AND e3.source_id = h.id AND {rules.evidence("e3")})
  UNION
  SELECT h.kind, h.id, 'claim', h.id FROM {hits} h
    JOIN zkr.claims c ON {_scope("c")} AND c.id = h.id AND {rules.claim("c")}
    WHERE h.kind = 'claim' AND {_citable(rules, "c.id")}
"""


_HITS = "(SELECT * FROM unnest(%(hk)s::text[], %(hi)s::text[]) AS x(kind, id))"


def _resolve(
    conn: Conn, rules: _Rules, scope: dict[str, Any], hits: Sequence[Target]
) -> dict[Target, list[Target]]:
    """The targets each hit stands for (:func:`_mapping`), claims in id order."""
    if not hits:
        return {}
    params = {**scope, **rules.params(), "hk": [h[0] for h in hits], "hi": [h[1] for h in hits]}
    found: dict[Target, list[Target]] = {}
    for hit_kind, hit_id, kind, target_id in conn.execute(_mapping(rules, _HITS), params):
        found.setdefault((hit_kind, hit_id), []).append((kind, target_id))
    for targets in found.values():
        targets.sort(key=lambda t: (t[0] != "source", t[1]))
    return found


_DISTANCE_OPERATORS = {"cosine": "<=>", "dot": "<#>", "euclidean": "<->"}


def dense_sql(table: str, distance: str) -> sql.Composed:
    """Every vector of the scope in one lane: ``(kind, id, score)``, best (highest) first. The
    whole scope is read (exact: per-person scopes are small) because the fusion reads each
    memory's score as a z-score over the scope, as zkr does."""
    operator = _DISTANCE_OPERATORS[distance]
    return sql.SQL(
        "SELECT v.target_kind AS kind, v.target_id AS id,"
        " -(v.embedding {op} %(vec)s::vector) AS score FROM {table} v"
        " WHERE v.tenant_id = %(t)s AND v.person_id = %(p)s"
        ' ORDER BY 3 DESC, v.target_kind DESC, v.target_id COLLATE "C"'
    ).format(op=sql.SQL(operator), table=sql.Identifier(SCHEMA, table))


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
        from zkr.plugins.embedders import embed_texts

        # As a query (an embedder with roles embeds questions and passages differently), as zkr.
        embedder = get_embedder(embedding.model, embedding.version)
        vector = [float(v) for v in next(iter(embed_texts(embedder, [query], "query")))]
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


@dataclass
class _Lexical:
    """The lexical list and what the fusion reads of it (as zkr's ``recall_lexical`` tells)."""

    targets: list[Target]
    scored: dict[Target, tuple[float, str]]
    context_only: set[Target]
    stated: set[Target]


def _lexical(
    conn: Conn, request: m.SearchRequest, rules: _Rules, scope: dict[str, Any], wanted: int
) -> _Lexical:
    """Up to *wanted* targets, best first: the scored documents (:mod:`zkr_postgres.lexical`)
    resolved to targets in order, each target scored as the best document it was found through."""
    found = phrases(request.query)
    out = _Lexical([], {}, set(), set())
    if not found or wanted <= 0:
        return out
    rows = conn.execute(
        lexical_sql(rules), {**scope, **rules.params(), **lexical_params(request.query, found)}
    ).fetchall()
    ranked = score(rows, found, request.as_of is not None)
    start, depth = 0, max(64, 4 * wanted)
    while start < len(ranked.order) and len(out.targets) < wanted:
        chunk = ranked.order[start : start + depth]
        start, depth = start + len(chunk), depth * 4
        mapping = _resolve(conn, rules, scope, chunk)
        for doc in chunk:
            for target in mapping.get(doc, []):
                if doc[0] == "claim":
                    out.stated.add(target)  # found by its own statement
                if target in out.scored:
                    continue
                out.targets.append(target)
                out.scored[target] = (ranked.score[doc], doc[1])
                if doc not in ranked.own:
                    out.context_only.add(target)
    del out.targets[wanted:]
    return out


@dataclass
class _Dense:
    """The dense list's head (one entry per memory) and each memory's z-score over the scope."""

    head: list[Target]
    z: dict[Target, float]


def _dense(
    conn: Conn,
    scope: dict[str, Any],
    lane: tuple[str, str, list[float]],
    wanted: int,
) -> _Dense:
    table, distance, vector = lane
    rows = conn.execute(
        dense_sql(table, distance), {**scope, "vec": _vector_literal(vector)}
    ).fetchall()
    values = [float(row[2]) for row in rows]
    mean = sum(values) / len(values) if values else 0.0
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) if values else 0.0
    spread = max(spread, core.MIN_SPREAD)
    z = {(str(k), str(i)): (float(v) - mean) / spread for k, i, v in rows}
    head: list[Target] = []
    start, depth = 0, 2 * wanted
    while start < len(rows) and len(head) < wanted:
        chunk = [(str(k), str(i)) for k, i, _ in rows[start : start + depth]]
        start, depth = start + len(chunk), depth * 2
        mapping = _resolve(conn, _Rules(None), scope, chunk)
        for hit in chunk:
            for target in mapping.get(hit, []):
                # A claim found through its capture's vector scores as that vector.
                z.setdefault(target, z[hit])
                if target not in head:
                    head.append(target)
    return _Dense(head[:wanted], z)


_ANCHORS = f"""
SELECT s.id, s.kind, s.captured_at, left(s.content, 2000) FROM zkr.sources s
 WHERE {_scope("s")} AND s.id = ANY(%(ids)s) AND s.deleted_at IS NULL
"""

_SIDE = """
(SELECT n.id FROM zkr.sources n
  WHERE n.tenant_id = a.tenant_id AND n.person_id = a.person_id AND n.kind = a.kind
    AND n.deleted_at IS NULL AND (n.captured_at, n.seq) {before} (a.captured_at, a.seq)
    AND n.captured_at::numeric BETWEEN a.captured_at::numeric - %(gap)s
                                AND a.captured_at::numeric + %(gap)s
  ORDER BY n.captured_at {order}, n.seq {order} LIMIT %(spread)s)"""
_NEIGHBOURS = f"""
SELECT a.id, n.id FROM zkr.sources a CROSS JOIN LATERAL (
  {_SIDE.format(before="<", order="DESC")} UNION ALL {_SIDE.format(before=">", order="ASC")}
) AS n(id)
 WHERE {_scope("a")} AND a.id = ANY(%(ids)s) AND a.deleted_at IS NULL
"""


def _anchors(
    conn: Conn, scope: dict[str, Any], anchors: Sequence[str]
) -> tuple[dict[str, tuple[str, int]], dict[str, str]]:
    """``(kind, captured_at)`` and the first letters of each live anchor source."""
    times: dict[str, tuple[str, int]] = {}
    texts: dict[str, str] = {}
    for source_id, kind, at, text in conn.execute(_ANCHORS, {**scope, "ids": list(anchors)}):
        times[source_id] = (kind, int(at))
        texts[source_id] = text
    return times, texts


def _neighbour_z(
    conn: Conn, scope: dict[str, Any], anchors: Sequence[str], z: dict[Target, float]
) -> dict[str, float]:
    """The mean z-score of each anchor's live timeline neighbours that have a vector."""
    around: dict[str, list[float]] = {}
    params = {**scope, "ids": list(anchors), "gap": core.SESSION_GAP_SECONDS, "spread": core.SPREAD}
    for source_id, neighbour in conn.execute(_NEIGHBOURS, params):
        value = z.get(("source", neighbour))
        if value is not None:
            around.setdefault(source_id, []).append(value)
    return {source_id: sum(values) / len(values) for source_id, values in around.items()}


def _fuse(
    conn: Conn,
    request: m.SearchRequest,
    scope: dict[str, Any],
    lexical: _Lexical,
    dense: _Dense | None,
    limit: int,
) -> list[tuple[Target, int]]:
    """zkr's score fusion (:func:`zkr.retrieval.replica_parts.fuse_scores`) of the lists, with
    the inputs zkr's recall search gives it: lexical only, or hybrid with the dense z-scores,
    the neighbours' z-scores, the session and date terms, and the keyword trust."""
    # Calibrated per embedding model, as zkr's recall search (zkr.retrieval._recall_tuning).
    embedding = request.query_embedding
    tuning = core.model_tuning(embedding.model) if embedding is not None else core.DEFAULT_TUNING
    entries = [(t, *lexical.scored[t]) for t in lexical.targets]
    anchors = [lexical.scored[t][1] for t in lexical.targets]
    if dense is None:
        spans = core.query_date_spans(request.query) if tuning.date_weight else []
        times = _anchors(conn, scope, anchors)[0] if spans else {}
        return core.fuse_scores(
            entries, [], {}, {}, limit, times=times, date_spans=spans, lexical_share=1.0,
            session_weight=0.0, date_weight=tuning.date_weight, weak=lexical.context_only,
            stated=lexical.stated, claim_weight=tuning.claim_weight,
        )  # fmt: skip
    anchors += [t[1] for t in dense.head if t[0] == "source"]
    candidates = [*lexical.targets, *dense.head]
    dense_z = {t: dense.z[t] for t in candidates if t in dense.z}
    times, texts = _anchors(conn, scope, anchors)
    direct = set(lexical.targets) - lexical.context_only
    weak = {
        t for t in candidates if t not in direct and dense_z.get(t, tuning.own_z) <= tuning.own_z
    }
    heads = [texts[a] for a in dict.fromkeys(anchors[: core.TRUST_HEAD]) if a in texts]
    return core.fuse_scores(
        entries, dense.head, dense_z, _neighbour_z(conn, scope, anchors, dense.z), limit,
        times=times, date_spans=core.query_date_spans(request.query) if tuning.date_weight else (),
        lexical_share=tuning.lexical_share,
        keyword_trust=core.keyword_trust(request.query, heads),
        neighbour_weight=tuning.neighbour_weight, session_weight=tuning.session_weight,
        date_weight=tuning.date_weight, weak=weak, stated=lexical.stated,
        claim_weight=tuning.claim_weight,
    )  # fmt: skip


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
    # With as_of the embedding is ignored (vectors describe now).
    hybrid = request.query_embedding is not None and request.as_of is None
    dated = bool(core.DEFAULT_TUNING.date_weight and core.query_date_spans(request.query))
    with scoped(conn, request.tenant_id, request.person_id):
        lexical = _lexical(conn, request, rules, scope, candidates if hybrid or dated else limit)
        dense = None
        if hybrid:
            assert request.query_embedding is not None
            lane = _query_vector(conn, request.query_embedding, request.query)
            # No lane of that name: the hybrid fusion of an empty dense list, as zkr.
            dense = _Dense([], {}) if lane is None else _dense(conn, scope, lane, candidates)
        fused = _fuse(conn, request, scope, lexical, dense, limit)
        items = _items(conn, fused, scope, rules)
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
