"""Each export record's table described once, as data (issue 31): the descriptions match the
schema, a record survives the trip through its row, and the statements are generated from them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import remember_payload
from zkr import MemoryDb
from zkr import models as m
from zkr.feed.pages import parse_record
from zkr.store.record_tables import (
    EVIDENCE_LOCATOR,
    RECORD_TABLES,
    read_record,
    upsert_sql,
)

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def _every_kind_of_record(db: MemoryDb) -> list[tuple[str, Any]]:
    """A scope holding a record of every kind a table holds, as the feed carries them."""
    first = db.remember(remember_payload("Acme"))
    db.correct(
        {**SCOPE, "claim_id": first.claim_id, "text": "Sam works at Beta", "value": "Beta"}
        | {"valid_at": 20, "recorded_at": 20}
    )
    db.remember(
        remember_payload("Gamma", claim=None)
        | {
            "locator": {"device_id": "d", "provider": "p", "stream_id": "s", "segment_id": "g"}
            | {"start_ms": 0, "end_ms": 5}
        }
        | {"captured_at": 30, "recorded_at": 30}
    )
    fact = remember_payload("Oslo", captured_at=25, recorded_at=25)
    fact["claim"] |= {"predicate": "home", "kind": "profile_fact", "valid_from": 25}
    backing = db.remember(fact).claim_id
    db.profile({**SCOPE, "claim_id": backing, "stability": "stable", "recorded_at": 25})
    db.review(
        {**SCOPE, "day": "2024-05-01", "summary": "work", "recorded_at": 40}
        | {"evidence_ids": [first.evidence_id]}
    )
    page = db.export(
        {**SCOPE, "export_format": 1, "after_commit": 0, "after_event_index": -1, "limit": 100}
    )
    return [parse_record(raw) for commit in page.commits for raw in commit.records]


def test_each_description_names_its_tables_columns(db: MemoryDb) -> None:
    for table in [*RECORD_TABLES.values(), EVIDENCE_LOCATOR]:
        stored = {row[1] for row in db.conn.execute(f"PRAGMA table_info({table.table})")}
        assert set(table.names) <= stored, table.table
        assert {"tenant_id", "person_id", *table.key} <= stored | set(table.names)


def test_a_record_survives_the_trip_through_its_row(db: MemoryDb) -> None:
    records = _every_kind_of_record(db)
    assert set(RECORD_TABLES) <= {kind for kind, _ in records}
    for kind, record in records:
        table = RECORD_TABLES.get(kind)
        if table is None:  # deletions and erasures are events, not rows
            continue
        row = dict(zip(table.names, table.sqlite_values(record), strict=True))
        back = read_record(table, row)
        if isinstance(record, m.EvidenceRecord):  # the locator lives in its own table
            locator = record.locator
            assert back == record.model_copy(update={"locator": None})
            if locator is not None:
                values = EVIDENCE_LOCATOR.sqlite_values(locator)
                located = dict(zip(EVIDENCE_LOCATOR.names, values, strict=True))
                assert read_record(EVIDENCE_LOCATOR, located) == locator
        else:
            assert back == record, kind


def test_sqlite_keeps_the_contracts_mixed_encodings(db: MemoryDb) -> None:
    records = dict(reversed(_every_kind_of_record(db)))  # the first record of each kind
    source = dict(
        zip(
            RECORD_TABLES["source"].names,
            RECORD_TABLES["source"].sqlite_values(records["source"]),
            strict=True,
        )
    )
    assert source["kind"] == '"conversation"'  # JSON-quoted, as zkr 0.2.3 stored it
    claim = RECORD_TABLES["claim"].values(records["claim"])
    assert claim["kind"] == "fact" and claim["status"] in {"accepted", "superseded"}


@pytest.mark.parametrize(
    ("conflict", "where", "expected"),
    [
        (
            ("id",),
            " WHERE t.x = 1",
            "INSERT INTO t(id, a, b) VALUES (?, ?, ?) ON CONFLICT (id)"
            " DO UPDATE SET a = excluded.a, b = excluded.b WHERE t.x = 1",
        ),
        (
            ("id", "a"),
            "",
            "INSERT INTO t(id, a, b) VALUES (?, ?, ?) ON CONFLICT (id, a)"
            " DO UPDATE SET b = excluded.b",
        ),
    ],
)
def test_upserts_are_generated(conflict: tuple[str, ...], where: str, expected: str) -> None:
    assert upsert_sql("t", ["id", "a", "b"], conflict, where=where) == expected
