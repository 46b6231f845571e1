"""The recall ranking's lexical list: the recall index (:mod:`zkr.store.recall_index`) matched
by the query's words, ranked by bm25 times the coverage factor, own matches before matches
through neighbours only, resolved to targets (claims replace their captures; a corrected
claim's capture stands for the current version)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from zkr.retrieval._bounds import scope_has_live_source
from zkr.retrieval._fusion import Target
from zkr.retrieval._lexical import _resolve
from zkr.retrieval._recall_coverage import covered_first, prefixes
from zkr.retrieval._recall_query import recall_match
from zkr.retrieval._recall_tuning import DEFAULT_TUNING, RecallTuning
from zkr.store.analysis import RECALL_TOKENIZER, index_text
from zkr.store.live_rows import SUPPORTED_CLAIMS

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr import models as m

__all__ = ["recall_lexical"]

_SUPPORTS = "'\"supports\"'"


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


class _Fetched:
    """The rows of :data:`_PAGE` one search has read (the first *limit* of its order)."""

    __slots__ = ("limit", "rows")

    def __init__(self) -> None:
        self.limit = 0
        self.rows: list[tuple[int, float, int, int]] = []


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
    fetched: _Fetched | None = None,
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
    neighbours' text; *stated* those whose claims' statements match. *fetched* keeps the ranked
    rows read for one search between its pages (:func:`_first_rows`).
    """
    params = {
        "match": match,
        "context": tuning.context_weight,
        "statement": tuning.statement_weight,
        "tenant": tenant_id,
        "person": person_id,
    }
    page = _first_rows(conn, params, max(64, 4 * rows), fetched)
    if not page:
        return [], False
    complete = len(page) < max(64, 4 * rows)
    found = _settled_in_scope(conn, page, complete, tenant_id, person_id)
    if complete or len(found) >= rows:
        found.sort()
        ranked = [(source_id, score, -own, statement) for own, score, source_id, statement in found]
        _note(ranked, scores, context_only, stated)
        return [row[0] for row in ranked], not complete
    ranked = conn.execute(_SCOPED, {**params, "limit": rows + 1}).fetchall()
    _note(ranked[:rows], scores, context_only, stated)
    return [row[0] for row in ranked[:rows]], len(ranked) > rows


def _first_rows(
    conn: sqlite3.Connection, params: dict[str, object], size: int, fetched: _Fetched | None
) -> list[tuple[int, float, int, int]]:
    """The first *size* rows of :data:`_PAGE`'s order (all of them when fewer match).

    The statement ranks every match whatever its limit (a limit of 256 costs about what 64 does),
    so it reads four pages at once and keeps them in *fetched* for the deeper pages the same
    search may ask next: ranking again cost a recall search at 100k a third more on average. The
    first *size* rows of a deeper read settle the same rows as a read of *size*: only rows
    strictly better than the page's last key are settled, and that key does not depend on how
    ties are broken.
    """
    fetched = _Fetched() if fetched is None else fetched
    if fetched.limit < size and len(fetched.rows) == fetched.limit:  # more may match
        fetched.limit = 4 * size
        fetched.rows = conn.execute(_PAGE, {**params, "limit": fetched.limit}).fetchall()
    return fetched.rows[:size]


def _settled_in_scope(
    conn: sqlite3.Connection,
    page: list[tuple[int, float, int, int]],
    complete: bool,
    tenant_id: str,
    person_id: str,
) -> list[tuple[int, float, str, int]]:
    """The ``(-own, bm25, source id, stated)`` of the page's settled rows that are live sources
    of the scope. Rows tied with the page's last key may continue past it: only better ones are
    settled (all of them when the page is the whole match)."""
    boundary = (-page[-1][2], page[-1][1])
    settled = page if complete else [row for row in page if (-row[2], row[1]) < boundary]
    if not settled:
        return []
    marks = ", ".join("?" * len(settled))
    located = {
        rowid: (source_id, tenant, person, deleted)
        for rowid, source_id, tenant, person, deleted in conn.execute(
            _LOCATE.format(marks=marks), [row[0] for row in settled]
        )
    }
    found: list[tuple[int, float, str, int]] = []
    for rowid, score, own, statement in settled:
        hit = located.get(rowid)
        if hit is not None and hit[1] == tenant_id and hit[2] == person_id and hit[3] is None:
            found.append((-own, score, hit[0], statement))
    return found


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


# Captures (of *ids*) whose live evidence supports a claim recorded after R: their statement
# column holds words nobody had said at R.
_LATER_STATEMENTS = f"""
SELECT DISTINCT e.source_id FROM {SUPPORTED_CLAIMS}
WHERE e.tenant_id = :tenant AND e.person_id = :person AND e.deleted_at IS NULL
  AND e.source_id IN (SELECT value FROM json_each(:ids))
  AND c.status != 'retracted' AND c.recorded_from > :recorded_at
"""
# Those captures' rows as they read at R: their own text and the statements of the claims their
# live evidence supported then (as recall_index builds a row, without the later claims).
_ROWS_THEN = f"""
SELECT s.id, s.content, (
  SELECT group_concat(c.subject || ' ' || replace(c.predicate, '_', ' ') || ' ' || c.value, ' ')
  FROM {SUPPORTED_CLAIMS}
  WHERE e.source_id = s.id AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id
    AND e.deleted_at IS NULL AND c.status != 'retracted' AND c.recorded_from <= :recorded_at)
FROM sources AS s WHERE s.id IN (SELECT value FROM json_each(:ids))
"""
# A scratch index with the recall index's tokenizer, private to the connection (temp schema).
_SCRATCH = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_then"
    f' USING fts5(source_id UNINDEXED, content, statement, tokenize="{RECALL_TOKENIZER}")'
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
            (
                (source_id, index_text(content), index_text(statement or ""))
                for source_id, content, statement in conn.execute(
                    _ROWS_THEN, {**params, "ids": json.dumps(later)}
                ).fetchall()
            ),
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
    match = _lexical_match(query, as_of, tuning)
    if match is None:
        return []
    params: dict[str, object] = {"tenant": tenant_id, "person": person_id}
    if as_of is not None:
        params["valid_at"] = as_of.valid_at
        params["recorded_at"] = as_of.recorded_at
    told = _Told(scored, context_only, stated)
    rows = wanted
    fetched, held = _Fetched(), dict[str, int]()  # kept between the pages of this search
    while True:
        page = _Page()
        sources, more = _scored_sources(
            conn, match, tenant_id, person_id, rows, tuning, page.bm25, page.neighbours_only,
            page.statements, fetched,
        )  # fmt: skip
        if as_of is not None:
            sources = _known_then(conn, sources, match, params)
        if as_of is None and tuning.coverage_floor < 1.0:
            # (As of a past time the context column is left out and a statement may hold a
            # later claim: the order stays bm25's there.)
            first = covered_first(
                conn, query, sources, more, page.bm25, page.neighbours_only, tuning, held
            )
        else:
            first = prefixes(sources)
        ranking = _targets(conn, first, rows, wanted, params, as_of is None, page, told)
        if len(ranking) >= wanted or not more:
            return ranking[:wanted]
        rows *= 4  # some sources resolved to nothing (a retracted claim's capture): read deeper


def _lexical_match(query: str, as_of: m.AsOf | None, tuning: RecallTuning) -> str | None:
    """The FTS5 expression of *query* (``None``: no word at all)."""
    match = recall_match(query, tuning.prefix_from)
    if match is None or as_of is None:
        return match
    # A capture's context column describes the timeline now (neighbours recorded later), and
    # its statement column may hold claims recorded after R (linked later). Matched then, a
    # word said only after R would find a capture as of R (knowledge from the future; issue
    # 24): context is left out, and a capture with such a claim is matched again without it.
    return f"{{content statement}} : ({match})"


# Plain classes, not dataclasses: a one-shot search imports this (start-up, issue 27.4).
class _Page:
    """What :func:`_scored_sources` says about the sources of one page."""

    __slots__ = ("bm25", "neighbours_only", "statements")

    def __init__(self) -> None:
        self.bm25: dict[str, float] = {}
        self.neighbours_only: set[str] = set()
        self.statements: set[str] = set()


class _Told:
    """What the caller of :func:`recall_lexical` asked to be told about each target."""

    __slots__ = ("context_only", "scored", "stated")

    def __init__(
        self,
        scored: dict[Target, tuple[float, str]] | None,
        context_only: set[Target] | None,
        stated: set[Target] | None,
    ) -> None:
        self.scored = scored
        self.context_only = context_only
        self.stated = stated

    def note(self, target: Target, source_id: str, page: _Page) -> None:
        if self.scored is not None:
            self.scored[target] = (-page.bm25[source_id], source_id)
        if self.context_only is not None and source_id in page.neighbours_only:
            self.context_only.add(target)
        if self.stated is not None and target[0] == "claim" and source_id in page.statements:
            self.stated.add(target)


def _targets(
    conn: sqlite3.Connection,
    first: Callable[[int], list[str]],
    rows: int,
    wanted: int,
    params: dict[str, object],
    current: bool,
    page: _Page,
    told: _Told,
) -> list[Target]:
    """The sources (*first* gives the first *n*) resolved to distinct targets, in order: the
    first *rows* sources, then (only when they fell short of *wanted*) the rest in blocks.
    *current* (no ``as_of``): a capture whose claims were all corrected stands for their current
    versions."""
    ranking: list[Target] = []
    seen: set[Target] = set()
    start, block = 0, rows
    while len(ranking) < wanted and (chunk := first(start + block)[start:]):
        start, block = start + len(chunk), block * 4
        resolved = _resolve(conn, chunk, params, not current)
        corrected = [source_id for source_id in chunk if resolved.get(source_id) == []]
        if corrected and current:
            tenant_id, person_id = str(params["tenant"]), str(params["person"])
            resolved.update(_successors(conn, corrected, tenant_id, person_id))
        for source_id in chunk:
            claims = sorted(
                set(resolved.get(source_id, [])), key=lambda claim: (claim is not None, claim or "")
            )
            for claim_id in claims:
                target = ("source", source_id) if claim_id is None else ("claim", claim_id)
                if target not in seen:
                    seen.add(target)
                    ranking.append(target)
                    told.note(target, source_id, page)
    return ranking
