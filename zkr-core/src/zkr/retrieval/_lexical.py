"""Lexical candidates: FTS5 BM25 matches mapped to claims or raw sources (contract §5.1, §5.3).

The contract describes one query per match expression: FTS rows in scope joined to the live source,
to each live evidence of it, to that evidence's ``supports`` links and to the linked claim if it is
current; ordered by ``bm25`` ascending, source id, claim id (NULL first); ``LIMIT candidate_limit``
*before* de-duplication. Run literally, that query evaluates the joins for every matching row, which
for a common word over a large store is most of the database.

Here the same rows are produced with work proportional to what is returned: the FTS index is read
in growing pages of ``(rowid, bm25)`` ordered by ``bm25`` alone (the shape of FTS5's plain top-N
query: no column is read for the rows it ranks), a page is used up to its last complete score, its
rows are located (source id, scope) by rowid and put in the exact contract order (source id inside
one score) in Python, and their sources are resolved with one set-based query per block of ids.
Joined rows are emitted in the contract's order, duplicates included, and reading stops as soon as
the rows the caller needs exist, so the result equals the contract's ``LIMIT``-ed row list exactly
(``tests/core/test_search_equivalence.py`` checks this against a literal implementation,
``tests/core/test_lexical_paging.py`` every paging corner against the literal SQL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

from zkr.retrieval._bounds import phrase_is_worth_running, scope_has_live_source
from zkr.retrieval._distinct import extend_distinct
from zkr.retrieval._fts_query import build_queries
from zkr.retrieval._fusion import Target
from zkr.store.believed import visible_claim

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from zkr import models as m
else:
    from zkr._named_tuple import NamedTuple

__all__ = ["PAGING", "Paging", "lexical_ranking", "matching_rows"]


class Paging(NamedTuple):
    """How one FTS query is read (the answer never depends on it: the tests read with tiny pages,
    blocks and chunks, and switch to scoped pages at once, to cross every boundary).

    The first page holds at least ``min_page`` rows, and ``rows_per_wanted`` per wanted row: a page
    holds only (rowid, bm25), so a large page costs little next to the bm25 pass over every match,
    and it usually holds the whole run of tied scores at its end (templated texts tie often). Later
    pages grow at least ``page_growth`` times, or to what the qualifying rate seen so far needs:
    each page re-reads the index, so the total cost stays within a small factor of one read.

    A page is worked through in blocks that start at ``first_block`` rows (or the rows still
    wanted) and double up to ``id_chunk``, the rows per lookup or resolution query (well under
    SQLite's host-parameter limit), so a large page costs no lookups or resolution beyond the last
    row needed.

    Pages are read without a scope filter (FTS5 then reads no column of the rows it ranks). When
    the scope holds less than ``scoped_below`` of the rows read and the next page would reach past
    ``scoped_after`` rows, the remaining pages filter the scope in SQL instead: that reads the
    scope columns of every match once, which is cheaper than wading through other people's rows.
    """

    min_page: int
    rows_per_wanted: int
    page_growth: int
    first_block: int
    id_chunk: int
    scoped_after: int
    scoped_below: float


#: The paging every search uses: the tuned values, in one place. A test that reads otherwise
#: derives its paging from this one (``PAGING._replace(min_page=1)``).
PAGING = Paging(
    min_page=64,
    rows_per_wanted=8,
    page_growth=8,
    first_block=16,
    id_chunk=500,
    scoped_after=4096,
    scoped_below=0.5,
)

# bm25 alone in ORDER BY and only the rowid beside it: the shape of the plain top-N query. FTS5
# computes bm25 for every match anyway and SQLite keeps the best OFFSET + LIMIT rows; reading a
# column (or ordering by one) would cost a content-table lookup per match. Ties in bm25 come back
# in no defined order; ``_Walk`` orders them by source id itself.
_FTS_PAGE = """
SELECT rowid, bm25(source_fts) AS score
FROM source_fts
WHERE source_fts MATCH :match
ORDER BY score
LIMIT :page OFFSET :offset
"""

_FTS_SCOPED_PAGE = """
SELECT rowid, bm25(source_fts) AS score
FROM source_fts
WHERE source_fts MATCH :match AND tenant_id = :tenant AND person_id = :person
ORDER BY score
LIMIT :page OFFSET :offset
"""

_LOCATE = "SELECT rowid, source_id, tenant_id, person_id FROM source_fts WHERE rowid IN ({marks})"

_SUPPORTS = "'\"supports\"'"

# A claim is current when accepted with both intervals open (§1.4).
_CURRENT_CLAIM = "c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"


def _visible_claim(alias: str) -> str:
    """Status and interval part of "visible at (V, R)" (§4.11), as believed at R; retracted
    claims never are."""
    return visible_claim(alias)


# The joins are written as CROSS JOIN, which SQLite takes as a fixed join order: always from the
# page's sources outwards through the (evidence_id, relation) and (claim_id, relation) indexes. Left
# to itself the planner may scan a whole scope's links by primary-key prefix instead.

# Current mode: the joined claim if current; else the source itself, but only when none of its live
# evidence supports any claim (so an expired or superseded claim never falls back to raw text).
# The joined rows carry the link's claim id, so that last rule is decided from them in Python
# (:func:`_resolve`) instead of by a NOT EXISTS that would seek the same links a second time.
_RESOLVE_CURRENT = f"""
SELECT s.id, ce.claim_id, c.id
FROM sources AS s
CROSS JOIN evidence AS e
  ON e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
 AND e.deleted_at IS NULL
LEFT JOIN claim_evidence AS ce
  ON ce.evidence_id = e.id AND ce.tenant_id = s.tenant_id AND ce.person_id = s.person_id
 AND ce.relation = {_SUPPORTS}
LEFT JOIN claims AS c
  ON c.id = ce.claim_id AND c.tenant_id = s.tenant_id AND c.person_id = s.person_id
 AND {_CURRENT_CLAIM}
WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
  AND s.id IN ({{ids}})
"""

# as_of mode: the capture must already exist at (V, R); the joined claim must be visible then (the
# joined evidence itself is its visible support); the raw-source fallback only yields to claims that
# are visible at (V, R).
_RESOLVE_AS_OF = f"""
SELECT s.id, NULL, c.id
FROM sources AS s
CROSS JOIN evidence AS e
  ON e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
 AND e.deleted_at IS NULL AND e.recorded_at <= :recorded_at
LEFT JOIN claim_evidence AS ce
  ON ce.evidence_id = e.id AND ce.tenant_id = s.tenant_id AND ce.person_id = s.person_id
 AND ce.relation = {_SUPPORTS}
LEFT JOIN claims AS c
  ON c.id = ce.claim_id AND c.tenant_id = s.tenant_id AND c.person_id = s.person_id
 AND {_visible_claim("c")}
WHERE s.tenant_id = :tenant AND s.person_id = :person AND s.deleted_at IS NULL
  AND s.captured_at <= :valid_at AND s.recorded_at <= :recorded_at
  AND s.id IN ({{ids}})
  AND (c.id IS NOT NULL OR NOT EXISTS (
        SELECT 1 FROM evidence AS e2
        CROSS JOIN claim_evidence AS ce2
          ON ce2.evidence_id = e2.id AND ce2.tenant_id = e2.tenant_id
         AND ce2.person_id = e2.person_id AND ce2.relation = {_SUPPORTS}
        CROSS JOIN claims AS c2
          ON c2.id = ce2.claim_id AND c2.tenant_id = e2.tenant_id AND c2.person_id = e2.person_id
         AND {_visible_claim("c2")}
        WHERE e2.source_id = s.id AND e2.tenant_id = s.tenant_id AND e2.person_id = s.person_id
          AND e2.deleted_at IS NULL
          AND EXISTS (
                SELECT 1 FROM claim_evidence AS ce3
                CROSS JOIN evidence AS e3
                  ON e3.id = ce3.evidence_id AND e3.deleted_at IS NULL
                 AND e3.recorded_at <= :recorded_at
                CROSS JOIN sources AS s3
                  ON s3.id = e3.source_id AND s3.deleted_at IS NULL
                 AND s3.captured_at <= :valid_at AND s3.recorded_at <= :recorded_at
                WHERE ce3.claim_id = c2.id AND ce3.tenant_id = c2.tenant_id
                  AND ce3.person_id = c2.person_id AND ce3.relation = {_SUPPORTS})))
"""


def _next_page_size(size: int, rows_read: int, rows_found: int, row_limit: int, growth: int) -> int:
    """Grow geometrically, or straight to what the qualifying rate seen so far needs.

    Each page re-runs the FTS query (bm25 over every match), so few large pages are cheaper than
    many small ones; resolution is chunked, so a large page costs nothing extra to resolve.
    """
    wanted = row_limit - rows_found
    estimate = 2 * wanted * rows_read // max(rows_found, 1)
    return max(size * growth, estimate)


def _settled(page: list[tuple[int, float]], size: int) -> int:
    """How many leading rows of *page* are final: all of them when the page is the last one.

    Otherwise the rows of the page's worst score may continue on the next page (equal scores come
    in no defined order), so only the rows with a better score are final.
    """
    if len(page) < size:
        return len(page)
    boundary = page[-1][1]
    settled = len(page)
    while settled and page[settled - 1][1] == boundary:
        settled -= 1
    return settled


def _locate(
    conn: sqlite3.Connection, rowids: Sequence[int], id_chunk: int
) -> dict[int, tuple[Any, Any, Any]]:
    """``rowid -> (source_id, tenant_id, person_id)`` of FTS rows."""
    located: dict[int, tuple[Any, Any, Any]] = {}
    for start in range(0, len(rowids), id_chunk):
        chunk = rowids[start : start + id_chunk]
        sql = _LOCATE.format(marks=", ".join("?" * len(chunk)))
        for rowid, source_id, tenant_id, person_id in conn.execute(sql, chunk):
            located[rowid] = (source_id, tenant_id, person_id)
    return located


def _resolve(
    conn: sqlite3.Connection,
    source_ids: Sequence[str],
    params: dict[str, object],
    as_of: bool,
    id_chunk: int = PAGING.id_chunk,
) -> dict[str, list[str | None]]:
    """Each source's qualifying claim ids (``None`` = the source itself), duplicates kept."""
    template = _RESOLVE_AS_OF if as_of else _RESOLVE_CURRENT
    joined: dict[str, list[tuple[str | None, str | None]]] = {}
    for start in range(0, len(source_ids), id_chunk):
        chunk = source_ids[start : start + id_chunk]
        names = [f"s{index}" for index in range(len(chunk))]
        sql = template.replace("{ids}", ", ".join(f":{name}" for name in names))
        bound = {**params, **dict(zip(names, chunk, strict=True))}
        for source_id, link, claim_id in conn.execute(sql, bound):
            joined.setdefault(source_id, []).append((link, claim_id))
    if as_of:  # qualified by the query itself
        return {source_id: [claim for _, claim in rows] for source_id, rows in joined.items()}
    resolved: dict[str, list[str | None]] = {}
    for source_id, rows in joined.items():
        if any(link is not None for link, _ in rows):
            # Some live evidence supports a claim: only rows joined to a current claim count.
            resolved[source_id] = [claim for _, claim in rows if claim is not None]
        else:
            # No supports link at all: every row (one per live evidence) is the source itself.
            resolved[source_id] = [None] * len(rows)
    return resolved


def _block_end(page: list[tuple[int, float]], end: int, settled: int) -> int:
    """*end* moved past the rest of its score (rows of one score are ordered together)."""
    while end < settled and page[end][1] == page[end - 1][1]:
        end += 1
    return end


def _group_end(rows: list[tuple[float, str]], index: int) -> int:
    """The end of the sort group at *index*: FTS rows with the same ``(bm25, source_id)``."""
    end = index + 1
    while end < len(rows) and rows[end] == rows[index]:
        end += 1
    return end


def _claim_order(claim_id: str | None) -> tuple[bool, str]:
    """The contract's order of one group's joined rows: the source itself (NULL) first, then by
    claim id."""
    return claim_id is not None, claim_id or ""


class _Walk:
    """One FTS query read page by page: where the next page starts and how large it is, the
    sources resolved so far, and the size of the next block of rows to look up."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        params: dict[str, object],
        scope: tuple[str, str],
        as_of: bool,
        wanted: int,
        paging: Paging,
    ) -> None:
        self.conn, self.params, self.scope, self.paging = conn, params, scope, paging
        self.as_of = as_of
        self.resolved: dict[str, list[str | None]] = {}
        self.block = min(max(paging.first_block, wanted), paging.id_chunk)
        self.size = max(paging.min_page, paging.rows_per_wanted * wanted, 1)
        # Final rows consumed so far: all of them, and those in the scope (the offsets of the two
        # page queries: every row with a better score than the next page's first is among them).
        self.read_all = self.read_scoped = 0
        self.scoped = False

    def page(self) -> list[tuple[int, float]]:
        """The next page of ``(rowid, bm25)``, best score first."""
        sql = _FTS_SCOPED_PAGE if self.scoped else _FTS_PAGE
        offset = self.read_scoped if self.scoped else self.read_all
        bound = {**self.params, "page": self.size, "offset": offset}
        rows: list[tuple[int, float]] = self.conn.execute(sql, bound).fetchall()
        return rows

    def blocks(
        self, page: list[tuple[int, float]], settled: int
    ) -> Iterator[list[tuple[float, str]]]:
        """The first *settled* rows of *page* in blocks of whole scores, each block's rows of the
        scope as ``(bm25, source_id)`` in contract order; blocks double in size."""
        start = 0
        while start < settled:
            end = _block_end(page, min(start + self.block, settled), settled)
            yield self._in_scope(page[start:end])
            start = end
            self.block = min(2 * self.block, self.paging.id_chunk)

    def _in_scope(self, part: list[tuple[int, float]]) -> list[tuple[float, str]]:
        located = _locate(self.conn, [rowid for rowid, _ in part], self.paging.id_chunk)
        rows: list[tuple[float, str]] = []
        for rowid, score in part:
            source_id, tenant, person = located[rowid]
            if (tenant, person) == self.scope:
                self.read_scoped += 1
                if source_id is not None:  # a NULL id never joins a source
                    rows.append((score, source_id))
        rows.sort()
        return rows

    def targets(self, rows: list[tuple[float, str]]) -> Iterator[Target]:
        """The joined rows of *rows*, one sort group at a time; sources are resolved a block
        ahead, so that work stops with the last row taken."""
        index = resolved_to = 0
        while index < len(rows):
            if index >= resolved_to:
                resolved_to = index + self._resolve_ahead(rows[index : index + self.block])
            group_end = _group_end(rows, index)
            source_id = rows[index][1]
            claims = self.resolved[source_id] * (group_end - index)
            for claim_id in sorted(claims, key=_claim_order):
                yield ("source", source_id) if claim_id is None else ("claim", claim_id)
            index = group_end

    def _resolve_ahead(self, ahead: list[tuple[float, str]]) -> int:
        fresh = sorted({source_id for _, source_id in ahead} - self.resolved.keys())
        found = _resolve(self.conn, fresh, self.params, self.as_of, self.paging.id_chunk)
        for source_id in fresh:
            self.resolved[source_id] = found.get(source_id, [])
        return len(ahead)

    def advance(self, settled: int, emitted: int, row_limit: int) -> None:
        """Start the next page after the *settled* rows, scoped once the scope proves sparse,
        larger by what the rows found so far need."""
        self.read_all += settled
        if not self.scoped and self._scope_is_sparse(emitted, row_limit):
            self.scoped = True
        read = self.read_scoped if self.scoped else self.read_all
        grown = _next_page_size(self.size, read, emitted, row_limit, self.paging.page_growth)
        # A page of one tied score made no progress: it must grow to see past that score.
        self.size = grown if settled else max(grown, 2 * self.size)

    def _scope_is_sparse(self, emitted: int, row_limit: int) -> bool:
        paging = self.paging
        if not self.read_all or self.read_scoped >= paging.scoped_below * self.read_all:
            return False
        growth = paging.page_growth
        next_size = _next_page_size(self.size, self.read_all, emitted, row_limit, growth)
        return self.read_all + next_size > paging.scoped_after


def matching_rows(
    conn: sqlite3.Connection,
    match: str,
    tenant_id: str,
    person_id: str,
    as_of: m.AsOf | None,
    row_limit: int,
    wanted: int,
    paging: Paging = PAGING,
) -> Iterator[Target]:
    """The first *row_limit* qualifying rows of one FTS query as targets, lazily.

    *wanted* is how many of them the caller expects to use; it sizes the first page and block.

    A page is used only up to its last complete score, so all rows of one score are seen together
    (the next page starts at that score again) and are put in source-id order before anything of
    that score is emitted. FTS rows with the same ``(bm25, source_id)`` are one sort group: the
    contract orders their joined rows by claim id across the whole group.
    """
    params: dict[str, object] = {"match": match, "tenant": tenant_id, "person": person_id}
    if as_of is not None:
        params.update(valid_at=as_of.valid_at, recorded_at=as_of.recorded_at)
    walk = _Walk(conn, params, (tenant_id, person_id), as_of is not None, wanted, paging)
    emitted = 0
    while True:
        page = walk.page()
        settled = _settled(page, walk.size)
        for rows in walk.blocks(page, settled):
            for target in walk.targets(rows):
                yield target
                emitted += 1
                if emitted >= row_limit:
                    return
        if len(page) < walk.size:
            return
        walk.advance(settled, emitted, row_limit)


def lexical_ranking(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: str,
    as_of: m.AsOf | None,
    candidate_limit: int,
    *,
    wanted: int | None = None,
    paging: Paging = PAGING,
) -> list[Target]:
    """The lexical list of a search: phrase matches, then token-query recall, de-duplicated.

    Each FTS query has its own ``LIMIT candidate_limit`` on rows; token matches only fill the list
    up to ``candidate_limit`` distinct targets. With *wanted*, only that many first targets of the
    list are returned (a search without a dense list shows only its first ``limit``): rows after
    the one that completes them are never looked up or resolved, and the token query does not run
    when the phrase query already gave them.
    """
    wanted = candidate_limit if wanted is None else min(wanted, candidate_limit)
    ranking: list[Target] = []
    if wanted <= 0 or not scope_has_live_source(conn, tenant_id, person_id):
        return ranking
    queries = build_queries(query)
    seen: set[Target] = set()
    # A phrase that cannot match in scope, or too long to hand to FTS5, is not run (issue 18).
    phrase_rows = (
        matching_rows(
            conn, queries.phrase, tenant_id, person_id, as_of, candidate_limit, wanted, paging
        )
        if phrase_is_worth_running(conn, query, tenant_id, person_id)
        else iter(())
    )
    if extend_distinct(ranking, phrase_rows, seen, wanted) or queries.tokens is None:
        return ranking
    still_wanted = wanted - len(ranking)
    token_rows = matching_rows(
        conn, queries.tokens, tenant_id, person_id, as_of, candidate_limit, still_wanted, paging
    )
    extend_distinct(ranking, token_rows, seen, wanted)
    return ranking
