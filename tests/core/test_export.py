"""The export commit feed (contract §7): the §9.4 checklist by name, and §2.5's export errors."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import remember, remember_raw, table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import ExportError, IntegrityError, InvalidRequest, LimitExceeded, MigrationError
from zkr.store.commits import append_commit
from zkr.store.records import claim_record, source_record

MiB = 1_048_576


def export(db: MemoryDb, tenant: str = "a", person: str = "sam", **kw: Any) -> m.ExportPage:
    payload: dict[str, Any] = {"export_format": 1, "tenant_id": tenant, "person_id": person}
    payload.update(kw)
    return db.export(m.ExportRequest.model_validate(payload))


def kinds(page: m.ExportPage) -> list[str]:
    return [record["kind"] for commit in page.commits for record in commit.records]


def mark(db: MemoryDb, tenant: str = "a", person: str = "sam") -> int:
    return export(db, tenant, person).high_water_mark


def correct(db: MemoryDb, claim_id: str, value: str, valid_at: int, recorded_at: int) -> Any:
    return db.correct(
        m.CorrectRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=claim_id,
            text=f"Actually Sam works at {value}",
            value=value,
            valid_at=valid_at,
            recorded_at=recorded_at,
        )
    )


def delete(db: MemoryDb, source_id: str, deleted_at: int) -> m.DeleteResult:
    return db.delete(
        m.DeleteRequest(tenant_id="a", person_id="sam", source_id=source_id, deleted_at=deleted_at)
    )


def set_version(db: MemoryDb, version: int) -> None:
    db.conn.execute(f"PRAGMA user_version = {version}")


def reopen(db: MemoryDb) -> MemoryDb:
    db.close()
    return MemoryDb(db.path)


# ----------------------------------------------------------------------------------------------
# §9.4 checklist
# ----------------------------------------------------------------------------------------------


def test_export_is_scoped_frozen_and_event_bounded(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme")
    remember(db, "b", "sam", "Globex")
    first = export(db, limit=2)
    assert (first.export_format, first.database_schema_version) == (1, 8)
    assert not first.complete
    assert len(first.commits) == 1 and first.commits[0].event_count == 4
    assert kinds(first) == ["source", "evidence"]
    assert (first.next_after_commit, first.next_after_event_index) == (first.high_water_mark, 1)

    remember(db, "a", "sam", "Beta")  # after the frozen mark: excluded from this replication
    second = export(
        db,
        after_commit=first.next_after_commit,
        after_event_index=first.next_after_event_index,
        high_water_mark=first.high_water_mark,
        limit=2,
    )
    assert second.complete
    assert second.high_water_mark == first.high_water_mark
    assert kinds(second) == ["claim", "claim_evidence"]
    assert second.commits[0].first_event_index == 2
    for page in (first, second):
        for commit in page.commits:
            for record in commit.records:
                body = record["record"]
                body = body.get(record["kind"], body)
                assert (body["tenant_id"], body["person_id"]) == ("a", "sam")
    assert "Beta" not in json.dumps(second.model_dump(mode="json"))
    assert export(db).high_water_mark > first.high_water_mark


def test_export_rejects_forged_watermark_and_version(db: MemoryDb) -> None:
    with pytest.raises(ExportError, match=r"^high_water_mark exceeds the current scoped maximum$"):
        export(db, high_water_mark=1)
    with pytest.raises(ExportError, match=r"^unsupported export_format 99; expected 1$"):
        export(db, export_format=99)


def test_replay_and_failed_mutations_emit_no_commit(db: MemoryDb) -> None:
    first = remember(db, "a", "sam", "Acme", ingestion_key="turn-1")
    before = mark(db)
    assert remember(db, "a", "sam", "Acme", ingestion_key="turn-1") == first
    with pytest.raises(InvalidRequest, match=r"^deleted_at cannot predate source recording$"):
        delete(db, first.source_id, 5)
    assert mark(db) == before
    assert len(export(db, limit=100).commits) == 1


def test_correction_and_deletion_are_explicit_and_split_safely(db: MemoryDb) -> None:
    original = remember(db, "a", "sam", "Acme")
    assert original.claim_id is not None
    fixed = correct(db, original.claim_id, "Beta", 20, 20)
    delete(db, fixed.source_id, 30)
    records: list[dict[str, Any]] = []
    after_commit, after_index, hwm = 0, -1, None
    while True:
        page = export(
            db,
            after_commit=after_commit,
            after_event_index=after_index,
            high_water_mark=hwm,
            limit=2,
        )
        assert sum(len(c.records) for c in page.commits) <= 2
        hwm = page.high_water_mark
        records.extend(r for c in page.commits for r in c.records)
        after_commit, after_index = page.next_after_commit, page.next_after_event_index
        if page.complete:
            break
    corrections = [r["record"] for r in records if r["kind"] == "correction"]
    assert [c["claim_id"] for c in corrections] == [fixed.claim_id]
    assert corrections[0]["superseded_claim_id"] == original.claim_id
    deletions = [r["record"]["target"] for r in records if r["kind"] == "deletion"]
    assert {"kind": "source", "id": fixed.source_id} in deletions


def test_correction_scope_triggers_reject_insert_and_update(db: MemoryDb) -> None:
    original = remember(db, "a", "sam", "Acme")
    assert original.claim_id is not None
    fixed = correct(db, original.claim_id, "Beta", 20, 20)
    other = remember(db, "b", "sam", "Globex")
    with pytest.raises(sqlite3.IntegrityError, match=r"^correction scope mismatch$"):
        db.conn.execute(
            "INSERT INTO corrections VALUES ('a', 'sam', ?, ?, ?, ?, 30, 30)",
            (original.claim_id, other.claim_id, fixed.source_id, fixed.evidence_id),
        )
    with pytest.raises(sqlite3.IntegrityError, match=r"^correction scope mismatch$"):
        db.conn.execute("UPDATE corrections SET claim_id = ?", (other.claim_id,))
    assert db.conn.execute("SELECT claim_id FROM corrections").fetchall() == [(fixed.claim_id,)]


def test_migration_bootstrap_is_event_bounded(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme")
    db.conn.execute("DELETE FROM memory_commits")
    assert db.conn.execute("SELECT count(*) FROM memory_export_events").fetchone()[0] == 0
    set_version(db, 7)
    db = reopen(db)
    try:
        first = export(db, limit=2)
        assert kinds(first) == ["source", "evidence"] and not first.complete
        assert first.commits[0].event_count == 4
        second = export(
            db,
            after_commit=first.next_after_commit,
            after_event_index=first.next_after_event_index,
            high_water_mark=first.high_water_mark,
            limit=2,
        )
        assert second.commits[0].first_event_index == 2
        assert kinds(second) == ["claim", "claim_evidence"]
        assert second.complete
    finally:
        db.close()


def test_migration_bootstrap_rejects_oversized_legacy_record_atomically(db: MemoryDb) -> None:
    remember_raw(db, "a", "sam", "small")
    db.conn.execute("DELETE FROM memory_commits")
    # Written around the export checks, as a 0.2.1 database could hold it.
    db.conn.execute("DROP TRIGGER source_origin_scope_insert")
    db.conn.execute(
        "INSERT INTO sources(id, tenant_id, person_id, revision, kind, content, captured_at,"
        " recorded_at) VALUES ('big', 'a', 'sam', 1, '\"document\"', ?, 1, 1)",
        ("x" * MiB,),
    )
    set_version(db, 7)
    path = db.path
    db.close()
    with pytest.raises(
        MigrationError,
        match=r"^legacy authoritative record exceeds the 1048576-byte export compatibility limit$",
    ):
        MemoryDb(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 7
        assert conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM memory_export_events").fetchone()[0] == 0
    finally:
        conn.close()


def test_export_rejects_corrupt_cross_scope_payload(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme")
    payload = db.conn.execute(
        "SELECT payload FROM memory_export_events WHERE event_index = 0"
    ).fetchone()[0]
    forged = payload.replace('"tenant_id":"a"', '"tenant_id":"b"')
    db.conn.execute("UPDATE memory_export_events SET payload = ? WHERE event_index = 0", (forged,))
    with pytest.raises(ExportError, match=r"^export record scope does not match its commit$"):
        export(db)


def test_append_rejects_cross_scope_payload_and_rolls_back_commit(db: MemoryDb) -> None:
    memory = remember(db, "b", "sam", "Globex")
    db.conn.execute("DELETE FROM memory_commits")
    with (
        pytest.raises(ExportError, match=r"^export record scope does not match its commit$"),
        db.atomic() as conn,
    ):
        append_commit(conn, "a", "sam", 10, [source_record(conn, memory.source_id)])
    assert db.conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0] == 0
    assert db.conn.execute("SELECT count(*) FROM memory_export_events").fetchone()[0] == 0


def test_oversized_record_rolls_back_authoritative_data_and_commit(db: MemoryDb) -> None:
    with pytest.raises(LimitExceeded, match=r"^export record exceeds 1048576 bytes$"):
        remember_raw(db, "a", "sam", "x" * MiB)
    for table in ("sources", "evidence", "memory_commits", "memory_export_events", "source_fts"):
        assert db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_page_byte_budget_splits_a_commit_without_stranding_events(db: MemoryDb) -> None:
    remember_raw(db, "a", "sam", "y" * (600 * 1024))
    first = export(db, limit=100)
    assert not first.complete
    assert [(c.event_count, c.first_event_index, len(c.records)) for c in first.commits] == [
        (2, 0, 1)
    ]
    second = export(
        db,
        after_commit=first.next_after_commit,
        after_event_index=first.next_after_event_index,
        high_water_mark=first.high_water_mark,
        limit=100,
    )
    assert second.complete
    assert [(c.event_count, c.first_event_index, len(c.records)) for c in second.commits] == [
        (2, 1, 1)
    ]
    assert kinds(second) == ["evidence"]


def test_projection_and_lifecycle_events_cover_links_profiles_reviews_and_deletions(
    db: MemoryDb,
) -> None:
    claim = remember(
        db,
        "a",
        "sam",
        "Acme",
        claim={
            "subject": "Sam",
            "predicate": "employer",
            "value": "Acme",
            "kind": "profile_fact",
            "valid_from": 10,
        },
    )
    assert claim.claim_id is not None
    raw = remember_raw(db, "a", "sam", "Badge photo at the Acme office", recorded_at=11)
    db.link(
        m.LinkRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=claim.claim_id,
            evidence_id=raw.evidence_id,
            relation=m.EvidenceRelation.supports,
            confidence_basis_points=9000,
        )
    )
    entry = db.profile(
        m.ProfileRequest(
            tenant_id="a",
            person_id="sam",
            stability=m.ProfileStability.stable,
            claim_id=claim.claim_id,
            recorded_at=12,
        )
    )
    review = db.review(
        m.ReviewRequest(
            tenant_id="a",
            person_id="sam",
            day="2024-01-01",
            summary="Sam at Acme",
            evidence_ids=[claim.evidence_id],
            recorded_at=13,
        )
    )
    delete(db, claim.source_id, 20)
    delete(db, raw.source_id, 21)  # the claim loses its last support: the profile goes
    records = [r for c in export(db, limit=100).commits for r in c.records]
    links = [r["record"] for r in records if r["kind"] == "claim_evidence"]
    assert any(link["confidence_basis_points"] == 9000 for link in links)
    assert any(r["kind"] == "profile" and r["record"]["id"] == entry.id for r in records)
    assert any(r["kind"] == "daily_review" and r["record"]["id"] == review.id for r in records)
    targets = [r["record"]["target"] for r in records if r["kind"] == "deletion"]
    assert {"kind": "profile_entry", "id": entry.id} in targets
    assert {"kind": "daily_review", "id": review.id} in targets


def test_embedding_writes_do_not_move_the_mark(db: MemoryDb) -> None:
    pytest.importorskip("zkr.embeddings.projections")
    memory = remember_raw(db, "a", "sam", "Sam works at Acme")
    before = mark(db)
    result = db.embed(
        m.EmbedRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "target": {"kind": "source", "id": memory.source_id},
                "embedding": {
                    "vector": [1.0, 0.0],
                    "model": "mini",
                    "version": "1",
                    "input_hash": "sha256:" + hashlib.sha256(b"Sam works at Acme").hexdigest(),
                    "normalization": "l2",
                    "distance": "cosine",
                },
            }
        )
    )
    assert result.dimension == 2
    assert mark(db) == before


# ----------------------------------------------------------------------------------------------
# §7.1 validation order and every export error string of §2.5
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tenant_id": " "}, "tenant_id must not be empty"),
        ({"person_id": "\u3000"}, "person_id must not be empty"),
        ({"export_format": 2}, "unsupported export_format 2; expected 1"),
        ({"after_commit": -1}, "after_commit must not be negative"),
        ({"after_commit": 1, "after_event_index": -2}, "after_event_index must be at least -1"),
        ({"after_event_index": 0}, "the initial cursor must use after_event_index -1"),
        (
            {"after_commit": 1, "high_water_mark": 0},
            "high_water_mark must not precede after_commit",
        ),
        ({"high_water_mark": 99}, "high_water_mark exceeds the current scoped maximum"),
        ({"after_commit": 2}, "after_commit is not in scope"),
        (
            {"after_commit": 1, "after_event_index": 4},
            "after_event_index exceeds the commit event count",
        ),
    ],
)
def test_export_error_strings(db: MemoryDb, fields: dict[str, Any], message: str) -> None:
    remember(db, "a", "sam", "Acme")  # commit 1, 4 events
    remember(db, "b", "sam", "Globex")  # commit 2: another scope
    with pytest.raises(InvalidRequest) as caught:
        export(db, **fields)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # Each pair breaks two rules; the earlier rule of §7.1 is the one reported.
        ({"tenant_id": "", "export_format": 2}, "tenant_id must not be empty"),
        ({"export_format": 2, "after_commit": -1}, "unsupported export_format 2; expected 1"),
        ({"after_commit": -1, "after_event_index": -2}, "after_commit must not be negative"),
        ({"after_event_index": -2}, "after_event_index must be at least -1"),
        (
            {"after_event_index": 3, "high_water_mark": 99},
            "the initial cursor must use after_event_index -1",
        ),
        (
            {"after_commit": 5, "high_water_mark": 4},
            "high_water_mark must not precede after_commit",
        ),
        (
            {"after_commit": 2, "high_water_mark": 99},
            "high_water_mark exceeds the current scoped maximum",
        ),
    ],
)
def test_export_validation_order(db: MemoryDb, fields: dict[str, Any], message: str) -> None:
    remember(db, "a", "sam", "Acme")
    with pytest.raises(InvalidRequest) as caught:
        export(db, **fields)
    assert str(caught.value) == message


def test_after_event_index_may_equal_the_last_index(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme")
    page = export(db, after_commit=1, after_event_index=3)
    assert page.commits == [] and page.complete
    assert (page.next_after_commit, page.next_after_event_index) == (1, 3)


def test_empty_scope_echoes_the_request_cursor(db: MemoryDb) -> None:
    page = export(db, "nobody", "none")
    assert page.model_dump() == {
        "export_format": 1,
        "database_schema_version": 8,
        "high_water_mark": 0,
        "next_after_commit": 0,
        "next_after_event_index": -1,
        "complete": True,
        "commits": [],
    }


def test_exact_fit_is_complete_and_limit_plus_one_is_not(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme")  # 4 events
    assert export(db, limit=4).complete
    assert not export(db, limit=3).complete


def test_limit_is_bounded_and_counts_events(db: MemoryDb) -> None:
    for index in range(60):
        remember_raw(db, "a", "sam", f"note {index}")  # 2 events each: 120 events
    assert sum(len(c.records) for c in export(db, limit=0).commits) == 10
    page = export(db, limit=1000)
    assert sum(len(c.records) for c in page.commits) == 100
    assert not page.complete
    assert page.commits[-1].first_event_index == 0 and page.next_after_event_index == 1


def test_first_oversized_row_is_always_included(db: MemoryDb) -> None:
    # Each event alone is under the record cap, two together exceed the page budget.
    remember_raw(db, "a", "sam", "z" * (700 * 1024))
    page = export(db, limit=100)
    assert len(page.commits[0].records) == 1


def test_stored_payloads_keep_declaration_order_and_records_parse(db: MemoryDb) -> None:
    memory = remember(db, "a", "sam", "Acme")
    stored = db.conn.execute(
        "SELECT payload FROM memory_export_events ORDER BY event_index"
    ).fetchall()
    assert stored[0][0].startswith('{"kind":"source","record":{"source":{"id":')
    with db.atomic(write=False) as conn:
        assert memory.claim_id is not None
        kind, body = claim_record(conn, memory.claim_id)
    assert kind == "claim"
    assert export(db).commits[0].records[2]["record"] == body.model_dump(mode="json", by_alias=True)


def test_reads_do_not_write(db: MemoryDb, tmp_path: Path) -> None:
    remember(db, "a", "sam", "Acme")
    before = table_snapshot(db)
    changes = db.conn.total_changes
    export(db, limit=1)
    assert db.conn.total_changes == changes
    assert table_snapshot(db) == before


def test_integrity_errors_are_reported_with_trigger_messages(db: MemoryDb) -> None:
    original = remember(db, "a", "sam", "Acme")
    other = remember(db, "b", "sam", "Globex")
    with pytest.raises(IntegrityError, match=r"^correction scope mismatch$"), db.atomic() as conn:
        conn.execute(
            "INSERT INTO corrections VALUES ('a', 'sam', ?, ?, ?, ?, 30, 30)",
            (original.claim_id, other.claim_id, original.source_id, original.evidence_id),
        )
