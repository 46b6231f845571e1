"""Storing many new captures in one transaction: exactly the rows, search projections and feed
commits that ``remember`` writes for each of them one by one, with reused statements.

``zkr import`` and ``zkr import --from`` store a history by the thousand. Per capture,
``remember`` runs about 17 statements, reads its rows back to build its feed records through the
models and reads the capture's timeline twice. :class:`CaptureBatch` writes a batch table by table
(``executemany`` of :mod:`zkr.writes.capture`'s statements), builds each feed record from the
values in hand (the JSON bytes :mod:`zkr.store.records` builds from the stored row), writes the
``source_fts`` rows with one ``INSERT … SELECT`` and reads each timeline the batch touches once for
the recall index.

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

import json
import sqlite3
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from zkr import models as m
from zkr.errors import LimitExceeded
from zkr.feed.commits import MAX_EXPORT_RECORD_BYTES
from zkr.jsonio import ordered_dumps
from zkr.store.fts_rows import index_source
from zkr.store.recall_index import (
    AFTER,
    BEFORE,
    SESSION_GAP_SECONDS,
    index_capture,
    statement_text,
)
from zkr.writes.capture import (
    FULL_CONFIDENCE,
    INSERT_CLAIM,
    INSERT_CLAIM_EVIDENCE,
    INSERT_EVIDENCE,
    INSERT_LOCATOR,
    INSERT_SOURCE,
    SET_ORIGINS,
    capture_id,
    claim_row,
    evidence_row,
    locator_row,
    require_claim_text,
    source_row,
    supports_row,
    validate_remember,
)

__all__ = ["CaptureBatch", "KeyState"]


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


def _payload(kind: str, record: Mapping[str, object]) -> str:
    """One feed event, as :func:`zkr.feed.commits.serialize_record` writes it; refused when
    larger than remember's limit."""
    payload = ordered_dumps({"kind": kind, "record": record})
    # Cheap first: a str of n characters is at most 4n bytes of UTF-8.
    if len(payload) * 4 > MAX_EXPORT_RECORD_BYTES and (
        len(payload.encode("utf-8")) > MAX_EXPORT_RECORD_BYTES
    ):
        raise LimitExceeded(f"export record exceeds {MAX_EXPORT_RECORD_BYTES} bytes")
    return payload


def _payloads(
    request: m.RememberRequest, source_id: str, evidence_id: str, claim_id: str | None
) -> tuple[str, ...]:
    """The feed records of a new capture, in remember's order (source, evidence, claim, link),
    with the fields of the :mod:`zkr.models` records in declaration order."""
    tenant, person, at = request.tenant_id, request.person_id, request.recorded_at
    source = {
        "id": source_id,
        "tenant_id": tenant,
        "person_id": person,
        "revision": 1,
        "kind": request.kind.value,
        "content": request.text,
        "captured_at": request.captured_at,
        "recorded_at": at,
        "deleted_at": None,
    }
    loc = request.locator
    locator = (
        None
        if loc is None
        else {
            "device_id": loc.device_id,
            "provider": loc.provider,
            "stream_id": loc.stream_id,
            "segment_id": loc.segment_id,
            "start_ms": loc.start_ms,
            "end_ms": loc.end_ms,
        }
    )
    evidence = {
        "id": evidence_id,
        "tenant_id": tenant,
        "person_id": person,
        "source_id": source_id,
        "source_revision": 1,
        "quote": request.text,
        "byte_range": None,
        "recorded_at": at,
    }
    payloads = [
        _payload(
            "source",
            {
                "source": source,
                "ingestion_key": request.ingestion_key,
                "origin_evidence_id": evidence_id,
                "origin_claim_id": claim_id,
            },
        ),
        _payload("evidence", {"evidence": evidence, "locator": locator, "deleted_at": None}),
    ]
    claim = request.claim
    if claim is not None and claim_id is not None:
        body = {
            "id": claim_id,
            "tenant_id": tenant,
            "person_id": person,
            "subject": claim.subject,
            "predicate": claim.predicate,
            "value": claim.value,
            "kind": claim.kind.value,
            "valid_time": {"from": claim.valid_from, "until": None},
            "recorded_time": {"from": at, "until": None},
            "status": m.ClaimStatus.accepted.value,
        }
        link = {
            "tenant_id": tenant,
            "person_id": person,
            "claim_id": claim_id,
            "evidence_id": evidence_id,
            "relation": m.EvidenceRelation.supports.value,
            "confidence_basis_points": FULL_CONFIDENCE,
        }
        payloads += [_payload("claim", body), _payload("claim_evidence", link)]
    return tuple(payloads)


class CaptureBatch:
    """New captures of one transaction, written together by :meth:`flush`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pending: list[_Pending] = []
        self._keys: set[tuple[str, str, str]] = set()

    def key_state(self, tenant_id: str, person_id: str, ingestion_key: str) -> KeyState:
        """What *ingestion_key* names in the scope, the batch's pending captures included."""
        if (tenant_id, person_id, ingestion_key) in self._keys:
            return KeyState.STORED
        row = self.conn.execute(_KEY_STATE, (tenant_id, person_id, ingestion_key)).fetchone()
        if row is None:
            return KeyState.NEW
        return KeyState.ERASED if row[1] else KeyState.STORED

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
        payloads = _payloads(request, source_id, evidence_id, claim_id)
        self.pending.append(
            _Pending(request, source_id, evidence_id, claim_id, payloads, statement)
        )
        if request.ingestion_key is not None:
            self._keys.add((request.tenant_id, request.person_id, request.ingestion_key))
        return source_id

    def flush(self) -> None:
        """Write every pending capture: its rows, search projections and feed commit."""
        pending, self.pending = self.pending, []
        self._keys.clear()
        if not pending:
            return
        conn = self.conn
        rowids = [self._insert_source(item) for item in pending]
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

    def _insert_source(self, item: _Pending) -> int:
        request = item.request
        cursor = self.conn.execute(
            INSERT_SOURCE,
            source_row(
                item.source_id,
                request.tenant_id,
                request.person_id,
                request.kind,
                request.text,
                request.captured_at,
                request.recorded_at,
                request.ingestion_key,
            ),
        )
        if cursor.rowcount != 1 or cursor.lastrowid is None:
            # The caller checked the key inside this transaction: a broken promise, not input.
            raise RuntimeError(f"ingestion key {request.ingestion_key!r} is already stored")
        return cursor.lastrowid

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
        """One commit per capture, as :func:`zkr.feed.commits.append_commit` appends it."""
        events: list[tuple[int, int, str]] = []
        for item in pending:
            request = item.request
            cursor = self.conn.execute(
                _INSERT_COMMIT, (request.tenant_id, request.person_id, request.recorded_at)
            )
            sequence = cursor.lastrowid
            assert sequence is not None
            events.extend((sequence, index, payload) for index, payload in enumerate(item.payloads))
        self.conn.executemany(_INSERT_EVENT, events)


def _claim_row(item: _Pending) -> tuple[object, ...]:
    request, claim = item.request, item.request.claim
    assert claim is not None and item.claim_id is not None
    return claim_row(
        item.claim_id,
        request.tenant_id,
        request.person_id,
        claim.subject,
        claim.predicate,
        claim.value,
        claim.kind.value,
        claim.valid_from,
        request.recorded_at,
    )


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
    for timeline, items in timelines.items():
        if not _index_timeline(conn, timeline, items):
            for _, item in items:
                index_capture(conn, item.source_id, statement=item.statement)


def _index_timeline(
    conn: sqlite3.Connection,
    timeline: tuple[str, str, str],
    items: Sequence[tuple[int, _Pending]],
) -> bool:
    """Write the rows of one timeline's new captures (see :func:`_index_recall`); ``False``, having
    written nothing, when the stretch they span holds too many stored captures."""
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
    inserts: list[tuple[int, str, str, str]] = []
    updates: list[tuple[str, int]] = []
    for index, row in enumerate(line):
        earlier, later = _around(line, index)
        item = new.get(row[0])
        if item is not None:
            inserts.append((row[0], item.request.text, item.statement, _context(earlier, later)))
        elif any(n[0] in new for n in earlier) or any(n[0] in new for n in later):
            updates.append((_context(earlier, later), row[0]))
    conn.executemany(_INSERT_RECALL, inserts)
    conn.executemany(_UPDATE_CONTEXT, updates)
    return True


def _around(line: list[_Row], index: int) -> tuple[list[_Row], list[_Row]]:
    """The neighbours of ``line[index]`` (each side nearest first): up to :data:`BEFORE` before and
    :data:`AFTER` after, within one session gap (the recall index's window)."""
    at = line[index][3]
    earlier: list[_Row] = []
    for row in reversed(line[max(0, index - BEFORE) : index]):
        if row[3] < at - SESSION_GAP_SECONDS:
            break
        earlier.append(row)
    later: list[_Row] = []
    for row in line[index + 1 : index + 1 + AFTER]:
        if row[3] > at + SESSION_GAP_SECONDS:
            break
        later.append(row)
    return earlier, later


def _context(earlier: list[_Row], later: list[_Row]) -> str:
    """The neighbours' texts in time order (the recall index's ``context`` column)."""
    return "\n".join([row[2] for row in reversed(earlier)] + [row[2] for row in later])
