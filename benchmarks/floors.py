"""The recall ranking's floors (issue 27.5): what any recall search over the same index and lane
pays at minimum, run in the harness process (no pipe, no JSON, no answer).

* :func:`raw_recall` — the lexical floor: the one stemmed FTS5 statement a recall search cannot do
  without (:data:`RAW_RECALL`): ``MATCH`` of the same expression (``recall_match``) over the same
  recall index, bm25 with the context column's weight, ``ORDER BY … LIMIT`` the search's first page
  (``max(64, 4 x rows)``: 64 for a limit-10 lexical search, :data:`HYBRID_PAGE` for a hybrid one,
  which ranks 40 lexical candidates).
* :class:`Lane` — the dense part of the hybrid floor: the matrix product of the same lane (loaded
  by zkr's own ``load_lane``) with the query vector (over the norms under cosine) and the best
  :data:`DENSE_HEAD` rows by ``argpartition``.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["DENSE_HEAD", "HYBRID_PAGE", "LEXICAL_PAGE", "RAW_RECALL", "Lane", "raw_recall"]

LEXICAL_PAGE = 64  # the first page of a limit-10 recall search: max(64, 4 x 10)
HYBRID_PAGE = 160  # a limit-10 hybrid search ranks 40 lexical candidates: max(64, 4 x 40)
DENSE_HEAD = 80  # the dense head a limit-10 hybrid search reads: 2 x 40 candidates

RAW_RECALL = (
    "SELECT rowid, bm25(recall_fts, 1.0, 1.0, ?) AS score FROM recall_fts"
    " WHERE recall_fts MATCH ? ORDER BY score LIMIT ?"
)


def raw_recall(conn: sqlite3.Connection, query: str, page: int) -> tuple[float, int]:
    """Seconds and rows of :data:`RAW_RECALL` for *query*'s recall expression."""
    from zkr.retrieval._recall import CONTEXT_WEIGHT, recall_match

    match = recall_match(query)
    started = time.perf_counter()
    rows = conn.execute(RAW_RECALL, (CONTEXT_WEIGHT, match, page)).fetchall() if match else []
    return time.perf_counter() - started, len(rows)


class Lane:
    """A corpus's lane as zkr loads it (a private copy of its matrix), for the dense floor."""

    def __init__(self, db: Path, meta: dict[str, Any]) -> None:
        import numpy as np

        import zkr
        from zkr.embeddings.dense import load_lane

        vectors = meta["vectors"]
        with zkr.MemoryDb(str(db)) as memory, memory.atomic(write=False) as conn:
            lane = load_lane(
                memory, conn, meta["tenant_id"], meta["person_id"],
                vectors["model"], vectors["version"], cache=False,
            )  # fmt: skip
        assert lane.config is not None
        self.np = np
        self.matrix = lane.matrix[: lane.high].copy()
        self.norms = lane.norms[: lane.high].copy()
        self.cosine = lane.config[2] == "cosine"

    def scan(self, vector: list[float]) -> float:
        """Seconds of one scan: every row's score, the best :data:`DENSE_HEAD` rows."""
        np = self.np
        started = time.perf_counter()
        query = np.asarray(vector, dtype=np.float32)
        scores = self.matrix @ query
        if self.cosine:
            scores = scores / (np.float32(np.sqrt(query @ query)) * self.norms)
        np.argpartition(-scores, DENSE_HEAD)[:DENSE_HEAD]
        return time.perf_counter() - started


def hybrid_floor(conn: sqlite3.Connection, lane: Lane, query: str, vector: list[float]) -> float:
    """Seconds of the hybrid floor: the lexical floor of the hybrid page, then the dense scan."""
    return raw_recall(conn, query, HYBRID_PAGE)[0] + lane.scan(vector)
