"""The recall index's terms, exactly as FTS5 makes them (public).

The recall index (:mod:`zkr.store.recall_index`) stores :func:`zkr.store.analysis.index_text` of a
text, which FTS5 then splits, folds and Porter-stems with
:data:`~zkr.store.analysis.RECALL_TOKENIZER`; a query's words go through the same tokenizer. A
store that is not SQLite (the PostgreSQL replica) needs those very terms to rank as zkr does, and
a Python copy of unicode61 and of FTS5's Porter stemmer would drift from them. So the terms are
read from FTS5 itself: the texts go into an in-memory FTS5 table of that tokenizer (one per
thread, never committed) and come back out of its ``fts5vocab`` instance table, in order.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from zkr.store.analysis import RECALL_TOKENIZER, index_text

__all__ = ["fts_tokens", "recall_terms"]

_local = threading.local()


def _tokenizer() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table of the recall tokenizer and its instance vocabulary."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(x, tokenize="{RECALL_TOKENIZER}")')
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        _local.conn = conn
    return conn


def fts_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Each of *texts* as the recall index's tokenizer splits it: its tokens in order (folded,
    Porter-stemmed), with no analysis of its own (a query's terms are already analysed)."""
    if not texts:
        return []
    conn = _tokenizer()
    found: list[list[str]] = [[] for _ in texts]
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO t(rowid, x) VALUES (?, ?)",
            ((i, text.replace("\x00", " ")) for i, text in enumerate(texts)),
        )
        for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            found[doc].append(term)
    finally:
        conn.execute("ROLLBACK")  # nothing is kept: the table is only a tokenizer
    return found


def recall_terms(texts: Sequence[str]) -> list[list[str]]:
    """Each of *texts* as the recall index stores it: :func:`~zkr.store.analysis.index_text`
    (stemmed per language, bigrams of scripts without spaces), then :func:`fts_tokens`."""
    return fts_tokens([index_text(text) for text in texts])
