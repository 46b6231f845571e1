"""The recall index: a second lexical projection of live captures, built for finding (schema 13).

``recall_fts`` holds one row per live source, at the **source's rowid** (so a row is found, replaced
and removed by a rowid seek, and joins ``sources`` without a lookup column), tokenized with the
Porter stemmer over unicode61 (``nurses`` finds ``nurse``). Its three columns:

* ``content`` — the capture's own text;
* ``statement`` — the claims its evidence supports, read as words: subject, predicate with ``_`` as
  a space, value (``alice lives in Lisbon``), so a question about a fact finds the claim;
* ``context`` — the text of the capture's **neighbours**, searched at a low weight
  (:data:`zkr.retrieval._recall.CONTEXT_WEIGHT`): a question often names the topic a few turns
  away from the turn that answers it.

**Neighbours** (a product decision, parameters chosen on LoCoMo's development conversations 0-4):
the live captures of the same scope and the same kind, on one timeline ordered by ``captured_at``
then by insertion (rowid); a capture's neighbours are the up to :data:`BEFORE` captures before it
and the up to :data:`AFTER` captures after it whose ``captured_at`` is within
:data:`SESSION_GAP_SECONDS` of its own. So a conversation's turns see each other, and neither
yesterday's conversation nor a document read in between does. A capture that arrives or goes
changes exactly the rows whose window holds it — the up to ``AFTER`` captures before it and the
up to ``BEFORE`` after it, within the gap (:func:`index_capture`, :func:`purge_source`) — in the
same transaction as the write.

Two before and one after (schema 13; two on each side before): the window after a capture is
what a new capture at the end of a conversation changes, so one after means one row rewritten
per ``remember`` instead of two (issue 13.3, at 100,000 memories through ``serve``, on one
index: ``remember``'s rate beside contract-only 0.66-0.67 x with two after, 0.71-0.76 x with
one). On LoCoMo's development conversations the recall ranking finds as much with it (hybrid e5
any@10 87.2 % against 87.1 %, the fusion chosen again for it; ``docs/recall.md``).

The context describes the timeline *now*: a search with ``as_of`` only returns what existed then,
but a row's context may hold a later neighbour's words (ranking only; never returned).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from zkr.enums import I64_MAX, I64_MIN
from zkr.store.analysis import RECALL_TOKENIZER, index_text
from zkr.store.fts_rows import unindex_source
from zkr.store.live_rows import SUPPORTED_CLAIMS

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AFTER",
    "BEFORE",
    "RECALL_INDEX_DDL",
    "SESSION_GAP_SECONDS",
    "build_recall_index",
    "context_text",
    "index_capture",
    "purge_source",
    "recreate_recall_index",
    "refresh_evidence_sources",
    "statement_text",
    "window_around",
]

#: Captures before and after a capture that form its context.
BEFORE = 2
AFTER = 1
#: Two captures further apart in time than this are not neighbours (a new session).
SESSION_GAP_SECONDS = 3 * 3600

RECALL_INDEX_DDL = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS recall_fts USING fts5(content, statement, context,
  tokenize="{RECALL_TOKENIZER}");
CREATE INDEX IF NOT EXISTS sources_timeline ON sources(tenant_id, person_id, kind, captured_at);
"""

_SUPPORTS = "'\"supports\"'"

_SOURCE = (
    "SELECT rowid, tenant_id, person_id, kind, captured_at, content, deleted_at"
    " FROM sources WHERE id = ?"
)

# The statements of the claims the source's live evidence supports, in claim id order. The scope
# terms let the evidence_scope index (tenant, person, source) find the evidence by seek.
_STATEMENTS = f"""
SELECT DISTINCT c.id, c.subject, c.predicate, c.value
FROM {SUPPORTED_CLAIMS}
WHERE e.tenant_id = ? AND e.person_id = ? AND e.source_id = ? AND e.deleted_at IS NULL
  AND c.status != 'retracted'
ORDER BY c.id
"""

# Both sides of a capture's timeline in one statement: live captures of the scope and kind, each
# side nearest first, with what their own rows need (rowid, id, text, time) and the side (0 before,
# 1 after). Each side's range ends at the capture's own time: a range over the whole session gap on
# both sides made the index walk every capture of the far half (up to three hours of them) before
# the first one on the asked side. One statement, not one per side: ``remember`` runs it on every
# call (issue 27.2). Parameters by number, bound from one tuple (:func:`_neighbours`): tenant,
# person, kind, the capture's time and rowid, the id left out, the near and far ends of the range,
# each side's limit.
_SIDE = """
SELECT * FROM (
  SELECT {flag} AS side, rowid, id, content, captured_at FROM sources
  WHERE tenant_id = ?1 AND person_id = ?2 AND kind = ?3 AND deleted_at IS NULL
    AND captured_at BETWEEN {range} AND rowid != ?5 AND id != ?6
    AND {side}
  ORDER BY captured_at {order}, rowid {order}
  LIMIT {limit}
)"""
_TIMELINE = (
    _SIDE.format(
        flag=0,
        range="?7 AND ?4",
        side="(captured_at < ?4 OR (captured_at = ?4 AND rowid < ?5))",
        order="DESC",
        limit="?9",
    )
    + "\nUNION ALL"
    + _SIDE.format(
        flag=1,
        range="?4 AND ?8",
        side="(captured_at > ?4 OR (captured_at = ?4 AND rowid > ?5))",
        order="ASC",
        limit="?10",
    )
)


def statement_text(subject: str, predicate: str, value: str) -> str:
    """A claim read as words: ``alice lives_in Lisbon`` -> ``alice lives in Lisbon``."""
    return f"{subject} {predicate.replace('_', ' ')} {value}"


#: A neighbour as the timeline reads it: (rowid, id, content, captured_at).
Neighbour = tuple[int, str, str, int]


def _neighbours(
    conn: sqlite3.Connection,
    row: tuple[object, ...],
    exclude: str,
    before: int = BEFORE,
    after: int = AFTER,
    gaps: int = 1,
) -> tuple[list[Neighbour], list[Neighbour]]:
    """The live captures before (nearest first) and after (nearest first) the source *row* (as
    :data:`_SOURCE` reads it): up to *before* and *after* of them, no further than *gaps* session
    gaps, never the capture *exclude* itself."""
    rowid, tenant, person, kind, captured_at = row[:5]
    assert isinstance(captured_at, int)
    # Clamped to SQLite's integer range: a capture at the i64 limits is legal (issue 18 fuzz).
    low = max(captured_at - gaps * SESSION_GAP_SECONDS, I64_MIN)
    high = min(captured_at + gaps * SESSION_GAP_SECONDS, I64_MAX)
    earlier: list[Neighbour] = []
    later: list[Neighbour] = []
    scope = (tenant, person, kind, captured_at, rowid, exclude, low, high, before, after)
    for side, near_rowid, near_id, content, at in conn.execute(_TIMELINE, scope):
        (later if side else earlier).append((near_rowid, near_id, content, at))
    # Each side nearest first, whatever order the compound select hands its rows back in.
    earlier.sort(key=_place, reverse=True)
    later.sort(key=_place)
    return earlier, later


def _place(neighbour: Neighbour) -> tuple[int, int]:
    """A capture's place on its timeline: its time, then its insertion order (rowid)."""
    return neighbour[3], neighbour[0]


def context_text(before: Sequence[Neighbour], after: Sequence[Neighbour]) -> str:
    """The neighbours' texts in time order, each as the index stores it (its own language)."""
    return "\n".join(
        [index_text(row[2]) for row in reversed(before)] + [index_text(row[2]) for row in after]
    )


def _statement(conn: sqlite3.Connection, tenant: str, person: str, source_id: str) -> str:
    return "\n".join(
        statement_text(subject, predicate, value)
        for _, subject, predicate, value in conn.execute(_STATEMENTS, (tenant, person, source_id))
    )


def _write_row(conn: sqlite3.Connection, source_id: str, exclude: str = "") -> None:
    """(Re)write the row of a live source from the current tables; remove it when not live."""
    row = conn.execute(_SOURCE, (source_id,)).fetchone()
    if row is None:
        return
    rowid, deleted_at = row[0], row[6]
    conn.execute("DELETE FROM recall_fts WHERE rowid = ?", (rowid,))
    if deleted_at is not None or source_id == exclude:
        return
    before, after = _neighbours(conn, row, exclude)
    _insert_row(conn, row, source_id, before, after)


def _insert_row(
    conn: sqlite3.Connection,
    row: tuple[object, ...],
    source_id: str,
    before: list[Neighbour],
    after: list[Neighbour],
    statement: str | None = None,
) -> None:
    """Insert the row of the live source *row* (as :data:`_SOURCE` reads it), with the given
    neighbours as its context; *statement*, when given, is its statement (else it is read)."""
    tenant, person, content = row[1], row[2], row[5]
    assert isinstance(tenant, str) and isinstance(person, str)
    if statement is None:
        statement = _statement(conn, tenant, person, source_id)
    assert isinstance(content, str)
    conn.execute(
        "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, ?, ?)",
        (row[0], index_text(content), index_text(statement), context_text(before, after)),
    )


def window_around(line: Sequence[Neighbour], index: int) -> tuple[list[Neighbour], list[Neighbour]]:
    """The neighbours (each side nearest first) of ``line[index]`` on *line*, a stretch of one
    timeline in order that holds every capture within :data:`BEFORE` places before it,
    :data:`AFTER` places after it and one session gap of it (what :func:`_neighbours` reads)."""
    at = line[index][3]
    before: list[Neighbour] = []
    for neighbour in reversed(line[max(0, index - BEFORE) : index]):
        if neighbour[3] < at - SESSION_GAP_SECONDS:
            break
        before.append(neighbour)
    after: list[Neighbour] = []
    for neighbour in line[index + 1 : index + 1 + AFTER]:
        if neighbour[3] > at + SESSION_GAP_SECONDS:
            break
        after.append(neighbour)
    return before, after


def index_capture(
    conn: sqlite3.Connection,
    source_id: str,
    *,
    statement: str | None = None,
    row: tuple[Any, ...] | None = None,
) -> None:
    """Index a stored capture and refresh the context of the captures whose window holds it (its
    arrival changed them). Idempotent; a deleted source is left out.

    *statement*: a capture stored in this very transaction passes its statement (the claim it
    was stored with, or ``""``); it has no row yet, so none is removed and nothing is read for it.
    *row*: the source row as :data:`_SOURCE` reads it, when the caller has just written it
    (``remember``), so it is not read back.

    The rows written are those :func:`_write_row` would write for the capture and for each
    capture whose window holds it, read with one timeline query (both sides) instead of two per
    row: a stretch of ``BEFORE + AFTER`` captures (and two session gaps) on each side holds every
    such capture's own window. Their text and statement did not change, so only their context is
    rewritten (``remember`` is the hot path: issue 13 measured this upkeep).
    """
    if row is None:
        row = conn.execute(_SOURCE, (source_id,)).fetchone()
        if row is None:
            return
    if statement is None:
        conn.execute("DELETE FROM recall_fts WHERE rowid = ?", (row[0],))
    if row[6] is not None:
        return
    reach = BEFORE + AFTER
    before, after = _neighbours(conn, row, source_id, reach, reach, gaps=2)
    me: Neighbour = (row[0], source_id, row[5], row[4])
    line: list[Neighbour] = [*reversed(before), me, *after]
    own = len(before)
    _insert_row(conn, row, source_id, *window_around(line, own), statement)
    for index in range(max(0, own - AFTER), min(len(line), own + BEFORE + 1)):
        if index != own:
            window = window_around(line, index)
            if me in window[0] or me in window[1]:
                conn.execute(
                    "UPDATE recall_fts SET context = ? WHERE rowid = ?",
                    (context_text(*window), line[index][0]),
                )


def refresh_evidence_sources(conn: sqlite3.Connection, evidence_ids: Iterable[str]) -> None:
    """Rewrite the rows of the evidence's sources: the claims they support changed (a new
    ``supports`` link), so their statements did."""
    for evidence_id in dict.fromkeys(evidence_ids):
        row = conn.execute("SELECT source_id FROM evidence WHERE id = ?", (evidence_id,)).fetchone()
        if row is not None:
            _write_row(conn, row[0])


def purge_source(conn: sqlite3.Connection, source_id: str) -> None:
    """This source's search projection rows are gone: its ``source_fts`` rows, its ``recall_fts``
    row, and its text in the context of every neighbour.

    The one function every path that removes a capture from search calls (``delete``, erasure,
    ``apply`` of a tombstone). Call it while the ``sources`` row still exists (its timeline
    position is read from it); the source is left out of its neighbours' context whether or not it
    is already marked deleted.
    """
    unindex_source(conn, source_id)
    row = conn.execute(_SOURCE, (source_id,)).fetchone()
    if row is None:
        return
    conn.execute("DELETE FROM recall_fts WHERE rowid = ?", (row[0],))
    # The captures whose window holds this one: up to AFTER before it, up to BEFORE after it.
    before, after = _neighbours(conn, row, source_id, before=AFTER, after=BEFORE)
    for _, neighbour_id, _, _ in (*before, *after):
        _write_row(conn, neighbour_id, exclude=source_id)


# Every live source with its neighbours, computed set-wise (the migration and full rebuilds).
_BUILD = """
WITH live AS (
  SELECT rowid AS rid, id, tenant_id, person_id, kind, captured_at, content
  FROM sources WHERE deleted_at IS NULL
), ordered AS (
  SELECT rid, id, captured_at, content{lags}
  FROM live
  WINDOW w AS (PARTITION BY tenant_id, person_id, kind ORDER BY captured_at, rid)
)
SELECT rid, id, content{near} FROM ordered
"""


def recreate_recall_index(
    conn: sqlite3.Connection, *, progress: Callable[[int, int], None] | None = None
) -> int:
    """Drop ``recall_fts`` and build it again with the current tokenizer and analysis (the
    migration to schema 14: the table's tokenizer changed, which only a new table can take);
    returns the number of rows written."""
    conn.execute("DROP TABLE IF EXISTS recall_fts")
    for statement in RECALL_INDEX_DDL.strip().split(";\n"):
        if statement.strip():
            conn.execute(statement)
    return build_recall_index(conn, progress=progress)


def build_recall_index(
    conn: sqlite3.Connection, *, progress: Callable[[int, int], None] | None = None
) -> int:
    """Fill ``recall_fts`` from scratch for every live source (migrations to schemas 11, 13 and
    14); returns the number of rows written. Same rows as writing each capture one by one.

    *progress*, when given, is called with (rows prepared, rows in all) as the rows are
    prepared (the analysis of their text is most of the work) and once at the end."""
    offsets = [-k for k in range(BEFORE, 0, -1)] + list(range(1, AFTER + 1))
    lags = "".join(
        f",\n    "
        f"{'lag' if k < 0 else 'lead'}(content, {abs(k)}) OVER w AS c{i},"
        f" {'lag' if k < 0 else 'lead'}(captured_at, {abs(k)}) OVER w AS t{i}"
        for i, k in enumerate(offsets)
    )
    near = "".join(
        # Not abs(t - captured_at): SQLite's abs() fails on -2^63, a legal difference here.
        f", CASE WHEN t{i} BETWEEN captured_at - {SESSION_GAP_SECONDS}"
        f" AND captured_at + {SESSION_GAP_SECONDS} THEN c{i} END"
        for i in range(len(offsets))
    )
    conn.execute("DELETE FROM recall_fts")
    statements: dict[str, list[str]] = {}
    for source_id, subject, predicate, value, _ in conn.execute(
        "SELECT DISTINCT e.source_id, c.subject, c.predicate, c.value, c.id FROM evidence e"
        " JOIN claim_evidence ce ON ce.evidence_id = e.id AND ce.tenant_id = e.tenant_id"
        f" AND ce.person_id = e.person_id AND ce.relation = {_SUPPORTS}"
        " JOIN claims c ON c.id = ce.claim_id AND c.tenant_id = e.tenant_id"
        " AND c.person_id = e.person_id"
        " WHERE e.deleted_at IS NULL AND c.status != 'retracted' ORDER BY e.source_id, c.id"
    ).fetchall():
        statements.setdefault(source_id, []).append(statement_text(subject, predicate, value))
    rows = []
    live = conn.execute(_BUILD.format(lags=lags, near=near)).fetchall()
    # A capture's text is analysed once, though it is read by its own row and its neighbours'.
    analysed: dict[str, str] = {}

    def text_of(text: str) -> str:
        found = analysed.get(text)
        if found is None:
            found = analysed[text] = index_text(text)
        return found

    for done, (rid, source_id, content, *near_texts) in enumerate(live):
        context = "\n".join(text_of(text) for text in near_texts if text is not None)
        statement = index_text("\n".join(statements.get(source_id, ())))
        rows.append((rid, text_of(content), statement, context))
        if progress is not None and done % 1000 == 0:
            progress(done, len(live))
        if len(analysed) > 10_000:
            analysed.clear()
    rows.sort()
    conn.executemany(
        "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, ?, ?)", rows
    )
    # One bulk insert leaves FTS5 segments mid-merge, and every later one-row write then pays
    # for a share of merging them: at 100,000 memories, merges of 100-300 ms every few dozen
    # remembers, remember at 0.49-0.57 x of contract-only instead of 0.74-0.82 x once merged
    # into one segment here (a second or two at that size).
    conn.execute("INSERT INTO recall_fts(recall_fts) VALUES ('optimize')")
    if progress is not None:
        progress(len(rows), len(rows))
    return len(rows)
