"""The export commit feed, read one bounded page at a time (contract §7.1-§7.2).

A host replicates one scope by freezing the first page's ``high_water_mark``, advancing its request
cursor with ``next_after_commit``/``next_after_event_index``, and applying a commit only once all of
its ``event_count`` events arrived (a page may split a commit). :mod:`zkr.feed.apply` is that host.

``database_schema_version`` in a page is :data:`zkr.store.schema.CONTRACT_SCHEMA_VERSION` (8): it
names
the *record* schema of the feed, which our storage-only version 9 (float32 vector BLOBs, indexes,
replica tables) does not change, so consumers of zkr 0.2.3's feed read ours unchanged.
"""

from __future__ import annotations

import json
import sqlite3

from zkr import models as m
from zkr.errors import ExportError
from zkr.store.schema import CONTRACT_SCHEMA_VERSION
from zkr.store.validation import require_scope

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from zkr.store.database import Database

__all__ = ["EXPORT_FORMAT", "MAX_EXPORT_PAGE_BYTES", "export", "export_pages", "record_scope"]

#: The only feed format there is.
EXPORT_FORMAT = 1
#: Payload bytes one page may carry (its first event is always included, whatever its size).
MAX_EXPORT_PAGE_BYTES = 1_048_576


def export(db: Database, request: m.ExportRequest) -> m.ExportPage:
    """One page of the scope's commit feed, after validating the cursor in the contract's order.

    :raises InvalidRequest: blank scope.
    :raises ExportError: a bad format, cursor or mark, or a stored record of another scope.
    """
    require_scope(request.tenant_id, request.person_id)
    _check_cursor_shape(request)
    with db.atomic(write=False) as conn:
        current = _scope_maximum(conn, request.tenant_id, request.person_id)
        if request.high_water_mark is not None and request.high_water_mark > current:
            raise ExportError("high_water_mark exceeds the current scoped maximum")
        if request.after_commit > 0:
            _check_after_commit(conn, request)
        mark = current if request.high_water_mark is None else request.high_water_mark
        return _page(conn, request, mark)


def export_pages(
    export_page: Callable[[m.ExportRequest], m.ExportPage],
    tenant_id: str,
    person_id: str,
    after: tuple[int, int],
    *,
    limit: int = 100,
) -> Iterator[tuple[tuple[int, int], m.ExportPage]]:
    """Every page of one scope's feed after the cursor *after*, as ``(its cursor, page)``, up to
    the first page's high-water mark (frozen, so a busy writer cannot keep a reader going).

    The replication loop of zkr's own ``sync`` and zkr-postgres's: each applies a page with the
    cursor it was exported from, and a rerun resumes from the position the replica holds.
    *export_page* is :func:`export` on the upstream database (``MemoryDb.export`` outside core).
    """
    mark: int | None = None
    while True:
        page = export_page(
            m.ExportRequest(
                export_format=EXPORT_FORMAT,
                tenant_id=tenant_id,
                person_id=person_id,
                after_commit=after[0],
                after_event_index=after[1],
                high_water_mark=mark,
                limit=limit,
            )
        )
        yield after, page
        if page.complete:
            return
        mark = page.high_water_mark
        after = (page.next_after_commit, page.next_after_event_index)


def _check_cursor_shape(request: m.ExportRequest) -> None:
    if request.export_format != EXPORT_FORMAT:
        raise ExportError(f"unsupported export_format {request.export_format}; expected 1")
    if request.after_commit < 0:
        raise ExportError("after_commit must not be negative")
    if request.after_event_index < -1:
        raise ExportError("after_event_index must be at least -1")
    if request.after_commit == 0 and request.after_event_index != -1:
        raise ExportError("the initial cursor must use after_event_index -1")
    if request.high_water_mark is not None and request.high_water_mark < request.after_commit:
        raise ExportError("high_water_mark must not precede after_commit")


def _scope_maximum(conn: sqlite3.Connection, tenant_id: str, person_id: str) -> int:
    row = conn.execute(
        "SELECT max(sequence) FROM memory_commits WHERE tenant_id = ? AND person_id = ?",
        (tenant_id, person_id),
    ).fetchone()
    return int(row[0] or 0)


def _event_count(conn: sqlite3.Connection, sequence: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM memory_export_events WHERE commit_sequence = ?", (sequence,)
    ).fetchone()
    return int(row[0])


def _check_after_commit(conn: sqlite3.Connection, request: m.ExportRequest) -> None:
    row = conn.execute(
        "SELECT 1 FROM memory_commits WHERE sequence = ? AND tenant_id = ? AND person_id = ?",
        (request.after_commit, request.tenant_id, request.person_id),
    ).fetchone()
    if row is None:
        raise ExportError("after_commit is not in scope")
    if request.after_event_index >= _event_count(conn, request.after_commit):
        raise ExportError("after_event_index exceeds the commit event count")


class _Commit:
    """One commit's part of the page, filled record by record (a plain class: a one-shot
    ``export`` does not import dataclasses, issue 27.4)."""

    __slots__ = ("first_event_index", "recorded_at", "records", "sequence")

    def __init__(self, sequence: int, recorded_at: int, first_event_index: int) -> None:
        self.sequence = sequence
        self.recorded_at = recorded_at
        self.first_event_index = first_event_index
        self.records: list[dict[str, Any]] = []


def _page(conn: sqlite3.Connection, request: m.ExportRequest, mark: int) -> m.ExportPage:
    limit = m.bounded_limit(request.limit)
    rows = conn.execute(
        "SELECT c.sequence, c.recorded_at, e.event_index, e.payload"
        " FROM memory_commits c JOIN memory_export_events e ON e.commit_sequence = c.sequence"
        " WHERE c.tenant_id = ? AND c.person_id = ? AND c.sequence <= ?"
        " AND (c.sequence > ? OR (c.sequence = ? AND e.event_index > ?))"
        " ORDER BY c.sequence, e.event_index LIMIT ?",
        (
            request.tenant_id,
            request.person_id,
            mark,
            request.after_commit,
            request.after_commit,
            request.after_event_index,
            limit + 1,
        ),
    ).fetchall()
    more = len(rows) > limit
    truncated = False
    page_bytes = 0
    commits: list[_Commit] = []
    for sequence, recorded_at, event_index, payload in rows[:limit]:
        size = len(payload.encode("utf-8"))
        if commits and page_bytes + size > MAX_EXPORT_PAGE_BYTES:
            truncated = True
            break
        page_bytes += size
        record = json.loads(payload)
        if record_scope(record) != (request.tenant_id, request.person_id):
            raise ExportError("export record scope does not match its commit")
        if not commits or commits[-1].sequence != sequence:
            commits.append(_Commit(sequence, recorded_at, event_index))
        commits[-1].records.append(record)

    if commits:
        last = commits[-1]
        next_commit, next_index = last.sequence, last.first_event_index + len(last.records) - 1
    else:
        next_commit, next_index = request.after_commit, request.after_event_index
    return m.ExportPage(
        export_format=EXPORT_FORMAT,
        database_schema_version=CONTRACT_SCHEMA_VERSION,
        high_water_mark=mark,
        next_after_commit=next_commit,
        next_after_event_index=next_index,
        complete=not more and not truncated,
        commits=[
            m.ExportCommit(
                sequence=c.sequence,
                recorded_at=c.recorded_at,
                event_count=_event_count(conn, c.sequence),
                first_event_index=c.first_event_index,
                records=c.records,
            )
            for c in commits
        ],
    )


def record_scope(envelope: Any) -> tuple[Any, Any] | None:
    """The (tenant_id, person_id) a decoded ``{"kind", "record"}`` envelope belongs to, if any."""
    if not isinstance(envelope, dict):
        return None
    kind, record = envelope.get("kind"), envelope.get("record")
    if kind in ("source", "evidence") and isinstance(record, dict):
        record = record.get(kind)
    if not isinstance(record, dict):
        return None
    return record.get("tenant_id"), record.get("person_id")
