"""The recall index's backlog: ``remember`` defers its recall rows, every other use applies them.

``remember`` is the hot path of a host (one call per stored turn, through ``serve``). Writing its
recall row and its neighbour's new context in its own transaction cost most of what ``remember``
spends beyond the contract's rows: FTS5 tokenizes the neighbour's three old columns to delete
them, and flushes and merges a one-row segment at every commit (issue 27.2). So ``remember``
writes one row here instead — the new capture's rowid, in ``recall_backlog`` (schema 15) — and
the rows are written in batches, as ``zkr import`` writes them, one FTS5 segment per batch.

The recall index stays exact for every reader because the backlog is applied
(:func:`apply_backlog`)

* at the start of every transaction that is not ``remember``'s
  (:meth:`zkr.store.database.Database.atomic`): every read (a recall search, with or without
  ``as_of``) and every other mutation (delete, forget, correct, link, apply, import …) sees an
  index with every live capture in it, and a mutation that removes a capture finds it indexed,
  so ``purge_source`` removes its words from its neighbours exactly as before;
* by ``remember`` itself when the backlog reaches :data:`FLUSH_AT` rows, so it never grows without
  bound (a host that only ever remembers pays one batch every ``FLUSH_AT`` calls).

Applying reads the sources' *current* rows: a capture that is no longer live is not indexed (a
mutation that deletes applies the backlog first anyway), so erasure stays exact. The rows written
are those :func:`zkr.store.recall_index.index_capture` writes for each capture one by one, in
rowid order (the same rule as the bulk writer, :mod:`zkr.writes.bulk`); only FTS5's segment
layout differs, which no answer reads. The table is created with the recall index
(:data:`zkr.store.recall_index.RECALL_INDEX_DDL`); a full rebuild empties it.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from zkr.store.analysis import index_text
from zkr.store.recall_index import (
    AFTER,
    BEFORE,
    Neighbour,
    context_text,
    index_capture,
    statement_of,
    window_around,
)

__all__ = ["FLUSH_AT", "apply_backlog", "defer_capture"]

#: Deferred captures at which ``remember`` applies the backlog in its own transaction.
FLUSH_AT = 64

_LINE = (
    "SELECT rowid, id, content, captured_at FROM sources"
    " WHERE tenant_id = ? AND person_id = ? AND kind = ? AND deleted_at IS NULL"
)
_MIDDLE = _LINE + " AND captured_at BETWEEN ? AND ? ORDER BY captured_at, rowid LIMIT ?"
_EDGE_BEFORE = (
    _LINE + " AND captured_at <= ? AND (captured_at < ? OR rowid < ?)"
    " ORDER BY captured_at DESC, rowid DESC LIMIT ?"
)
_EDGE_AFTER = (
    _LINE + " AND captured_at >= ? AND (captured_at > ? OR rowid > ?)"
    " ORDER BY captured_at, rowid LIMIT ?"
)
_REACH = BEFORE + AFTER
_HAS_ROW = "SELECT 1 FROM recall_fts WHERE rowid = ?"
_SOURCES = (
    "SELECT rowid, id, tenant_id, person_id, kind, captured_at FROM sources"
    " WHERE deleted_at IS NULL AND rowid IN (SELECT source_rowid FROM recall_backlog)"
    " ORDER BY rowid"
)


def defer_capture(conn: sqlite3.Connection, rowid: int) -> None:
    """Leave the recall rows of the capture just stored at *rowid* for later (``remember``'s
    transaction); apply the backlog at once when it holds :data:`FLUSH_AT` captures."""
    conn.execute("INSERT OR IGNORE INTO recall_backlog(source_rowid) VALUES (?)", (rowid,))
    (waiting,) = conn.execute("SELECT count(*) FROM recall_backlog").fetchone()
    if waiting >= FLUSH_AT:
        apply_backlog(conn)


def apply_backlog(conn: sqlite3.Connection) -> int:
    """Write the recall rows of every deferred capture still live, and the context of the stored
    captures whose window holds one; empty the backlog. In the caller's write transaction.
    Returns the number of captures indexed."""
    sources = conn.execute(_SOURCES).fetchall()
    conn.execute("DELETE FROM recall_backlog")
    timelines: dict[tuple[str, str, str], list[tuple[int, str, int]]] = defaultdict(list)
    for rowid, source_id, tenant, person, kind, captured_at in sources:
        timelines[(tenant, person, kind)].append((rowid, source_id, captured_at))
    inserts: list[tuple[int, str, str, str]] = []
    updates: list[tuple[str, int]] = []
    for timeline, items in timelines.items():
        if not _index_timeline(conn, timeline, items, inserts, updates):
            for _, source_id, _ in items:
                index_capture(conn, source_id)
    # A deferred capture has no row yet, unless a write in the same transaction (a delete's
    # purge of its neighbour) wrote it already: that one is replaced.
    conn.executemany(
        "DELETE FROM recall_fts WHERE rowid = ?",
        [(row[0],) for row in inserts if conn.execute(_HAS_ROW, (row[0],)).fetchone()],
    )
    # As the bulk writer (zkr.writes.bulk): stored rows' contexts, then the new rows, each in
    # rowid order, so FTS5 writes one segment for the batch.
    updates.sort(key=lambda row: row[1])
    inserts.sort()
    conn.executemany("UPDATE recall_fts SET context = ? WHERE rowid = ?", updates)
    conn.executemany(
        "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, ?, ?)", inserts
    )
    return len(sources)


def _index_timeline(
    conn: sqlite3.Connection,
    timeline: tuple[str, str, str],
    items: list[tuple[int, str, int]],
    inserts: list[tuple[int, str, str, str]],
    updates: list[tuple[str, int]],
) -> bool:
    """Add the rows of one timeline's deferred captures to *inserts* and the new contexts of its
    stored captures to *updates*; ``False``, having added nothing, when the stretch they span
    holds too many stored captures (then one by one is cheaper)."""
    new = {rowid for rowid, _, _ in items}
    positions = sorted((at, rowid) for rowid, _, at in items)
    (low_at, low_rowid), (high_at, high_rowid) = positions[0], positions[-1]
    limit = 2 * len(items) + 64
    middle: list[Neighbour] = conn.execute(
        _MIDDLE, (*timeline, low_at, high_at, limit + 1)
    ).fetchall()
    if len(middle) > limit:
        return False
    low, high = (low_at, low_rowid), (high_at, high_rowid)
    middle = [row for row in middle if low <= (row[3], row[0]) <= high]
    before: list[Neighbour] = conn.execute(
        _EDGE_BEFORE, (*timeline, low_at, low_at, low_rowid, _REACH)
    ).fetchall()
    after: list[Neighbour] = conn.execute(
        _EDGE_AFTER, (*timeline, high_at, high_at, high_rowid, _REACH)
    ).fetchall()
    line = [*reversed(before), *middle, *after]
    tenant, person, _ = timeline
    for index, row in enumerate(line):
        earlier, later = window_around(line, index)
        if row[0] in new:
            # Each column as the index stores it (its own language): zkr.store.analysis.
            statement = statement_of(conn, tenant, person, row[1])
            inserts.append(
                (row[0], index_text(row[2]), index_text(statement), context_text(earlier, later))
            )
        elif any(n[0] in new for n in earlier) or any(n[0] in new for n in later):
            updates.append((context_text(earlier, later), row[0]))
    return True
