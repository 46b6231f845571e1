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

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from zkr import models as m
from zkr.errors import ExportError, InvalidRequest
from zkr.feed.erasure import Erased, erase, erased_form, erased_in, scrub, stale, watched_ids
from zkr.feed.export import EXPORT_FORMAT, export
from zkr.feed.pages import FeedPosition, Held, PageEvent, check_header, page_events, parse_record
from zkr.jsonio import ordered_dumps
from zkr.store.commits import append_commit, scope_of, serialize_record
from zkr.store.fts_rows import index_source
from zkr.store.recall_index import index_capture, purge_source, refresh_evidence_sources
from zkr.store.records import ExportRecord
from zkr.store.validation import require_scope

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
    after_commit, after_index = position(replica, tenant_id, person_id, upstream)
    mark: int | None = None
    dropped = 0
    while True:
        page = export(
            source,
            m.ExportRequest(
                export_format=EXPORT_FORMAT,
                tenant_id=tenant_id,
                person_id=person_id,
                after_commit=after_commit,
                after_event_index=after_index,
                high_water_mark=mark,
                limit=limit,
            ),
        )
        mark = page.high_water_mark
        result = apply(
            replica,
            m.ApplyRequest(
                tenant_id=tenant_id,
                person_id=person_id,
                upstream=upstream,
                after_commit=after_commit,
                after_event_index=after_index,
                page=page,
            ),
        )
        dropped += result.dropped_events
        after_commit, after_index = page.next_after_commit, page.next_after_event_index
        if page.complete:
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
            (*_key(request), e.sequence, e.index),
        ).fetchone()
        if row is not None and row[0] != payload and _erased_copy(row[0], payload):
            # Upstream erased text of this event after we staged it: keep the erased copy.
            conn.execute(
                f"UPDATE replica_staging SET payload = ? WHERE {_KEY} AND commit_sequence = ?"
                " AND event_index = ?",
                (payload, *_key(request), e.sequence, e.index),
            )
            return False, False
        if row is None or row[0] != payload:
            raise ExportError(f"export commit {e.sequence} event {e.index} changed since staged")
        return False, False
    conn.execute(
        "INSERT INTO replica_staging(tenant_id, person_id, upstream, commit_sequence, recorded_at,"
        " event_count, event_index, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*_key(request), e.sequence, e.recorded_at, e.event_count, e.index, payload),
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
    _apply_records(conn, commit_records, erased)
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


# ----------------------------------------------------------------------------------------------
# Applying one whole commit's records to the ordinary tables
# ----------------------------------------------------------------------------------------------


def _apply_records(
    conn: sqlite3.Connection, all_records: list[ExportRecord], erased: Erased
) -> None:
    """Make the tables match the commit's after-mutation snapshots.

    Rows first (sources, evidence, claims), then source origins (which point at that evidence and
    claim), then what refers to rows (links, corrections, profiles, reviews) and removals, each
    group in commit order. A stale copy of erased content changes nothing: the erased row stays
    as the erasure left it (it is inserted, blank, only when this database never held it, so that
    what refers to it still can).
    """
    commit_records = [
        record for record in all_records if not stale(record, erased) or _missing(conn, record)
    ]
    for _, body in commit_records:
        with _refused_as(body):
            if isinstance(body, m.SourceRecord):
                _upsert_source(conn, body)
            elif isinstance(body, m.EvidenceRecord):
                _upsert_evidence(conn, body)
            elif isinstance(body, m.ClaimRecord):
                _upsert_claim(conn, body)
    for _, body in commit_records:
        if isinstance(body, m.SourceRecord):
            with _refused_as(body):
                conn.execute(
                    "UPDATE sources SET origin_evidence_id = ?, origin_claim_id = ? WHERE id = ?"
                    " AND tenant_id = ? AND person_id = ?"
                    " AND (origin_evidence_id IS NOT ? OR origin_claim_id IS NOT ?)",
                    (
                        body.origin_evidence_id,
                        body.origin_claim_id,
                        body.source.id,
                        body.source.tenant_id,
                        body.source.person_id,
                        body.origin_evidence_id,
                        body.origin_claim_id,
                    ),
                )
    for _, body in commit_records:
        with _refused_as(body):
            if isinstance(body, m.ClaimEvidenceRecord):
                _upsert_link(conn, body)
            elif isinstance(body, m.CorrectionRecord):
                _upsert_correction(conn, body)
            elif isinstance(body, m.ProfileRecord):
                _upsert_profile(conn, body)
            elif isinstance(body, m.DailyReviewRecord):
                _upsert_review(conn, body)
            elif isinstance(body, m.DeletionRecord):
                _remove(conn, body)
            elif isinstance(body, m.ErasureRecord):
                erase(conn, body)

    # The recall index follows the commit's final rows: captures that arrived (with their claims)
    # and sources whose evidence gained a claim. Removals were purged by _upsert_source.
    for record in commit_records:
        body = record[1]
        if (
            isinstance(body, m.SourceRecord)
            and body.source.deleted_at is None
            and not stale(record, erased)
        ):
            index_capture(conn, body.source.id)
    refresh_evidence_sources(
        conn,
        [body.evidence_id for _, body in commit_records if isinstance(body, m.ClaimEvidenceRecord)],
    )


def _missing(conn: sqlite3.Connection, record: ExportRecord) -> bool:
    """Whether the row a source, evidence or claim record describes is absent here. Profile
    entries and reviews an erasure removed stay removed (nothing refers to them)."""
    body = record[1]
    if isinstance(body, m.SourceRecord):
        table, row_id = "sources", body.source.id
    elif isinstance(body, m.EvidenceRecord):
        table, row_id = "evidence", body.evidence.id
    elif isinstance(body, m.ClaimRecord):
        table, row_id = "claims", body.id
    else:
        return False
    return conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (row_id,)).fetchone() is None


def _record_id(body: BaseModel) -> str:
    """The id a refusal names: the record's own id, or what a link or removal points at."""
    if isinstance(body, m.SourceRecord):
        return body.source.id
    if isinstance(body, m.EvidenceRecord):
        return body.evidence.id
    if isinstance(body, m.ClaimEvidenceRecord | m.CorrectionRecord):
        return body.claim_id
    if isinstance(body, m.DeletionRecord):
        return body.target.id
    if isinstance(body, m.ErasureRecord):
        return body.source_id
    record_id: str = getattr(body, "id")  # noqa: B009 - claim, profile and review records
    return record_id


@contextlib.contextmanager
def _refused_as(body: BaseModel) -> Iterator[None]:
    """One answer for every record this scope cannot take (issue 18, defect 4).

    An id held by another scope and a reference to a row this scope lacks (missing, or another
    scope's: the schema triggers cannot tell them apart either) are refused with the same message,
    which names only what the page itself carried - never that another scope exists.
    """
    try:
        yield
    except (_Unapplicable, sqlite3.IntegrityError):
        raise ExportError(f"export record {_record_id(body)} cannot be applied") from None


class _Unapplicable(Exception):
    """An upsert that matched a row of another scope (and so changed nothing)."""


# An id that exists in another scope is never taken over: the upsert updates nothing and fails.
_SAME_SCOPE = (
    " WHERE {table}.tenant_id = excluded.tenant_id AND {table}.person_id = excluded.person_id"
)


def _upsert_row(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> None:
    if conn.execute(sql, params).rowcount == 0:
        raise _Unapplicable


def _quoted(value: str) -> str:
    """The JSON-quoted storage form of an enum column (``supports`` -> ``'"supports"'``)."""
    return json.dumps(value)


def _upsert_source(conn: sqlite3.Connection, record: m.SourceRecord) -> None:
    s = record.source
    before = conn.execute("SELECT deleted_at FROM sources WHERE id = ?", (s.id,)).fetchone()
    _upsert_row(
        conn,
        "INSERT INTO sources(id, tenant_id, person_id, revision, kind, content, captured_at,"
        " recorded_at, deleted_at, ingestion_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id,"
        " person_id = excluded.person_id, revision = excluded.revision, kind = excluded.kind,"
        " content = excluded.content, captured_at = excluded.captured_at,"
        " recorded_at = excluded.recorded_at, deleted_at = excluded.deleted_at,"
        " ingestion_key = excluded.ingestion_key" + _SAME_SCOPE.format(table="sources"),
        (
            s.id,
            s.tenant_id,
            s.person_id,
            s.revision,
            _quoted(s.kind.value),
            s.content,
            s.captured_at,
            s.recorded_at,
            s.deleted_at,
            record.ingestion_key,
        ),
    )
    # Only live sources are searchable. Content never changes, so the FTS row follows liveness:
    # added when a live source first arrives, removed when its tombstone arrives.
    was_live = before is not None and before[0] is None
    if s.deleted_at is None and not was_live:
        index_source(conn, s.id)
    elif s.deleted_at is not None and was_live:
        purge_source(conn, s.id)


def _upsert_evidence(conn: sqlite3.Connection, record: m.EvidenceRecord) -> None:
    e = record.evidence
    _upsert_row(
        conn,
        "INSERT INTO evidence(id, tenant_id, person_id, source_id, source_revision, quote,"
        " recorded_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id,"
        " person_id = excluded.person_id, source_id = excluded.source_id,"
        " source_revision = excluded.source_revision, quote = excluded.quote,"
        " recorded_at = excluded.recorded_at, deleted_at = excluded.deleted_at"
        + _SAME_SCOPE.format(table="evidence"),
        (
            e.id,
            e.tenant_id,
            e.person_id,
            e.source_id,
            e.source_revision,
            e.quote,
            e.recorded_at,
            record.deleted_at,
        ),
    )
    loc = record.locator
    if loc is None:
        conn.execute(
            "DELETE FROM evidence_locators WHERE tenant_id = ? AND person_id = ?"
            " AND evidence_id = ?",
            (e.tenant_id, e.person_id, e.id),
        )
    else:
        conn.execute(
            "INSERT OR REPLACE INTO evidence_locators(tenant_id, person_id, evidence_id,"
            " device_id, provider, stream_id, segment_id, start_ms, end_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                e.tenant_id,
                e.person_id,
                e.id,
                loc.device_id,
                loc.provider,
                loc.stream_id,
                loc.segment_id,
                loc.start_ms,
                loc.end_ms,
            ),
        )
    if record.deleted_at is not None:
        _drop_embeddings(conn, (e.tenant_id, e.person_id), "evidence", e.id)


def _upsert_claim(conn: sqlite3.Connection, c: m.ClaimRecord) -> None:
    _upsert_row(
        conn,
        "INSERT INTO claims(id, tenant_id, person_id, subject, predicate, value, valid_from,"
        " valid_until, recorded_from, recorded_until, status, kind)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id,"
        " person_id = excluded.person_id, subject = excluded.subject,"
        " predicate = excluded.predicate, value = excluded.value,"
        " valid_from = excluded.valid_from, valid_until = excluded.valid_until,"
        " recorded_from = excluded.recorded_from, recorded_until = excluded.recorded_until,"
        " status = excluded.status, kind = excluded.kind" + _SAME_SCOPE.format(table="claims"),
        (
            c.id,
            c.tenant_id,
            c.person_id,
            c.subject,
            c.predicate,
            c.value,
            c.valid_time.from_,
            c.valid_time.until,
            c.recorded_time.from_,
            c.recorded_time.until,
            c.status.value,
            c.kind.value,
        ),
    )
    if c.status is m.ClaimStatus.retracted:
        # As upstream's delete does: a retracted claim keeps no vectors.
        _drop_embeddings(conn, (c.tenant_id, c.person_id), "claim", c.id)


def _upsert_link(conn: sqlite3.Connection, r: m.ClaimEvidenceRecord) -> None:
    conn.execute(
        "INSERT INTO claim_evidence(tenant_id, person_id, claim_id, evidence_id, relation,"
        " confidence_basis_points) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(tenant_id, person_id, claim_id, evidence_id) DO UPDATE SET"
        " relation = excluded.relation,"
        " confidence_basis_points = excluded.confidence_basis_points",
        (
            r.tenant_id,
            r.person_id,
            r.claim_id,
            r.evidence_id,
            _quoted(r.relation.value),
            r.confidence_basis_points,
        ),
    )


def _upsert_correction(conn: sqlite3.Connection, r: m.CorrectionRecord) -> None:
    conn.execute(
        "INSERT INTO corrections(tenant_id, person_id, superseded_claim_id, claim_id, source_id,"
        " evidence_id, valid_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(tenant_id, person_id, superseded_claim_id, claim_id) DO UPDATE SET"
        " source_id = excluded.source_id, evidence_id = excluded.evidence_id,"
        " valid_at = excluded.valid_at, recorded_at = excluded.recorded_at",
        (
            r.tenant_id,
            r.person_id,
            r.superseded_claim_id,
            r.claim_id,
            r.source_id,
            r.evidence_id,
            r.valid_at,
            r.recorded_at,
        ),
    )


def _upsert_profile(conn: sqlite3.Connection, r: m.ProfileRecord) -> None:
    _upsert_row(
        conn,
        "INSERT INTO profile_entries(id, tenant_id, person_id, key, value, stability, claim_id,"
        " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id,"
        " person_id = excluded.person_id, key = excluded.key, value = excluded.value,"
        " stability = excluded.stability, claim_id = excluded.claim_id,"
        " recorded_at = excluded.recorded_at" + _SAME_SCOPE.format(table="profile_entries"),
        (
            r.id,
            r.tenant_id,
            r.person_id,
            r.key,
            r.value,
            _quoted(r.stability.value),
            r.claim_id,
            r.recorded_at,
        ),
    )


def _upsert_review(conn: sqlite3.Connection, r: m.DailyReviewRecord) -> None:
    _upsert_row(
        conn,
        "INSERT INTO daily_reviews(id, tenant_id, person_id, day, summary, evidence_ids,"
        " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id,"
        " person_id = excluded.person_id, day = excluded.day, summary = excluded.summary,"
        " evidence_ids = excluded.evidence_ids, recorded_at = excluded.recorded_at"
        + _SAME_SCOPE.format(table="daily_reviews"),
        (
            r.id,
            r.tenant_id,
            r.person_id,
            r.day,
            r.summary,
            ordered_dumps(r.evidence_ids),
            r.recorded_at,
        ),
    )


def _remove(conn: sqlite3.Connection, r: m.DeletionRecord) -> None:
    scope = (r.tenant_id, r.person_id)
    kind, target_id = r.target.kind, r.target.id
    if kind is m.MemoryKind.profile_entry:
        conn.execute(
            "DELETE FROM profile_entries WHERE id = ? AND tenant_id = ? AND person_id = ?",
            (target_id, *scope),
        )
    elif kind is m.MemoryKind.daily_review:
        conn.execute(
            "DELETE FROM daily_reviews WHERE id = ? AND tenant_id = ? AND person_id = ?",
            (target_id, *scope),
        )
    elif kind is m.MemoryKind.source:
        # The tombstone itself arrived as the source record; vectors are projections to purge.
        _drop_embeddings(conn, scope, "source", target_id)
    elif kind is m.MemoryKind.evidence:
        _drop_embeddings(conn, scope, "evidence", target_id)


def _drop_embeddings(
    conn: sqlite3.Connection, scope: tuple[str, str], target_kind: str, target_id: str
) -> None:
    """Purge the target's vectors - in the record's scope only (a page names any id it likes)."""
    conn.execute(
        "DELETE FROM embeddings WHERE tenant_id = ? AND person_id = ? AND target_kind = ?"
        " AND target_id = ?",
        (*scope, target_kind, target_id),
    )
