"""The recall ranking's coverage factor: the share of the query's words each row of a page holds
(:data:`zkr.retrieval._recall_tuning.COVERAGE_FLOOR`), matched in a private scratch index."""

from __future__ import annotations

import json
import sqlite3
from _thread import _local as _thread_local
from collections.abc import Callable, Sequence

from zkr.retrieval._recall_query import recall_concepts
from zkr.retrieval._recall_tuning import RecallTuning
from zkr.store.analysis import RECALL_TOKENIZER

__all__ = ["coverage", "covered_first", "prefixes", "shares"]


# The rows of :ids (sources) as the recall index holds them, each under its source's rowid.
_ROWS = """
SELECT s.rowid, s.id, f.content, f.statement, f.context
FROM json_each(:ids) AS j CROSS JOIN sources AS s ON s.id = j.value
CROSS JOIN recall_fts AS f ON f.rowid = s.rowid
"""
# A scratch copy of a page's rows with the recall index's tokenizer and columns, contentless:
# only which rows match is asked of it.
_COVER_SCRATCH = (
    "CREATE VIRTUAL TABLE cover USING fts5(content, statement, context, content='',"
    f' tokenize="{RECALL_TOKENIZER}")'
)


_COVERED = "SELECT rowid FROM cover WHERE cover MATCH ?"
# _thread's local is threading.local (its C type), without importing threading at start-up.
_SCRATCH_BY_THREAD = _thread_local()


def _scratch() -> sqlite3.Connection:
    """This thread's scratch database (in memory, one empty ``cover`` table between searches)."""
    scratch: sqlite3.Connection | None = getattr(_SCRATCH_BY_THREAD, "conn", None)
    if scratch is None:
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        scratch.execute(_COVER_SCRATCH)
        _SCRATCH_BY_THREAD.conn = scratch
    return scratch


def coverage(
    conn: sqlite3.Connection,
    query: str,
    sources: Sequence[str],
    prefix_from: int,
    known: dict[str, int] | None = None,
) -> dict[str, float]:
    """The share of the query's words (:func:`recall_concepts`) each source's row holds; empty
    when the query has fewer than two words (a match then holds all of it).

    bm25 sums its words' scores, so one rare word — or a predicate's several spellings, each
    counted — can outweigh a memory that holds every word asked: "where does Priya work?" was
    answered by the person's own employer claim above ``Priya works_at …``.

    Whether a row matches an FTS5 expression depends on that row's tokens alone, so the page's
    rows are copied into a scratch index with the same tokenizer and each word is matched there.
    Matching each word against the recall index itself, one seek per row, expanded every prefix
    word over the whole index once per row: 70 % of a recall search at 100k memories (issue 27.5).
    The scratch index lives in a private in-memory database, not in *conn*'s temp schema: writing
    there made each search's read transaction create and delete a temp journal file.
    *known* (source id -> words held) keeps the counts between the pages of one search: a deeper
    page copies only its new rows.
    """
    return shares(conn, recall_concepts(query, prefix_from), sources, known)


def shares(
    conn: sqlite3.Connection,
    concepts: Sequence[str],
    sources: Sequence[str],
    known: dict[str, int] | None = None,
) -> dict[str, float]:
    """:func:`coverage` of a query already split into its words' expressions (*concepts*)."""
    if len(concepts) < 2 or not sources:
        return {}
    known = {} if known is None else known
    unique = list(dict.fromkeys(sources))
    missing = [source_id for source_id in unique if source_id not in known]
    if missing:
        known.update(_held(conn, concepts, missing))
    return {source_id: known[source_id] / len(concepts) for source_id in unique}


def _held(conn: sqlite3.Connection, concepts: Sequence[str], sources: list[str]) -> dict[str, int]:
    """How many of *concepts* each source's row holds, by the scratch index.

    The rows go in by rowid: FTS5 flushes its pending terms to a new segment whenever a rowid is
    not above the previous one, so the page's bm25 order made each insert a flush (4x the cost of
    the whole copy, and each word then matched over as many segments).
    """
    held = dict.fromkeys(sources, 0)
    rows = sorted(conn.execute(_ROWS, {"ids": json.dumps(sources)}).fetchall())
    source_of = {row[0]: row[1] for row in rows}
    scratch = _scratch()
    try:
        scratch.execute("BEGIN")
        scratch.executemany(
            "INSERT INTO cover(rowid, content, statement, context) VALUES (?, ?, ?, ?)",
            (row[:1] + row[2:] for row in rows),
        )
        for concept in concepts:
            for (rowid,) in scratch.execute(_COVERED, (concept,)):
                held[source_of[rowid]] += 1
    finally:
        if scratch.in_transaction:  # empty again for the next search
            scratch.execute("ROLLBACK")
    return held


def prefixes(sources: list[str]) -> Callable[[int], list[str]]:
    """The function giving the first *n* of *sources*."""
    return lambda count: sources[:count]


def covered_first(
    conn: sqlite3.Connection,
    query: str,
    sources: list[str],
    more: bool,
    bm25: dict[str, float],
    neighbours_only: set[str],
    tuning: RecallTuning,
    held: dict[str, int],
) -> Callable[[int], list[str]]:
    """*sources* (a page of the recall lexical list's rows, by (own matches first, bm25, id))
    ordered again by (own matches first, bm25 times the coverage factor
    (:data:`~zkr.retrieval._recall_tuning.COVERAGE_FLOOR`), id), as the function giving the first
    *n* of them (fewer: all the page settles); their *bm25* scores are scaled in place as they
    are counted. *held* keeps the words each row holds between the pages of one search.

    A factor never exceeds 1 and bm25 here is negative (lower is better), so a row past the page
    scores no better than the page's last row did unscaled: only the rows that now score better
    than that are settled, the others are left for a deeper page (*more*: one may exist)."""
    concepts = recall_concepts(query, tuning.prefix_from)
    if len(concepts) < 2 or not sources:
        return prefixes(sources)
    covered = _Covered(conn, concepts, sources, bm25, neighbours_only, held)
    covered.floor = tuning.coverage_floor
    covered.last = covered.key(sources[-1]) if more else None  # the page's own rule, unscaled
    return covered.first


# A plain class, not a dataclass: a one-shot search imports this (start-up, issue 27.4).
class _Covered:
    """:func:`covered_first`'s order, counted only as deep as the rows asked for need.

    Counting the words a row holds costs a copy into the scratch index, and a search usually
    takes its list from the first rows of a page. Rows are counted in growing runs, best
    unscaled first; a counted row is settled once it scores better than the first row not yet
    counted did unscaled (that row and every later one score no better than that); once the
    whole page is counted the rule is the page's own. So the settled rows are always the first
    rows of one order, and when as many are asked for as the page holds, exactly the whole
    page's settled rows.
    """

    __slots__ = ("bm25", "concepts", "conn", "counted", "floor", "held", "last", "neighbours_only",
                 "settled", "sources")  # fmt: skip

    def __init__(
        self,
        conn: sqlite3.Connection,
        concepts: list[str],
        sources: list[str],
        bm25: dict[str, float],
        neighbours_only: set[str],
        held: dict[str, int],
    ) -> None:
        self.conn, self.concepts, self.sources, self.held = conn, concepts, sources, held
        self.bm25, self.neighbours_only = bm25, neighbours_only
        self.floor = 1.0
        self.last: tuple[bool, float] | None = None
        self.counted = 0
        self.settled: list[str] = []

    def key(self, source_id: str) -> tuple[bool, float]:
        """A source's place (scaled once counted), without the id that breaks ties."""
        return source_id in self.neighbours_only, self.bm25[source_id]

    def first(self, count: int) -> list[str]:
        """The first *count* settled sources (fewer: all the page settles)."""
        while len(self.settled) < count and self.counted < len(self.sources):
            self._count(min(len(self.sources), max(2 * count, 32, 2 * self.counted)))
        return self.settled[:count]

    def _count(self, upto: int) -> None:
        """Count and scale the rows before *upto*, and settle what that settles."""
        bm25, floor, sources = self.bm25, self.floor, self.sources
        part = sources[self.counted : upto]
        for source_id, share in shares(self.conn, self.concepts, part, self.held).items():
            bm25[source_id] *= floor + (1.0 - floor) * share
        self.counted = upto
        boundary = self.key(sources[upto]) if upto < len(sources) else self.last
        ordered = sorted(sources[:upto], key=lambda source_id: (*self.key(source_id), source_id))
        if boundary is not None:
            ordered = [source_id for source_id in ordered if self.key(source_id) < boundary]
        self.settled = ordered
