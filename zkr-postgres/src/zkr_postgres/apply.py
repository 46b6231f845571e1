"""Applying one export page to PostgreSQL: the semantics of ``zkr.replicate.apply``, in SQL.

The same protocol as zkr's own ``apply`` (``docs/replication.md``), per (upstream, scope):

- events are held contiguously per upstream commit; a commit is applied only once all of its
  ``event_count`` events are there (a page may split a commit: the head of a split commit waits in
  ``zkr.staging``);
- the page, the applied records, the ``zkr.commits`` rows and the cursor (``zkr.cursors``) change in
  ONE PostgreSQL transaction, so a killed sync keeps all of a page or none of it;
- a page that does not continue what is held (a skipped event or commit, a changed event count) is
  refused and nothing is applied; events already held are skipped (replays are idempotent);
- the cursor row is locked (``SELECT … FOR UPDATE``) for the transaction, so any number of sync
  processes may feed one server: two that carry the same (upstream, scope) serialise on that row,
  and the second sees the first's events as a replay.

Records are the rows' after-mutation snapshots, so applying one is an upsert; ``deletion`` records
remove profile entries and reviews and purge vectors of their targets, as zkr's ``apply`` does.

Erasure is absorbing, as in zkr's ``apply`` (``docs/erasure.md``): a record copying content that
an erasure held here (``zkr.erasures``) names - an older backup synced after a newer file, the same
feed under another upstream name - is staged with that text blanked and never applied; the caller
learns how many events were dropped so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from psycopg import sql
from pydantic import BaseModel

from zkr import models as m
from zkr.errors import ExportError
from zkr.feed.erasure import (
    DERIVED_KEY_PREFIX,
    ERASED_KEY_PREFIX,
    Erased,
    erased_form,
    erased_key,
    scrub,
    stale,
    watched_ids,
)
from zkr.feed.pages import FeedPosition, Held, PageEvent, check_header, page_events, parse_record
from zkr.retrieval import replica_parts as core
from zkr.store.record_tables import (
    CLAIM,
    EVIDENCE,
    EVIDENCE_LOCATOR,
    RECORD_TABLES,
    SOURCE,
    RecordTable,
    upsert_sql,
)
from zkr_postgres._db import Conn
from zkr_postgres.nul import check_ids, kept, stored
from zkr_postgres.schema import SCHEMA
from zkr_postgres.terms import claim_terms, source_terms

__all__ = ["Applied", "Position", "apply_page", "apply_page_counted", "position"]

#: What the replica holds of one (upstream, scope): zkr's own bookkeeping, kept in PostgreSQL.
Position = FeedPosition


Scope = tuple[str, str, str]  # tenant_id, person_id, upstream


def position(conn: Conn, scope: Scope, *, lock: bool = False) -> Position:
    """Read the durable position of a scope; with *lock* (inside a transaction), create the cursor
    row if needed and hold its row lock until the transaction ends."""
    if lock:
        # ON CONFLICT DO UPDATE locks the existing row (a no-op update) and returns it: one trip.
        row = conn.execute(
            "INSERT INTO zkr.cursors(tenant_id, person_id, upstream) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant_id, person_id, upstream)"
            " DO UPDATE SET applied_commit = zkr.cursors.applied_commit"
            " RETURNING applied_commit, applied_event_count",
            scope,
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT applied_commit, applied_event_count FROM zkr.cursors"
            " WHERE tenant_id = %s AND person_id = %s AND upstream = %s",
            scope,
        ).fetchone()
    staged = conn.execute(
        "SELECT commit_sequence, min(recorded_at), min(event_count), count(*), max(event_index)"
        " FROM zkr.staging WHERE tenant_id = %s AND person_id = %s AND upstream = %s"
        " GROUP BY commit_sequence ORDER BY commit_sequence",
        scope,
    ).fetchall()
    return Position.from_rows(row, staged)


def _erased(conn: Conn, scope: tuple[str, str], records: list[tuple[str, BaseModel]]) -> Erased:
    """What ``zkr.erasures`` names among the ids *records* copy content of."""
    ids = sorted({i for record in records for i in watched_ids(record)})
    if not ids:
        return Erased()
    rows = conn.execute(
        "SELECT target_kind, target_id FROM zkr.erasures WHERE tenant_id = %s AND person_id = %s"
        " AND target_id = ANY(%s)",
        (*scope, ids),
    ).fetchall()
    return Erased.from_rows((str(k), str(i)) for k, i in rows)


def _scrubbed(
    conn: Conn, scope: tuple[str, str], events: list[PageEvent]
) -> tuple[list[PageEvent], int]:
    """*events* with the text of stale copies blanked, and how many had text dropped."""
    erased = _erased(conn, scope, [e.export_record for e in events])
    out, dropped = [], 0
    for e in events:
        (kind, record), blanked = scrub(e.export_record, erased)
        dropped += blanked
        out.append(PageEvent(e.sequence, e.recorded_at, e.event_count, e.event_index, kind, record))
    return out, dropped


def apply_page(
    conn: Conn, scope: Scope, after: tuple[int, int], page: m.ExportPage
) -> tuple[Position, int]:
    """Apply one page exported with cursor *after*, in one transaction; returns the new position
    and how many commits became whole and were applied.

    :raises ExportError: see :func:`apply_page_counted`.
    """
    done = apply_page_counted(conn, scope, after, page)
    return done.position, done.commits


@dataclass(frozen=True)
class Applied:
    """What one page did: the new position, the commits applied, and the events whose text was
    dropped because they copied erased content."""

    position: Position
    commits: int
    dropped_events: int


def apply_page_counted(
    conn: Conn, scope: Scope, after: tuple[int, int], page: m.ExportPage
) -> Applied:
    """Apply one page exported with cursor *after*, in one transaction.

    :raises ExportError: an unsupported page, a gap, a count mismatch, a changed staged event, or a
        record of another scope; nothing is applied.
    """
    check_header(page)
    events = list(page_events(page, after, scope[:2]))
    for commit in page.commits:  # PostgreSQL cannot key an id holding NUL (zkr_postgres.nul)
        for raw in commit.records:
            check_ids(raw)
    applied = 0
    # Pipeline mode: BEGIN and the reads travel together, then the page's writes travel without
    # waiting for each answer; an error still rolls the whole transaction back.
    with conn.pipeline(), conn.transaction():
        lanes_cursor = conn.execute("SELECT table_name FROM zkr.lanes")
        state = position(conn, scope, lock=True)
        lanes = [str(r[0]) for r in lanes_cursor.fetchall()]
        held = state.cursor()
        if after > held:
            raise ExportError(
                "export page does not continue the applied feed: the replica holds events up to"
                f" commit {held[0]} index {held[1]}"
            )
        pending: list[PageEvent] = []
        touched: list[str] = []
        dropped = 0
        for event in events:
            if state.receive(event) is not Held.NEW:
                continue  # held already (a replayed page)
            pending.append(event)
            if state.commit_whole():
                # Checked per commit: an erasure earlier in this page counts too.
                pending, blanked = _scrubbed(conn, scope[:2], pending)
                dropped += blanked
                touched.extend(_apply_commit(conn, scope, state, pending, lanes))
                pending = []
                applied += 1
        # A split commit's head waits for the rest of its events in the next page.
        pending, blanked = _scrubbed(conn, scope[:2], pending)
        dropped += blanked
        _stage(conn, scope, pending)
        _refresh_context(conn, scope[:2], touched)
        if applied:
            conn.execute(
                "UPDATE zkr.cursors SET applied_commit = %s, applied_event_count = %s,"
                " updated_at = now() WHERE tenant_id = %s AND person_id = %s AND upstream = %s",
                (state.applied_commit, state.applied_event_count, *scope),
            )
    return Applied(state, applied, dropped)


def _stage(conn: Conn, scope: Scope, events: list[PageEvent]) -> None:
    if not events:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO zkr.staging(tenant_id, person_id, upstream, commit_sequence,"
            " event_index, recorded_at, event_count, payload)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (*scope, e.sequence, e.event_index, e.recorded_at, e.event_count, e.payload)
                for e in events
            ],
        )


def _apply_commit(
    conn: Conn, scope: Scope, state: Position, fresh: list[PageEvent], lanes: list[str]
) -> list[str]:
    sequence = state.staged_commit
    assert sequence is not None
    where = "tenant_id = %s AND person_id = %s AND upstream = %s AND commit_sequence = %s"
    if fresh and fresh[0].event_index == 0:
        events = fresh
    else:
        rows = conn.execute(
            f"SELECT payload FROM zkr.staging WHERE {where} ORDER BY event_index",
            (*scope, sequence),
        ).fetchall()
        held = [parse_record(json.loads(row[0])) for row in rows]
        events = [
            PageEvent(sequence, state.staged_recorded_at, state.staged_event_count, i, k, r)
            for i, (k, r) in enumerate(held)
        ] + fresh
        conn.execute(f"DELETE FROM zkr.staging WHERE {where}", (*scope, sequence))
    if [e.event_index for e in events] != list(range(state.staged_event_count)):
        raise ExportError(f"export commit {sequence} event count does not match")
    _apply_records(conn, scope[2], [(e.kind, e.record) for e in events], lanes)
    touched = _sources_of(events)
    conn.execute(
        "INSERT INTO zkr.commits(tenant_id, person_id, upstream, sequence, recorded_at,"
        " event_count) VALUES (%s, %s, %s, %s, %s, %s)",
        (*scope, sequence, state.staged_recorded_at, state.staged_event_count),
    )
    state.applied()
    return touched


# ----------------------------------------------------------------------------------------------
# Records -> rows
# ----------------------------------------------------------------------------------------------


def _apply_records(
    conn: Conn, upstream: str, records: list[tuple[str, BaseModel]], lanes: list[str]
) -> None:
    """Make the rows match the commit's after-mutation snapshots, in zkr's ``apply`` order:
    rows (sources, evidence, claims), then what refers to them (links, corrections, profiles,
    reviews) and removals, each group in commit order. A stale copy of erased content changes
    nothing (inserted blank only where the row was never held, so that links to it hold)."""
    erased = _erased(conn, _scope_of(records), records)
    records = [
        erased_form(r) if stale(r, erased) else r
        for r in records
        if not stale(r, erased) or _missing(conn, r)
    ]
    for kind, body in records:
        if isinstance(body, m.ClaimRecord):
            _upsert_claim(conn, body, lanes)
        elif isinstance(body, m.SourceRecord | m.EvidenceRecord):
            _upsert(conn, kind, body, upstream)
    for kind, body in records:
        if isinstance(body, m.DeletionRecord):
            _remove(conn, body, lanes)
        elif kind in RECORD_TABLES and kind not in _ROWS_FIRST:
            _upsert(conn, kind, body)
    # An erasure applies after the other records of its commit (docs/replication.md).
    for kind, body in records:
        if kind == "erasure":
            _erase(conn, body, lanes)


#: Rows that others refer to, written before what refers to them (zkr's apply order).
_ROWS_FIRST = frozenset({"source", "evidence", "claim"})


def _scope_of(records: list[tuple[str, BaseModel]]) -> tuple[str, str]:
    from zkr.store.commits import scope_of

    return scope_of(records[0]) if records else ("", "")


def _missing(conn: Conn, record: tuple[str, BaseModel]) -> bool:
    """Whether the source, evidence or claim a record describes is absent (profile entries and
    reviews an erasure removed stay removed)."""
    body = record[1]
    if isinstance(body, m.SourceRecord):
        table, key = "sources", (body.source.tenant_id, body.source.person_id, body.source.id)
    elif isinstance(body, m.EvidenceRecord):
        e = body.evidence
        table, key = "evidence", (e.tenant_id, e.person_id, e.id)
    elif isinstance(body, m.ClaimRecord):
        table, key = "claims", (body.tenant_id, body.person_id, body.id)
    else:
        return False
    row = conn.execute(
        sql.SQL("SELECT 1 FROM {} WHERE tenant_id = %s AND person_id = %s AND id = %s").format(
            sql.Identifier(SCHEMA, table)
        ),
        key,
    ).fetchone()
    return row is None


def _columns(table: RecordTable) -> list[str]:
    """The replica's columns of *table*: zkr's, the inline locator, and the replica's own."""
    names = table.names
    if table is EVIDENCE:
        names = [*names, *EVIDENCE_LOCATOR.names]
    if table is SOURCE:
        names = [*names, "upstream"]
    if table is SOURCE or table is CLAIM:
        names = [*names, "terms"]  # zkr's recall terms of the text (zkr_postgres.terms)
    if any(column.served for column in table.columns):
        names = [*names, "exact"]  # the NUL-exact originals of the served text (nul.py)
    return names


_UPSERTS = {
    kind: upsert_sql(
        f"{SCHEMA}.{table.table}",
        _columns(table),
        ("tenant_id", "person_id", *table.key),
        placeholder="%s",
    )
    for kind, table in RECORD_TABLES.items()
}


def _row(table: RecordTable, record: BaseModel, upstream: str) -> dict[str, Any]:
    """The replica's row for *record*: served text NUL-safe, kept text with U+FFFD."""
    row = table.values(record)
    if table is EVIDENCE:
        assert isinstance(record, m.EvidenceRecord)
        locator = record.locator
        row.update(
            dict.fromkeys(EVIDENCE_LOCATOR.names)
            if locator is None
            else EVIDENCE_LOCATOR.values(locator)
        )
    if table is SOURCE:
        row["upstream"] = upstream
    columns = [*table.columns, *(EVIDENCE_LOCATOR.columns if table is EVIDENCE else ())]
    for column in columns:
        if column.kept:
            row[column.name] = kept(row[column.name])
        elif column.storage == "json":
            row[column.name] = json.dumps(row[column.name])
    served = {column.name: row[column.name] for column in columns if column.served}
    if served:
        text, row["exact"] = stored(served)
        row.update(text)
    if table is SOURCE:
        row["terms"] = source_terms(row["content"])
    elif table is CLAIM:
        row["terms"] = claim_terms(row["subject"], row["predicate"], row["value"])
    return row


def _upsert(conn: Conn, kind: str, record: BaseModel, upstream: str = "") -> None:
    """Write *record*'s row as zkr's description of its table says (plus the replica's columns)."""
    table = RECORD_TABLES[kind]
    row = _row(table, record, upstream)
    conn.execute(_UPSERTS[kind], [row[name] for name in _columns(table)])


def _upsert_claim(conn: Conn, c: m.ClaimRecord, lanes: list[str]) -> None:
    _upsert(conn, "claim", c)
    if c.status is m.ClaimStatus.retracted:
        # As upstream's delete does: a retracted claim keeps no vectors.
        _drop_vectors(conn, lanes, c.tenant_id, c.person_id, "claim", c.id)


def _remove(conn: Conn, r: m.DeletionRecord, lanes: list[str]) -> None:
    scope = (r.tenant_id, r.person_id)
    kind, target_id = r.target.kind, r.target.id
    conn.execute(
        "INSERT INTO zkr.deletions(tenant_id, person_id, target_kind, target_id, deleted_at)"
        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, person_id, target_kind, target_id)"
        " DO UPDATE SET deleted_at = excluded.deleted_at",
        (*scope, kind.value, target_id, r.deleted_at),
    )
    if kind is m.MemoryKind.profile_entry:
        conn.execute(
            "DELETE FROM zkr.profile_entries WHERE tenant_id = %s AND person_id = %s AND id = %s",
            (*scope, target_id),
        )
    elif kind is m.MemoryKind.daily_review:
        conn.execute(
            "DELETE FROM zkr.daily_reviews WHERE tenant_id = %s AND person_id = %s AND id = %s",
            (*scope, target_id),
        )
    elif kind in (m.MemoryKind.source, m.MemoryKind.evidence):
        _drop_vectors(conn, lanes, *scope, kind.value, target_id)


def _drop_vectors(
    conn: Conn, lanes: list[str], tenant_id: str, person_id: str, kind: str, target_id: str
) -> None:
    for table in lanes:
        conn.execute(
            sql.SQL(
                "DELETE FROM {} WHERE tenant_id = %s AND person_id = %s AND target_kind = %s"
                " AND target_id = %s"
            ).format(sql.Identifier(SCHEMA, table)),
            (tenant_id, person_id, kind, target_id),
        )


def _erase(conn: Conn, erasure: Any, lanes: list[str]) -> None:
    """Blank exactly the text the erasure names (ids, times, kinds and statuses stay), drop the
    vectors of it, remove the profile entries and reviews it names, remember the erased ids, and
    blank the same text in staged events of the scope. The generated ``tsvector`` columns follow
    the blanked text. ``sync`` vacuums afterwards so no dead row version keeps the old text."""
    scope = (erasure.tenant_id, erasure.person_id)
    at = erasure.erased_at
    conn.execute(
        "UPDATE zkr.sources SET content = '', terms = '', exact = NULL"
        " WHERE tenant_id = %s AND person_id = %s AND id = %s",
        (*scope, erasure.source_id),
    )
    # A key ``zkr import`` derived from the text is replaced, as zkr's erase does.
    conn.execute(
        "UPDATE zkr.sources SET ingestion_key = %s WHERE tenant_id = %s AND person_id = %s"
        " AND id = %s AND starts_with(ingestion_key, %s)",
        (ERASED_KEY_PREFIX + erasure.source_id, *scope, erasure.source_id, DERIVED_KEY_PREFIX),
    )
    conn.execute(
        "UPDATE zkr.evidence SET quote = '', exact = NULL, device_id = NULL, provider = NULL,"
        " stream_id = NULL,"
        " segment_id = NULL, start_ms = NULL, end_ms = NULL"
        " WHERE tenant_id = %s AND person_id = %s AND id = ANY(%s)",
        (*scope, list(erasure.evidence_ids)),
    )
    conn.execute(
        "UPDATE zkr.claims SET subject = '', predicate = '', value = '', terms = '', exact = NULL"
        " WHERE tenant_id = %s AND person_id = %s AND id = ANY(%s)",
        (*scope, list(erasure.claim_ids)),
    )
    conn.execute(
        "DELETE FROM zkr.profile_entries WHERE tenant_id = %s AND person_id = %s"
        " AND (id = ANY(%s) OR claim_id = ANY(%s))",
        (*scope, list(erasure.profile_entry_ids), list(erasure.claim_ids)),
    )
    conn.execute(
        "DELETE FROM zkr.daily_reviews WHERE tenant_id = %s AND person_id = %s AND id = ANY(%s)",
        (*scope, list(erasure.daily_review_ids)),
    )
    targets = [
        ("source", [erasure.source_id]),
        ("evidence", list(erasure.evidence_ids)),
        ("claim", list(erasure.claim_ids)),
        ("profile_entry", list(erasure.profile_entry_ids)),
        ("daily_review", list(erasure.daily_review_ids)),
    ]
    for kind, ids in targets:
        for target_id in ids:
            conn.execute(
                "INSERT INTO zkr.erasures(tenant_id, person_id, target_kind, target_id,"
                " erased_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (*scope, kind, target_id, at),
            )
            if kind in ("source", "evidence", "claim"):
                _drop_vectors(conn, lanes, *scope, kind, target_id)
    _blank_staged(conn, scope, erasure)


def _blank_staged(conn: Conn, scope: tuple[str, str], erasure: Any) -> None:
    """Staged events of the scope (any upstream) that copy erased text get it blanked."""
    names = {
        "source": {erasure.source_id},
        "evidence": set(erasure.evidence_ids),
        "claim": set(erasure.claim_ids),
        "profile": set(erasure.profile_entry_ids),
        "daily_review": set(erasure.daily_review_ids),
    }
    rows = conn.execute(
        "SELECT upstream, commit_sequence, event_index, payload FROM zkr.staging"
        " WHERE tenant_id = %s AND person_id = %s",
        scope,
    ).fetchall()
    for upstream, sequence, index, payload in rows:
        raw = json.loads(payload)
        kind, record = raw.get("kind"), raw.get("record")
        if kind not in names or not isinstance(record, dict):
            continue
        inner = record.get(kind) if kind in ("source", "evidence") else record
        if not isinstance(inner, dict) or inner.get("id") not in names[kind]:
            continue
        if kind == "source":
            inner["content"] = ""
            key = record.get("ingestion_key")
            record["ingestion_key"] = erased_key(key, inner["id"]) if isinstance(key, str) else key
        elif kind == "evidence":
            inner["quote"] = ""
            record["locator"] = None
        elif kind == "claim":
            inner.update(subject="", predicate="", value="")
        elif kind == "profile":
            inner.update(key="", value="")
        else:
            inner["summary"] = ""
        conn.execute(
            "UPDATE zkr.staging SET payload = %s WHERE tenant_id = %s AND person_id = %s"
            " AND upstream = %s AND commit_sequence = %s AND event_index = %s",
            (
                json.dumps(raw, ensure_ascii=False, separators=(",", ":")),
                *scope,
                upstream,
                sequence,
                index,
            ),
        )


#: Captures further apart than this (seconds) are not each other's neighbours (zkr's recall index).
CONTEXT_GAP = core.SESSION_GAP_SECONDS


def _sources_of(events: list[PageEvent]) -> list[str]:
    """Ids of the sources a commit's records write or erase."""
    ids: list[str] = []
    for event in events:
        if isinstance(event.record, m.SourceRecord):
            ids.append(event.record.source.id)
        elif isinstance(event.record, m.ErasureRecord):
            ids.append(event.record.source_id)
    return ids


_NEIGHBOURS = """
(SELECT n.terms, n.captured_at, n.seq FROM zkr.sources n
  WHERE n.tenant_id = x.tenant_id AND n.person_id = x.person_id AND n.kind = x.kind
    AND n.deleted_at IS NULL AND (n.captured_at, n.seq) {before} (x.captured_at, x.seq)
    AND n.captured_at::numeric BETWEEN x.captured_at::numeric - %(gap)s
                                AND x.captured_at::numeric + %(gap)s
  ORDER BY n.captured_at {order}, n.seq {order} LIMIT {window})
"""

# (Times are compared as numeric: a capture at the bigint limits must not overflow ± the gap.)
# Every capture of the scope within CONTEXT_GAP of a changed one (same kind) gets its context
# recomputed: its neighbours are exactly the captures that can have changed around it.
_REFRESH = f"""
WITH changed AS (
  SELECT kind, captured_at FROM zkr.sources
   WHERE tenant_id = %(t)s AND person_id = %(p)s AND id = ANY(%(ids)s))
UPDATE zkr.sources x SET context = coalesce((
  SELECT string_agg(nullif(nb.terms, ''), ' ' ORDER BY nb.captured_at, nb.seq) FROM (
    {_NEIGHBOURS.format(before="<", order="DESC", window=core.BEFORE)}
    UNION ALL
    {_NEIGHBOURS.format(before=">", order="ASC", window=core.AFTER)}) nb), '')
 WHERE x.tenant_id = %(t)s AND x.person_id = %(p)s
   AND EXISTS (SELECT 1 FROM changed c WHERE c.kind = x.kind
               AND x.captured_at::numeric BETWEEN c.captured_at::numeric - %(gap)s
                                              AND c.captured_at::numeric + %(gap)s)
"""


def _refresh_context(conn: Conn, scope: tuple[str, str], source_ids: list[str]) -> None:
    """Recompute the neighbour context of every capture near a capture this page wrote, deleted
    or erased (a deleted or erased capture's text thereby leaves its neighbours' context)."""
    if not source_ids:
        return
    conn.execute(
        _REFRESH,
        {
            "t": scope[0],
            "p": scope[1],
            "ids": source_ids,
            "gap": CONTEXT_GAP,
        },
    )
