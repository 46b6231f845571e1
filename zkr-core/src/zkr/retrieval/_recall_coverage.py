"""The recall ranking's coverage factor: the share of the query's words each row of a page holds
(:data:`zkr.retrieval._recall_tuning.COVERAGE_FLOOR`), matched in a private scratch index."""

from __future__ import annotations

import json
import sqlite3
from _thread import _local as _thread_local
from collections.abc import Sequence

from zkr.retrieval._recall_query import recall_concepts
from zkr.store.analysis import RECALL_TOKENIZER

__all__ = ["coverage"]


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
    concepts = recall_concepts(query, prefix_from)
    if len(concepts) < 2 or not sources:
        return {}
    known = {} if known is None else known
    unique = list(dict.fromkeys(sources))
    missing = [source_id for source_id in unique if source_id not in known]
    if missing:
        known.update(_held(conn, concepts, missing))
    return {source_id: known[source_id] / len(concepts) for source_id in unique}


def _held(conn: sqlite3.Connection, concepts: list[str], sources: list[str]) -> dict[str, int]:
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
