"""``apply``: building the same memory in another database from exported pages (an addition).

It is the host protocol of contract §7.2, run by zkr itself on the receiving side:

1. every event of an upstream commit is **staged** (table ``replica_staging``) in contiguous index
   order 0..event_count-1, whichever pages it arrives in;
2. once the staged events are exactly ``event_count``, the commit is **applied** as a whole: its
   records are upserted into the ordinary tables (FTS kept in sync, removals honoured), the same
   records are appended to this database's own feed, and the durable cursor
   (``replica_cursor.applied_commit``) advances - all in the transaction that staged the last event;
3. a page is handled in one transaction, so a crash (even SIGKILL) leaves either the whole page or
   nothing; a rerun resumes from :func:`position`.

Erasure is absorbing (``docs/erasure.md``): an event that copies content an erasure held here
names - older, late, from any upstream or backup - is staged and appended with that text blanked
and never applied to the tables; the answer counts these events (``dropped_events``).

Replaying events already held changes nothing (an event that differs from the staged one is an
error). A page that does not continue from what the replica holds - a skipped event or commit, an
``event_count`` that changed - is refused and applies nothing.

The replica's own feed carries the same records, ``recorded_at`` and event counts as upstream,
under **local** commit sequences: an upstream commit's number is only a position in *that* feed.
It is kept where the protocol needs it - the durable cursor (``replica_cursor.applied_commit``) and
the staging rows, both per (scope, upstream) - and never reaches ``memory_commits``, so a page from
any peer (even one claiming sequence 2^63-1) cannot exhaust or steer the numbering every other
scope's writes use. Every integer of a page is checked for its type and range (strict, like the
other commands) before anything is staged.
"""

from __future__ import annotations

import json
import sqlite3

from zkr import models as m
from zkr.errors import ExportError, InvalidRequest
from zkr.feed.apply_records import apply_records
from zkr.feed.erasure import Erased, erased_form, erased_in, scrub, watched_ids
from zkr.feed.export import export, export_pages
from zkr.feed.pages import FeedPosition, Held, PageEvent, check_header, page_events, parse_record
from zkr.store.commits import append_commit, scope_of, serialize_record
from zkr.store.records import ExportRecord
from zkr.store.validation import require_scope

# typing's TYPE_CHECKING without importing typing: a one-shot ``apply`` (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["apply", "position", "sync"]


def apply(db: Database, request: m.ApplyRequest) -> m.ApplyResult:
    """Stage the page's new events and apply every commit that became whole (one transaction).

    Without a page, nothing is written and the result only reports the resume cursor.

    :raises InvalidRequest: blank scope, or a page without the cursor it was exported with.
    :raises ExportError: an unsupported page, a gap, a count mismatch, a changed event, or a record
        of another scope; nothing is applied.
    """
    require_scope(request.tenant_id, request.person_id)
    page = request.page
    if page is None:
        with db.atomic(write=False) as conn:
            return _result(_load(conn, request), 0, 0, 0)
    check_header(page)
    if request.after_commit is None or request.after_event_index is None:
        raise InvalidRequest(
            "apply needs the after_commit and after_event_index the page was exported with"
        )
    cursor = (request.after_commit, request.after_event_index)
    events = list(page_events(page, cursor, (request.tenant_id, request.person_id)))
    nested = db.conn.in_transaction
    with db.atomic() as conn:
        state = _load(conn, request)
        if cursor > state.cursor():
            raise ExportError(
                "export page does not continue the applied feed: the replica holds events up to"
                f" commit {state.cursor()[0]} index {state.cursor()[1]}"
            )
        received = applied = dropped = 0
        for event in events:
            new, blanked = _receive(conn, request, state, event)
            received += new
            dropped += blanked
            if state.commit_whole():
                _apply_staged(conn, request, state)
                applied += 1
        result = _result(state, applied, received, dropped)
    if not nested and any(event.kind == "erasure" for event in events):
        # As forget does upstream: no page image in the WAL keeps the erased text.
        db.checkpoint()
    return result


def position(db: Database, tenant_id: str, person_id: str, upstream: str = "") -> tuple[int, int]:
    """The ``(after_commit, after_event_index)`` to export next from *upstream* for this replica."""
    result = apply(db, m.ApplyRequest(tenant_id=tenant_id, person_id=person_id, upstream=upstream))
    return result.next_after_commit, result.next_after_event_index


def sync(
    source: Database,
    replica: Database,
    tenant_id: str,
    person_id: str,
    *,
    upstream: str = "",
    limit: int = 100,
) -> m.ApplyResult:
    """Replicate one scope of *source* into *replica* up to source's current high-water mark.

    Resumes from the replica's durable cursor, freezes the first page's mark, and applies page by
    page; safe to interrupt at any point and run again. Answers the last page's result with
    ``dropped_events`` counted over every page.
    """
    import functools

    dropped = 0
    held = position(replica, tenant_id, person_id, upstream)
    export_page = functools.partial(export, source)
    for after, page in export_pages(export_page, tenant_id, person_id, held, limit=limit):
        result = apply(
            replica,
            m.ApplyRequest(
                tenant_id=tenant_id,
                person_id=person_id,
                upstream=upstream,
                after_commit=after[0],
                after_event_index=after[1],
                page=page,
            ),
        )
        dropped += result.dropped_events
    return result.model_copy(update={"dropped_events": dropped})


# ----------------------------------------------------------------------------------------------
# Durable state: cursor and staging
# ----------------------------------------------------------------------------------------------

_KEY = "tenant_id = ? AND person_id = ? AND upstream = ?"


def _key(request: m.ApplyRequest) -> tuple[str, str, str]:
    return request.tenant_id, request.person_id, request.upstream


def _load(conn: sqlite3.Connection, request: m.ApplyRequest) -> FeedPosition:
    row = conn.execute(
        f"SELECT applied_commit, applied_event_count FROM replica_cursor WHERE {_KEY}",
        _key(request),
    ).fetchone()
    staged = conn.execute(
        "SELECT commit_sequence, recorded_at, event_count, count(*), max(event_index)"
        f" FROM replica_staging WHERE {_KEY} GROUP BY commit_sequence ORDER BY commit_sequence",
        _key(request),
    ).fetchall()
    return FeedPosition.from_rows(row, staged)


def _erased_for(conn: sqlite3.Connection, records: list[ExportRecord]) -> Erased:
    """What this database has erased among the ids *records* copy content of."""
    if not records:
        return Erased()
    tenant, person = scope_of(records[0])
    return erased_in(conn, tenant, person, [i for r in records for i in watched_ids(r)])


def _receive(
    conn: sqlite3.Connection, request: m.ApplyRequest, state: FeedPosition, e: PageEvent
) -> tuple[bool, bool]:
    """Stage one event if it is new; returns whether it was, and whether erased text was dropped
    from it (it is staged blanked). Already-held events must be equal."""
    held = state.receive(e)
    if held is Held.APPLIED:
        return False, False
    record, dropped = scrub(e.export_record, _erased_for(conn, [e.export_record]))
    payload = serialize_record(record)
    if held is Held.STAGED:
        row = conn.execute(
            f"SELECT payload FROM replica_staging WHERE {_KEY} AND commit_sequence = ?"
            " AND event_index = ?",
            (*_key(request), e.sequence, e.event_index),
        ).fetchone()
        if row is not None and row[0] != payload and _erased_copy(row[0], payload):
            # Upstream erased text of this event after we staged it: keep the erased copy.
            conn.execute(
                f"UPDATE replica_staging SET payload = ? WHERE {_KEY} AND commit_sequence = ?"
                " AND event_index = ?",
                (payload, *_key(request), e.sequence, e.event_index),
            )
            return False, False
        if row is None or row[0] != payload:
            raise ExportError(
                f"export commit {e.sequence} event {e.event_index} changed since staged"
            )
        return False, False
    conn.execute(
        "INSERT INTO replica_staging(tenant_id, person_id, upstream, commit_sequence, recorded_at,"
        " event_count, event_index, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*_key(request), e.sequence, e.recorded_at, e.event_count, e.event_index, payload),
    )
    return True, dropped


def _erased_copy(held_payload: str, payload: str) -> bool:
    """Whether *payload* is the held event with its erasable text blanked (``forget`` upstream)."""
    held = parse_record(json.loads(held_payload))
    return serialize_record(erased_form(held)) == payload


def _apply_staged(conn: sqlite3.Connection, request: m.ApplyRequest, state: FeedPosition) -> None:
    sequence = state.staged_commit
    assert sequence is not None
    rows = conn.execute(
        f"SELECT event_index, payload FROM replica_staging WHERE {_KEY} AND commit_sequence = ?"
        " ORDER BY event_index",
        (*_key(request), sequence),
    ).fetchall()
    # The count check of the protocol: exactly the indexes 0..event_count-1, nothing else.
    if [row[0] for row in rows] != list(range(state.staged_event_count)):
        raise ExportError(f"export commit {sequence} event count does not match")
    # An erasure may have arrived (from another upstream) since these events were staged.
    parsed = [parse_record(json.loads(row[1])) for row in rows]
    erased = _erased_for(conn, parsed)
    commit_records = [scrub(record, erased)[0] for record in parsed]
    apply_records(conn, commit_records, erased)
    append_commit(
        conn,
        request.tenant_id,
        request.person_id,
        state.staged_recorded_at,
        commit_records,
    )
    conn.execute(
        f"DELETE FROM replica_staging WHERE {_KEY} AND commit_sequence = ?",
        (*_key(request), sequence),
    )
    conn.execute(
        "INSERT INTO replica_cursor(tenant_id, person_id, upstream, applied_commit,"
        " applied_event_count) VALUES (?, ?, ?, ?, ?) ON CONFLICT(tenant_id, person_id, upstream)"
        " DO UPDATE SET applied_commit = excluded.applied_commit,"
        " applied_event_count = excluded.applied_event_count",
        (*_key(request), sequence, state.staged_event_count),
    )
    state.applied()


def _result(state: FeedPosition, applied: int, received: int, dropped: int) -> m.ApplyResult:
    after_commit, after_index = state.cursor()
    return m.ApplyResult(
        applied_commits=applied,
        received_events=received,
        dropped_events=dropped,
        pending_events=state.staged_events if state.staged_commit is not None else 0,
        applied_commit=state.applied_commit,
        next_after_commit=after_commit,
        next_after_event_index=after_index,
    )
