"""Applying one whole commit's records to the ordinary tables (the second half of ``apply``).

:mod:`zkr.feed.apply` stages a commit's events until all of them are there; this module then makes
the tables match the records, which are the rows' after-mutation snapshots, so applying one is an
upsert. The statements are generated from each record's table description
(:mod:`zkr.store.record_tables`), the same description that reads a row back as its record and
that zkr-postgres writes its replica from.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from zkr import models as m
from zkr.errors import ExportError
from zkr.feed.erasure import Erased, erase, stale
from zkr.store.fts_rows import index_source
from zkr.store.recall_index import index_capture, purge_source, refresh_evidence_sources
from zkr.store.record_tables import (
    EVIDENCE_LOCATOR,
    RECORD_TABLES,
    SOURCE,
    RecordTable,
    upsert_sql,
)
from zkr.store.records import ExportRecord

# typing's TYPE_CHECKING without importing typing (nor pydantic): a one-shot ``apply`` runs this
# on light classes (zkr.fastpath; issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["apply_records"]


def apply_records(
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
    bodies = [body for _, body in commit_records]
    _write_rows(conn, bodies)
    for body in bodies:
        if isinstance(body, m.SourceRecord):
            with _refused_as(body):
                _set_origins(conn, body)
    _write_references(conn, bodies)
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
        conn, [body.evidence_id for body in bodies if isinstance(body, m.ClaimEvidenceRecord)]
    )


def _write_rows(conn: sqlite3.Connection, bodies: list[BaseModel]) -> None:
    """Sources, evidence and claims, in commit order."""
    for body in bodies:
        with _refused_as(body):
            if isinstance(body, m.SourceRecord):
                _upsert_source(conn, body)
            elif isinstance(body, m.EvidenceRecord):
                _upsert_evidence(conn, body)
            elif isinstance(body, m.ClaimRecord):
                _upsert_claim(conn, body)


#: The records that refer to rows, by the record table their rows go to.
_REFERENCES: tuple[tuple[type[BaseModel], str], ...] = (
    (m.ClaimEvidenceRecord, "claim_evidence"),
    (m.CorrectionRecord, "correction"),
    (m.ProfileRecord, "profile"),
    (m.DailyReviewRecord, "daily_review"),
)


def _write_references(conn: sqlite3.Connection, bodies: list[BaseModel]) -> None:
    """Links, corrections, profiles, reviews and removals, in commit order."""
    for body in bodies:
        with _refused_as(body):
            table = next((name for kind, name in _REFERENCES if isinstance(body, kind)), None)
            if table is not None:
                _upsert(conn, table, body)
            elif isinstance(body, m.DeletionRecord):
                _remove(conn, body)
            elif isinstance(body, m.ErasureRecord):
                erase(conn, body)


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


def _statement(table: RecordTable) -> str:
    """The upsert of *table*'s row from its record (columns set later left out).

    A row keyed by its id alone is never taken over from another scope: the update is guarded,
    matches nothing and the record is refused (:class:`_Unapplicable`).
    """
    names = [column.name for column in table.columns if not column.deferred]
    if table.key != ("id",):
        return upsert_sql(table.table, names, ("tenant_id", "person_id", *table.key))
    guard = (
        f" WHERE {table.table}.tenant_id = excluded.tenant_id"
        f" AND {table.table}.person_id = excluded.person_id"
    )
    return upsert_sql(table.table, names, ("id",), where=guard)


_UPSERTS = {kind: _statement(table) for kind, table in RECORD_TABLES.items()}
_LOCATOR_KEY = ("tenant_id", "person_id", "evidence_id")
_UPSERT_LOCATOR = upsert_sql(
    EVIDENCE_LOCATOR.table, [*_LOCATOR_KEY, *EVIDENCE_LOCATOR.names], _LOCATOR_KEY
)
_DEFERRED = [column.name for column in SOURCE.columns if column.deferred]
# Set once the evidence and claim they name exist; only when they change (no needless write).
_SET_ORIGINS = (
    f"UPDATE sources SET {', '.join(f'{name} = ?' for name in _DEFERRED)}"
    " WHERE id = ? AND tenant_id = ? AND person_id = ?"
    f" AND ({' OR '.join(f'{name} IS NOT ?' for name in _DEFERRED)})"
)


def _upsert(conn: sqlite3.Connection, kind: str, record: BaseModel) -> None:
    """Write *record*'s row as its table's description says."""
    table = RECORD_TABLES[kind]
    names = [column.name for column in table.columns if not column.deferred]
    cursor = conn.execute(_UPSERTS[kind], table.sqlite_values(record, names))
    if table.key == ("id",) and cursor.rowcount == 0:
        raise _Unapplicable


def _set_origins(conn: sqlite3.Connection, record: m.SourceRecord) -> None:
    origins = SOURCE.sqlite_values(record, _DEFERRED)
    s = record.source
    conn.execute(_SET_ORIGINS, (*origins, s.id, s.tenant_id, s.person_id, *origins))


def _upsert_source(conn: sqlite3.Connection, record: m.SourceRecord) -> None:
    s = record.source
    before = conn.execute("SELECT deleted_at FROM sources WHERE id = ?", (s.id,)).fetchone()
    _upsert(conn, "source", record)
    # Only live sources are searchable. Content never changes, so the FTS row follows liveness:
    # added when a live source first arrives, removed when its tombstone arrives.
    was_live = before is not None and before[0] is None
    if s.deleted_at is None and not was_live:
        index_source(conn, s.id)
    elif s.deleted_at is not None and was_live:
        purge_source(conn, s.id)


def _upsert_evidence(conn: sqlite3.Connection, record: m.EvidenceRecord) -> None:
    e = record.evidence
    _upsert(conn, "evidence", record)
    scope_key = (e.tenant_id, e.person_id, e.id)
    if record.locator is None:
        conn.execute(
            f"DELETE FROM {EVIDENCE_LOCATOR.table} WHERE {EVIDENCE_LOCATOR.key_where()}",
            scope_key,
        )
    else:
        locator = EVIDENCE_LOCATOR.sqlite_values(record.locator)
        conn.execute(_UPSERT_LOCATOR, (*scope_key, *locator))
    if record.deleted_at is not None:
        _drop_embeddings(conn, (e.tenant_id, e.person_id), "evidence", e.id)


def _upsert_claim(conn: sqlite3.Connection, c: m.ClaimRecord) -> None:
    _upsert(conn, "claim", c)
    if c.status is m.ClaimStatus.retracted:
        # As upstream's delete does: a retracted claim keeps no vectors.
        _drop_embeddings(conn, (c.tenant_id, c.person_id), "claim", c.id)


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
