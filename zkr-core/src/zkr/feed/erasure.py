"""Erasing text: the rows an ``erasure`` record names, and every earlier feed event that copied it.

``forget`` decides what to erase and calls :func:`erase`; ``apply`` calls the same function with the
record it received, so a replica erases exactly what its upstream erased. What is blanked (each text
becomes ``""``, ids and timestamps stay):

* the source's ``content``; its evidence's ``quote``; their locators are deleted;
* the ``subject``, ``predicate`` and ``value`` of the named claims;
* profile entries of those claims (live rows deleted; ``key`` and ``value`` of their past feed
  records blanked) and the ``summary`` of the named daily reviews (live rows deleted);
* the same fields in every earlier event of the scope's export feed and of ``replica_staging``,
  so a re-read export page carries no erased text;
* search rows (:func:`zkr.store.recall_index.purge_source`: the contract's ``source_fts``, the
  recall index and its neighbours' context), then every FTS5 index is merged; vectors of all of it.

The bytes leave the file because every connection runs with ``PRAGMA secure_delete = ON`` (freed
and overwritten cells are zeroed) and ``forget`` checkpoints the WAL with TRUNCATE afterwards.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from zkr import models as m
from zkr.store.commits import serialize_record
from zkr.store.recall_index import purge_source
from zkr.store.records import ExportRecord
from zkr.store.sidecars import discard_sidecars

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    from pydantic import BaseModel
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "DERIVED_KEY_PREFIX",
    "ERASED_KEY_PREFIX",
    "Erased",
    "blank_record",
    "erase",
    "erased_form",
    "erased_in",
    "erased_key",
    "feed_dependents",
    "parse_payload",
    "scrub",
    "stale",
    "watched_ids",
]

_ID_CHUNK = 200

#: Prefix of the ingestion key ``zkr import`` derives from a keyless line (a SHA-256 of the whole
#: request, text included: an offline guess of the text can be checked against it).
DERIVED_KEY_PREFIX = "import-sha256:"
#: What such a key becomes when its source is erased: ``import-erased:<source id>`` (reveals
#: nothing, stays unique in the scope, and is the same on every replica that applies the erasure).
ERASED_KEY_PREFIX = "import-erased:"


def erased_key(key: str | None, source_id: str) -> str | None:
    """The ingestion key an erased source keeps: a key derived from its text is replaced, a key
    the host chose is kept (it makes a replay of the same request refused, see docs/erasure.md)."""
    if key is not None and key.startswith(DERIVED_KEY_PREFIX):
        return ERASED_KEY_PREFIX + source_id
    return key


def parse_payload(payload: str) -> ExportRecord | None:
    """A stored ``{"kind", "record"}`` payload as a record, or ``None`` for a kind erasure never
    touches (and that this module need not understand)."""
    raw = json.loads(payload)
    model = _TEXT_RECORDS.get(raw.get("kind"))
    if model is None:
        return None
    return raw["kind"], model.model_validate(raw["record"])


_TEXT_RECORDS: dict[str, type[BaseModel]] = {
    "source": m.SourceRecord,
    "evidence": m.EvidenceRecord,
    "claim": m.ClaimRecord,
    "profile": m.ProfileRecord,
    "daily_review": m.DailyReviewRecord,
}


def blank_record(record: ExportRecord, erasure: m.ErasureRecord) -> ExportRecord | None:
    """*record* with the text the erasure names blanked; ``None`` when it names none of it."""
    kind, body = record
    if isinstance(body, m.SourceRecord) and body.source.id == erasure.source_id:
        source = body.source.model_copy(update={"content": ""})
        key = erased_key(body.ingestion_key, body.source.id)
        return kind, body.model_copy(update={"source": source, "ingestion_key": key})
    if isinstance(body, m.EvidenceRecord) and body.evidence.id in erasure.evidence_ids:
        evidence = body.evidence.model_copy(update={"quote": ""})
        return kind, body.model_copy(update={"evidence": evidence, "locator": None})
    if isinstance(body, m.ClaimRecord) and body.id in erasure.claim_ids:
        return kind, body.model_copy(update={"subject": "", "predicate": "", "value": ""})
    if isinstance(body, m.ProfileRecord) and body.id in erasure.profile_entry_ids:
        return kind, body.model_copy(update={"key": "", "value": ""})
    if isinstance(body, m.DailyReviewRecord) and body.id in erasure.daily_review_ids:
        return kind, body.model_copy(update={"summary": ""})
    return None


def erased_form(record: ExportRecord) -> ExportRecord:
    """*record* with all of its erasable text blanked (how an erased copy of it looks)."""
    body = record[1]
    everything = m.ErasureRecord(
        tenant_id="",
        person_id="",
        source_id=body.source.id if isinstance(body, m.SourceRecord) else "",
        erased_at=0,
        evidence_ids=[body.evidence.id] if isinstance(body, m.EvidenceRecord) else [],
        claim_ids=[body.id] if isinstance(body, m.ClaimRecord) else [],
        profile_entry_ids=[body.id] if isinstance(body, m.ProfileRecord) else [],
        daily_review_ids=[body.id] if isinstance(body, m.DailyReviewRecord) else [],
    )
    return blank_record(record, everything) or record


class Erased(NamedTuple):
    """The ids of one scope that an erasure this database holds names, by kind."""

    sources: frozenset[str] = frozenset()
    evidence: frozenset[str] = frozenset()
    claims: frozenset[str] = frozenset()
    profile_entries: frozenset[str] = frozenset()
    daily_reviews: frozenset[str] = frozenset()

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str]]) -> Erased:
        """From ``(target_kind, target_id)`` rows (both stores' ``erasures`` tables)."""
        ids: dict[str, set[str]] = {}
        for kind, target_id in rows:
            ids.setdefault(kind, set()).add(target_id)
        return cls(
            sources=frozenset(ids.get("source", ())),
            evidence=frozenset(ids.get("evidence", ())),
            claims=frozenset(ids.get("claim", ())),
            profile_entries=frozenset(ids.get("profile_entry", ())),
            daily_reviews=frozenset(ids.get("daily_review", ())),
        )


def watched_ids(record: ExportRecord) -> list[str]:
    """Every id whose erasure makes *record* a stale copy (see :func:`stale`)."""
    body = record[1]
    if isinstance(body, m.SourceRecord):
        return [body.source.id]
    if isinstance(body, m.EvidenceRecord):
        return [body.evidence.id, body.evidence.source_id]
    if isinstance(body, m.ClaimRecord):
        return [body.id]
    if isinstance(body, m.ProfileRecord):
        return [body.id, body.claim_id]
    if isinstance(body, m.DailyReviewRecord):
        return [body.id, *body.evidence_ids]
    return []


def stale(record: ExportRecord, erased: Erased) -> bool:
    """Whether *record* is a copy of erased content: erasure is absorbing (docs/erasure.md), so
    such a record - older, late, from any upstream or backup - is never applied.

    That is a source, evidence, claim, profile entry or daily review the erasure names, and what
    only exists because of erased content: evidence of an erased source, a profile entry of an
    erased claim, a daily review citing only erased evidence.
    """
    body = record[1]
    if isinstance(body, m.SourceRecord):
        return body.source.id in erased.sources
    if isinstance(body, m.EvidenceRecord):
        return body.evidence.id in erased.evidence or body.evidence.source_id in erased.sources
    if isinstance(body, m.ClaimRecord):
        return body.id in erased.claims
    if isinstance(body, m.ProfileRecord):
        return body.id in erased.profile_entries or body.claim_id in erased.claims
    if isinstance(body, m.DailyReviewRecord):
        cited = set(body.evidence_ids)
        return body.id in erased.daily_reviews or (bool(cited) and cited <= erased.evidence)
    return False


def scrub(record: ExportRecord, erased: Erased) -> tuple[ExportRecord, bool]:
    """*record* as this database may keep it, and whether erased text was dropped from it."""
    if not stale(record, erased):
        return record, False
    blank = erased_form(record)
    return blank, blank != record


def erased_in(conn: sqlite3.Connection, tenant: str, person: str, ids: Sequence[str]) -> Erased:
    """The erased ones among *ids* in the scope (``erasures``, any kind)."""
    rows: list[tuple[str, str]] = []
    for chunk in _chunks(sorted(set(ids))):
        rows.extend(
            conn.execute(
                # Every kind named, so that the primary key serves each (kind, id) lookup.
                "SELECT target_kind, target_id FROM erasures WHERE tenant_id = ?"
                " AND person_id = ? AND target_kind IN"
                " ('source', 'evidence', 'claim', 'profile_entry', 'daily_review')"
                f" AND target_id IN ({_marks(chunk)})",
                (tenant, person, *chunk),
            ).fetchall()
        )
    return Erased.from_rows(rows)


def _chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), _ID_CHUNK):
        yield ids[start : start + _ID_CHUNK]


def _marks(ids: Sequence[str]) -> str:
    return ", ".join("?" for _ in ids)


def _events_naming(
    conn: sqlite3.Connection, tenant: str, person: str, ids: Sequence[str]
) -> list[tuple[int, int, str]]:
    """The scope's feed events whose payload contains one of *ids* (a substring prefilter; the
    caller decides on the parsed record). Reads the scope's feed once per chunk of ids."""
    found: dict[tuple[int, int], str] = {}
    for chunk in _chunks(ids):
        condition = " OR ".join("instr(e.payload, ?) > 0" for _ in chunk)
        for sequence, index, payload in conn.execute(
            "SELECT e.commit_sequence, e.event_index, e.payload FROM memory_commits c"
            " JOIN memory_export_events e ON e.commit_sequence = c.sequence"
            f" WHERE c.tenant_id = ? AND c.person_id = ? AND ({condition})",
            (tenant, person, *chunk),
        ):
            found[(sequence, index)] = payload
    return [(sequence, index, payload) for (sequence, index), payload in sorted(found.items())]


def feed_dependents(
    conn: sqlite3.Connection,
    tenant: str,
    person: str,
    evidence_ids: Sequence[str],
    claim_ids: Sequence[str],
) -> tuple[list[str], list[str]]:
    """Profile entries that ever projected one of *claim_ids*, and daily reviews whose every cited
    evidence is erased (by this erasure or an earlier one), as the scope's feed records them."""
    erased_before = {
        row[0]
        for row in conn.execute(
            "SELECT target_id FROM erasures WHERE tenant_id = ? AND person_id = ?"
            " AND target_kind = 'evidence'",
            (tenant, person),
        )
    }
    erased_evidence = erased_before | set(evidence_ids)
    claims = set(claim_ids)
    profiles: set[str] = set()
    reviews: set[str] = set()
    for _, _, payload in _events_naming(conn, tenant, person, [*evidence_ids, *claim_ids]):
        record = parse_payload(payload)
        if record is None:
            continue
        body = record[1]
        if isinstance(body, m.ProfileRecord) and body.claim_id in claims:
            profiles.add(body.id)
        elif isinstance(body, m.DailyReviewRecord) and set(body.evidence_ids) <= erased_evidence:
            reviews.add(body.id)
    return sorted(profiles), sorted(reviews)


def erase(conn: sqlite3.Connection, erasure: m.ErasureRecord) -> None:
    """Blank what *erasure* names in the tables and in the scope's earlier feed events (in the
    caller's transaction). Running it again changes nothing."""
    tenant, person = erasure.tenant_id, erasure.person_id
    scope = (tenant, person)
    discard_sidecars(conn)  # cached lane files may hold vectors of the erased text
    conn.execute(
        "UPDATE sources SET content = '', revision = revision + 1 WHERE id = ? AND tenant_id = ?"
        " AND person_id = ? AND content != ''",
        (erasure.source_id, *scope),
    )
    # A key derived from the text (``zkr import``) would let a guess of the text be confirmed.
    conn.execute(
        "UPDATE sources SET ingestion_key = ? WHERE id = ? AND tenant_id = ? AND person_id = ?"
        " AND substr(ingestion_key, 1, ?) = ?",
        (
            ERASED_KEY_PREFIX + erasure.source_id,
            erasure.source_id,
            *scope,
            len(DERIVED_KEY_PREFIX),
            DERIVED_KEY_PREFIX,
        ),
    )
    purge_source(conn, erasure.source_id)
    _each(conn, "UPDATE evidence SET quote = '' WHERE {ids}", erasure.evidence_ids, scope)
    _each(
        conn,
        "DELETE FROM evidence_locators WHERE evidence_id IN ({marks}) AND tenant_id = ?"
        " AND person_id = ?",
        erasure.evidence_ids,
        scope,
        raw=True,
    )
    _each(
        conn,
        "UPDATE claims SET subject = '', predicate = '', value = '' WHERE {ids}",
        erasure.claim_ids,
        scope,
    )
    _each(conn, "DELETE FROM profile_entries WHERE {ids}", erasure.profile_entry_ids, scope)
    _each(
        conn,
        "DELETE FROM profile_entries WHERE claim_id IN ({marks}) AND tenant_id = ?"
        " AND person_id = ?",
        erasure.claim_ids,
        scope,
        raw=True,
    )
    _each(conn, "DELETE FROM daily_reviews WHERE {ids}", erasure.daily_review_ids, scope)
    for kind, ids in (
        ("source", [erasure.source_id]),
        ("evidence", erasure.evidence_ids),
        ("claim", erasure.claim_ids),
    ):
        _each(
            conn,
            "DELETE FROM embeddings WHERE tenant_id = ? AND person_id = ?"
            f" AND target_kind = '{kind}' AND target_id IN ({{marks}})",
            ids,
            scope,
            raw=True,
            scope_first=True,
        )
    conn.executemany(
        "INSERT OR IGNORE INTO erasures(tenant_id, person_id, target_kind, target_id, source_id,"
        " erased_at) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (tenant, person, kind, target_id, erasure.source_id, erasure.erased_at)
            for kind, ids in (
                ("source", [erasure.source_id]),
                ("evidence", erasure.evidence_ids),
                ("claim", erasure.claim_ids),
                ("profile_entry", erasure.profile_entry_ids),
                ("daily_review", erasure.daily_review_ids),
            )
            for target_id in ids
        ],
    )
    _rewrite_feed(conn, erasure)
    _rewrite_staging(conn, erasure)
    optimize_fts_tables(conn)


def optimize_fts_tables(conn: sqlite3.Connection) -> None:
    """Merge every FTS5 index into one segment, so that terms of deleted rows are dropped.

    FTS5 deletes by writing tombstones; the deleted document's terms stay in older segments until a
    merge rewrites them. (SQLite 3.42's ``secure-delete`` option would avoid this, but is not
    available everywhere zkr runs.) It rewrites the whole index: the part of ``forget`` that grows
    with the store.
    """
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND sql LIKE 'CREATE VIRTUAL TABLE%' AND lower(sql) LIKE '%using fts5%'"
        )
    ]
    for table in tables:
        conn.execute(f'INSERT INTO "{table}"("{table}") VALUES (\'optimize\')')


def _each(
    conn: sqlite3.Connection,
    template: str,
    ids: Sequence[str],
    scope: tuple[str, str],
    *,
    raw: bool = False,
    scope_first: bool = False,
) -> None:
    """Run *template* for *ids* in chunks: ``{ids}`` becomes ``id IN (...) AND <scope>``, or (with
    *raw*) ``{marks}`` becomes the placeholders and the scope goes after (or before) the ids."""
    for chunk in _chunks(ids):
        if raw:
            sql = template.replace("{marks}", _marks(chunk))
            args = (*scope, *chunk) if scope_first else (*chunk, *scope)
        else:
            sql = template.replace(
                "{ids}", f"id IN ({_marks(chunk)}) AND tenant_id = ? AND person_id = ?"
            )
            args = (*chunk, *scope)
        conn.execute(sql, args)


def _named_ids(erasure: m.ErasureRecord) -> list[str]:
    return [
        erasure.source_id,
        *erasure.evidence_ids,
        *erasure.claim_ids,
        *erasure.profile_entry_ids,
        *erasure.daily_review_ids,
    ]


def _rewrite_feed(conn: sqlite3.Connection, erasure: m.ErasureRecord) -> None:
    events = _events_naming(conn, erasure.tenant_id, erasure.person_id, _named_ids(erasure))
    for sequence, index, payload in events:
        record = parse_payload(payload)
        blank = None if record is None else blank_record(record, erasure)
        if blank is not None:
            conn.execute(
                "UPDATE memory_export_events SET payload = ? WHERE commit_sequence = ?"
                " AND event_index = ?",
                (serialize_record(blank), sequence, index),
            )


def _rewrite_staging(conn: sqlite3.Connection, erasure: m.ErasureRecord) -> None:
    """Events a replica staged but has not applied yet carry text too."""
    rows = conn.execute(
        "SELECT rowid, payload FROM replica_staging WHERE tenant_id = ? AND person_id = ?",
        (erasure.tenant_id, erasure.person_id),
    ).fetchall()
    for rowid, payload in rows:
        record = parse_payload(payload)
        blank = None if record is None else blank_record(record, erasure)
        if blank is not None:
            conn.execute(
                "UPDATE replica_staging SET payload = ? WHERE rowid = ?",
                (serialize_record(blank), rowid),
            )
