"""Storing many new captures in one transaction: exactly the rows, search projections and feed
commits that ``remember`` writes for each of them one by one, with reused statements.

``zkr import`` and ``zkr import --from`` store a history by the thousand. Per capture,
``remember`` runs about 12 statements in its own transaction and reads the capture's timeline
twice. :class:`CaptureBatch` writes a batch table by table (``executemany`` of
:mod:`zkr.writes.capture`'s statements), builds each feed record from the values in hand as
``remember`` does (:mod:`zkr.writes.capture_feed`: the JSON bytes :mod:`zkr.store.records` builds
from the stored row), writes the ``source_fts`` rows with one ``INSERT … SELECT`` and reads each
timeline the batch touches once for the recall index.

What stays the same (``tests/core/test_bulk_capture.py`` compares whole databases byte for byte):
every table's rows and rowids; ids drawn in remember's order (source, evidence, claim per capture,
also for a capture refused on its claim); one feed commit per capture, its records in remember's
order; the ``source_fts`` and ``recall_fts`` contents. Only FTS5's segment layout differs (fewer,
larger flushes), which no answer reads.

A capture given to :meth:`CaptureBatch.add` must be new: its ingestion key neither stored in its
scope (:meth:`CaptureBatch.key_state`) nor pending in the batch. A replay goes through ``remember``
after :meth:`CaptureBatch.flush`, so it sees every capture before it.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from zkr import models as m
from zkr.store.analysis import index_text
from zkr.store.fts_rows import index_source
from zkr.store.recall_index import (
    AFTER,
    BEFORE,
    context_text,
    index_capture,
    statement_text,
    window_around,
)
from zkr.writes.capture import (
    INSERT_CLAIM,
    INSERT_CLAIM_EVIDENCE,
    INSERT_EVIDENCE,
    INSERT_LOCATOR,
    INSERT_SOURCE,
    SET_ORIGINS,
    capture_id,
    evidence_row,
    locator_row,
    remember_claim_row,
    require_claim_text,
    source_row,
    supports_row,
    validate_remember,
)
from zkr.writes.capture_feed import capture_payloads

__all__ = ["FLUSH_AT", "CaptureBatch", "KeyState", "journals_in_memory"]

#: Pending captures written at once, whatever the caller's batch: bounds the memory a long
#: transaction (``import --from`` stores a whole export in one) holds in Python.
FLUSH_AT = 5000


@contextlib.contextmanager
def journals_in_memory(conn: sqlite3.Connection) -> Iterator[None]:
    """Keep *conn*'s temporary files in memory (``PRAGMA temp_store = MEMORY``) for the block,
    then restore its setting. Enter it outside any transaction.

    Every row an ``executemany`` inserts is one statement that may abort (a scope trigger, a
    unique key), so SQLite saves the original of each page it changes in a statement journal,
    which it writes to a temporary file once past 64 KiB. In a long transaction that was most of
    a bulk import's system time: ~15 page writes per capture, 4.3 million ``pwrite`` calls for
    100,000 captures, a quarter of the import's CPU. A row's journal is a few pages, dropped when
    the row is done, so memory stays flat."""
    (before,) = conn.execute("PRAGMA temp_store").fetchone()
    conn.execute("PRAGMA temp_store = MEMORY")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA temp_store = {int(before)}")


class KeyState(Enum):
    """What an ingestion key names in its scope."""

    #: Nothing: a capture under it is new.
    NEW = "new"
    #: A stored (or pending) capture: a request under it is a replay.
    STORED = "stored"
    #: A capture ``forget`` erased: a copy of its content is dropped.
    ERASED = "erased"


_KEY_STATE = (
    "SELECT s.id, EXISTS(SELECT 1 FROM erasures x WHERE x.tenant_id = s.tenant_id"
    " AND x.person_id = s.person_id AND x.target_kind = 'source' AND x.target_id = s.id)"
    " FROM sources s WHERE s.tenant_id = ? AND s.person_id = ? AND s.ingestion_key = ?"
)
_KEY_STATES = (
    "SELECT s.ingestion_key, EXISTS(SELECT 1 FROM erasures x WHERE x.tenant_id = s.tenant_id"
    " AND x.person_id = s.person_id AND x.target_kind = 'source' AND x.target_id = s.id)"
    " FROM sources s WHERE s.tenant_id = ? AND s.person_id = ?"
    " AND s.ingestion_key IN ({marks})"
)
_KEYS_PER_QUERY = 500
#: Key states :class:`CaptureBatch` keeps past a flush (beyond them it asks the table again).
_KEYS_KEPT = 4 * FLUSH_AT
_INSERT_COMMIT = "INSERT INTO memory_commits(tenant_id, person_id, recorded_at) VALUES (?, ?, ?)"
_INSERT_EVENT = (
    "INSERT INTO memory_export_events(commit_sequence, event_index, payload) VALUES (?, ?, ?)"
)
_INSERT_KEYED_FTS = (
    "INSERT INTO source_fts(rowid, source_id, tenant_id, person_id, content)"
    " SELECT rowid, id, tenant_id, person_id, content FROM sources"
    " WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
)
_INSERT_RECALL = "INSERT INTO recall_fts(rowid, content, statement, context) VALUES (?, ?, ?, ?)"
_UPDATE_CONTEXT = "UPDATE recall_fts SET context = ? WHERE rowid = ?"
# A timeline (scope and kind, live captures, by time then rowid) as the recall index reads it.
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
#: Captures on each side of a batch's stretch of a timeline that a window can reach.
_REACH = BEFORE + AFTER

#: A timeline row: (rowid, id, content, captured_at).
_Row = tuple[int, str, str, int]


@dataclass(frozen=True)
class _Pending:
    """A new capture waiting in the batch, with its ids and feed payloads."""

    request: m.RememberRequest
    source_id: str
    evidence_id: str
    claim_id: str | None
    payloads: tuple[str, ...]
    statement: str


class CaptureBatch:
    """New captures of one transaction, written together by :meth:`flush`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pending: list[_Pending] = []
        #: Known states of keys: read ahead (:meth:`read_keys`), or stored by :meth:`add`. Only
        #: :meth:`add` changes a key's state inside the transaction (a replay stores no key).
        self._keys: dict[tuple[str, str, str], KeyState] = {}

    def key_state(self, tenant_id: str, person_id: str, ingestion_key: str) -> KeyState:
        """What *ingestion_key* names in the scope, the batch's pending captures included."""
        known = self._keys.get((tenant_id, person_id, ingestion_key))
        if known is not None:
            return known
        row = self.conn.execute(_KEY_STATE, (tenant_id, person_id, ingestion_key)).fetchone()
        if row is None:
            return KeyState.NEW
        return KeyState.ERASED if row[1] else KeyState.STORED

    def read_keys(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Read the states of many (tenant, person, ingestion key) at once, one query per scope,
        for :meth:`key_state` to answer without a query each (~7 µs of SQLite and as much of
        Python per line of an import)."""
        scopes: dict[tuple[str, str], set[str]] = defaultdict(set)
        for tenant_id, person_id, key in keys:
            if (tenant_id, person_id, key) not in self._keys:
                scopes[(tenant_id, person_id)].add(key)
        for (tenant_id, person_id), wanted in scopes.items():
            ordered = sorted(wanted)
            found: dict[str, KeyState] = {}
            # Bound parameters, not a JSON array: a key is compared exactly as given.
            for start in range(0, len(ordered), _KEYS_PER_QUERY):
                chunk = ordered[start : start + _KEYS_PER_QUERY]
                query = _KEY_STATES.format(marks=", ".join("?" * len(chunk)))
                for key, erased in self.conn.execute(query, (tenant_id, person_id, *chunk)):
                    found[key] = KeyState.ERASED if erased else KeyState.STORED
            for key in ordered:
                self._keys[(tenant_id, person_id, key)] = found.get(key, KeyState.NEW)

    def add(self, request: m.RememberRequest) -> str:
        """Queue a new capture (see the module docstring); returns its source id.

        Refused exactly as ``remember`` refuses it, and then nothing is queued.

        :raises InvalidRequest: a blank field, a bad locator range.
        :raises LimitExceeded: a feed record over 1 MiB.
        """
        validate_remember(request)
        # Ids drawn where remember draws them, so the same id source gives the same ids.
        source_id = capture_id()
        evidence_id = capture_id()
        claim = request.claim
        claim_id: str | None = None
        statement = ""
        if claim is not None:
            require_claim_text(claim.subject, claim.predicate, claim.value)
            claim_id = capture_id()
            statement = statement_text(claim.subject, claim.predicate, claim.value)
        payloads = capture_payloads(request, source_id, evidence_id, claim_id)
        self.pending.append(
            _Pending(request, source_id, evidence_id, claim_id, payloads, statement)
        )
        if request.ingestion_key is not None:
            key = (request.tenant_id, request.person_id, request.ingestion_key)
            self._keys[key] = KeyState.STORED
        if len(self.pending) >= FLUSH_AT:
            self.flush()
        return source_id

    def flush(self) -> None:
        """Write every pending capture: its rows, search projections and feed commit."""
        pending, self.pending = self.pending, []
        if len(self._keys) > _KEYS_KEPT:
            self._keys.clear()  # a bound on memory: the table answers for the keys dropped
        if not pending:
            return
        conn = self.conn
        rowids = self._insert_sources(pending)
        self._index_sources(pending, rowids)
        conn.executemany(
            INSERT_EVIDENCE,
            [
                evidence_row(
                    p.evidence_id,
                    p.request.tenant_id,
                    p.request.person_id,
                    p.source_id,
                    p.request.text,
                    p.request.recorded_at,
                )
                for p in pending
            ],
        )
        conn.executemany(
            INSERT_LOCATOR,
            [
                locator_row(
                    p.request.tenant_id, p.request.person_id, p.evidence_id, p.request.locator
                )
                for p in pending
                if p.request.locator is not None
            ],
        )
        claimed = [p for p in pending if p.claim_id is not None and p.request.claim is not None]
        conn.executemany(INSERT_CLAIM, [_claim_row(p) for p in claimed])
        conn.executemany(
            INSERT_CLAIM_EVIDENCE,
            [
                supports_row(
                    p.request.tenant_id, p.request.person_id, str(p.claim_id), p.evidence_id
                )
                for p in claimed
            ],
        )
        conn.executemany(SET_ORIGINS, [(p.evidence_id, p.claim_id, p.source_id) for p in pending])
        _index_recall(conn, pending, rowids)
        self._append_commits(pending)

    def _insert_sources(self, pending: list[_Pending]) -> list[int]:
        """Insert the sources (origins still null); returns their rowids, in order."""
        conn = self.conn
        (before,) = conn.execute("SELECT coalesce(max(rowid), 0) FROM sources").fetchone()
        rows = [
            source_row(
                p.source_id,
                p.request.tenant_id,
                p.request.person_id,
                p.request.kind,
                p.request.text,
                p.request.captured_at,
                p.request.recorded_at,
                p.request.ingestion_key,
            )
            for p in pending
        ]
        inserted = conn.executemany(INSERT_SOURCE, rows).rowcount
        if inserted != len(pending):
            # The caller checked every key inside this transaction: a broken promise, not input.
            raise RuntimeError("an ingestion key of the batch is already stored")
        # New rows take max(rowid) + 1, in order, unless the largest rowid is taken (then SQLite
        # picks free ones at random): read them back and check.
        found = conn.execute(
            "SELECT rowid, id FROM sources WHERE rowid > ? ORDER BY rowid", (before,)
        ).fetchall()
        if [row[1] for row in found] == [p.source_id for p in pending]:
            return [row[0] for row in found]
        by_id = "SELECT rowid FROM sources WHERE id = ?"
        return [conn.execute(by_id, (p.source_id,)).fetchone()[0] for p in pending]

    def _index_sources(self, pending: list[_Pending], rowids: list[int]) -> None:
        """The ``source_fts`` rows (:func:`zkr.store.fts_rows.index_source` for each, at once when
        the new rowids are one run and their slots are free)."""
        first, last = rowids[0], rowids[-1]
        if last - first + 1 == len(rowids):
            try:
                self.conn.execute(_INSERT_KEYED_FTS, (first, last))
                return
            except sqlite3.IntegrityError:
                pass  # a slot is taken (hand-edited tables): the one-by-one rule handles it
        for item in pending:
            index_source(self.conn, item.source_id)

    def _append_commits(self, pending: list[_Pending]) -> None:
        """One commit per capture, as :func:`zkr.store.commits.append_commit` appends it."""
        conn = self.conn
        (before,) = conn.execute("SELECT coalesce(max(sequence), 0) FROM memory_commits").fetchone()
        conn.executemany(
            _INSERT_COMMIT,
            [(p.request.tenant_id, p.request.person_id, p.request.recorded_at) for p in pending],
        )
        # AUTOINCREMENT: each new sequence is above every earlier one, so the rows above the
        # largest before are the batch's, in order.
        sequences = [
            row[0]
            for row in conn.execute(
                "SELECT sequence FROM memory_commits WHERE sequence > ? ORDER BY sequence",
                (before,),
            )
        ]
        if len(sequences) != len(pending):
            raise RuntimeError("memory_commits changed under the batch")
        conn.executemany(
            _INSERT_EVENT,
            [
                (sequence, index, payload)
                for sequence, item in zip(sequences, pending, strict=True)
                for index, payload in enumerate(item.payloads)
            ],
        )


def _claim_row(item: _Pending) -> tuple[object, ...]:
    assert item.claim_id is not None
    return remember_claim_row(item.claim_id, item.request)


# ----------------------------------------------------------------------------------------------
# The recall index, one timeline read per batch
# ----------------------------------------------------------------------------------------------


def _index_recall(conn: sqlite3.Connection, pending: list[_Pending], rowids: list[int]) -> None:
    """The recall rows of the new captures, and the context of the captures whose window now holds
    one: the rows :func:`zkr.store.recall_index.index_capture` writes for each, in one pass per
    timeline (scope and kind). A batch spread thinly over a long stored timeline (more stored
    captures between its first and last than it brings) takes ``index_capture`` one by one."""
    timelines: dict[tuple[str, str, str], list[tuple[int, _Pending]]] = defaultdict(list)
    for rowid, item in zip(rowids, pending, strict=True):
        request = item.request
        kind = json.dumps(request.kind.value)  # as stored (contract §3.2)
        timelines[(request.tenant_id, request.person_id, kind)].append((rowid, item))
    inserts: list[tuple[int, str, str, str]] = []
    updates: list[tuple[str, int]] = []
    for timeline, items in timelines.items():
        if not _index_timeline(conn, timeline, items, inserts, updates):
            for _, item in items:
                index_capture(conn, item.source_id, statement=item.statement)
    # FTS5 keeps pending rows in rowid order and writes them out as a new segment whenever a
    # row comes below the last one (an update of a stored row, the next timeline's first row):
    # written timeline by timeline that was ~20 small segments per batch, each merged again
    # later. Updates (stored rows, all below the new ones) first, then the new rows, each in
    # rowid order: one segment per batch, written at commit.
    updates.sort(key=lambda row: row[1])
    inserts.sort()
    conn.executemany(_UPDATE_CONTEXT, updates)
    conn.executemany(_INSERT_RECALL, inserts)


def _index_timeline(
    conn: sqlite3.Connection,
    timeline: tuple[str, str, str],
    items: Sequence[tuple[int, _Pending]],
    inserts: list[tuple[int, str, str, str]],
    updates: list[tuple[str, int]],
) -> bool:
    """Add the rows of one timeline's new captures to *inserts*, and the new contexts of its
    stored captures to *updates* (see :func:`_index_recall`); ``False``, having added nothing,
    when the stretch they span holds too many stored captures."""
    new = {rowid: item for rowid, item in items}
    positions = sorted((item.request.captured_at, rowid) for rowid, item in items)
    (low_at, low_rowid), (high_at, high_rowid) = positions[0], positions[-1]
    limit = 2 * len(items) + 64
    middle: list[_Row] = conn.execute(_MIDDLE, (*timeline, low_at, high_at, limit + 1)).fetchall()
    if len(middle) > limit:
        return False
    low, high = (low_at, low_rowid), (high_at, high_rowid)
    middle = [row for row in middle if low <= (row[3], row[0]) <= high]
    before: list[_Row] = conn.execute(
        _EDGE_BEFORE, (*timeline, low_at, low_at, low_rowid, _REACH)
    ).fetchall()
    after: list[_Row] = conn.execute(
        _EDGE_AFTER, (*timeline, high_at, high_at, high_rowid, _REACH)
    ).fetchall()
    line = [*reversed(before), *middle, *after]
    for index, row in enumerate(line):
        earlier, later = window_around(line, index)
        item = new.get(row[0])
        if item is not None:
            # Each column as the index stores it (its own language): zkr.store.analysis.
            inserts.append(
                (
                    row[0],
                    index_text(item.request.text),
                    index_text(item.statement),
                    context_text(earlier, later),
                )
            )
        elif any(n[0] in new for n in earlier) or any(n[0] in new for n in later):
            updates.append((context_text(earlier, later), row[0]))
    return True
