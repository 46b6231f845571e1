"""Every mutation is one transaction: a failure after its first write leaves no trace (§1.12, §3.1).

Failures are injected three ways: a temporary SQLite trigger that aborts a late insert into the feed
(or a late write to a data table), a feed append that raises after writing its rows, and an export
record builder that raises. Every table, the FTS shadow tables, the feed and the AUTOINCREMENT
counter must be byte-identical afterwards, and the database must stay usable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.core.conftest import remember, remember_raw, table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.store import commits as feed_module
from zkr.writes import capture, correction, deletion, linking, profiles

LOCATOR = {
    "device_id": "omi-1",
    "provider": "deepgram",
    "stream_id": "stream-1",
    "segment_id": "segment-4",
    "start_ms": 1,
    "end_ms": 2,
}


@dataclass
class World:
    """A scope with a profiled claim, extra support, a contradiction and a review."""

    claim: m.RememberResult
    raw: m.RememberResult
    other: m.RememberResult
    profile_id: str
    review_id: str


def build_world(db: MemoryDb) -> World:
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
    raw = remember_raw(db, "a", "sam", "Sam mentioned Acme again")
    other = remember(db, "a", "sam", "Other")
    assert other.claim_id is not None
    db.link(
        m.LinkRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=other.claim_id,
            evidence_id=claim.evidence_id,
            relation=m.EvidenceRelation.contradicts,
            confidence_basis_points=100,
        )
    )
    entry = db.profile(
        m.ProfileRequest(
            tenant_id="a",
            person_id="sam",
            stability=m.ProfileStability.stable,
            claim_id=claim.claim_id,
            recorded_at=10,
        )
    )
    review = db.review(
        m.ReviewRequest(
            tenant_id="a",
            person_id="sam",
            day="2024-05-01",
            summary="Sam at Acme",
            evidence_ids=[raw.evidence_id, claim.evidence_id],
            recorded_at=10,
        )
    )
    return World(claim, raw, other, entry.id, review.id)


def op_remember(db: MemoryDb, world: World) -> Any:
    return remember(db, "a", "sam", "Beta", ingestion_key="new", locator=LOCATOR)


def op_correct(db: MemoryDb, world: World) -> Any:
    assert world.claim.claim_id is not None
    return db.correct(
        m.CorrectRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=world.claim.claim_id,
            text="Sam moved to Beta",
            value="Beta",
            valid_at=20,
            recorded_at=20,
        )
    )


def op_link(db: MemoryDb, world: World) -> Any:
    assert world.claim.claim_id is not None
    return db.link(
        m.LinkRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=world.claim.claim_id,
            evidence_id=world.raw.evidence_id,
            relation=m.EvidenceRelation.supports,
            confidence_basis_points=5000,
        )
    )


def op_delete(db: MemoryDb, world: World) -> Any:
    return db.delete(
        m.DeleteRequest(
            tenant_id="a", person_id="sam", source_id=world.claim.source_id, deleted_at=30
        )
    )


def op_profile(db: MemoryDb, world: World) -> Any:
    assert world.claim.claim_id is not None
    return db.profile(
        m.ProfileRequest(
            tenant_id="a",
            person_id="sam",
            stability=m.ProfileStability.current,
            claim_id=world.claim.claim_id,
            recorded_at=40,
        )
    )


def op_review(db: MemoryDb, world: World) -> Any:
    return db.review(
        m.ReviewRequest(
            tenant_id="a",
            person_id="sam",
            day="2024-05-02",
            summary="again",
            evidence_ids=[world.raw.evidence_id],
            recorded_at=40,
        )
    )


Op = Callable[[MemoryDb, World], Any]

# (operation, index of its last feed event, module whose names it uses)
OPERATIONS: list[tuple[str, Op, int, Any]] = [
    ("remember", op_remember, 3, capture),
    ("correct", op_correct, 6, correction),
    ("link", op_link, 0, linking),
    ("delete", op_delete, 6, deletion),
    ("profile", op_profile, 0, profiles),
    ("review", op_review, 0, profiles),
]
IDS = [name for name, *_ in OPERATIONS]


@pytest.mark.parametrize(("name", "op", "last_index", "module"), OPERATIONS, ids=IDS)
def test_the_operations_really_write_what_the_failures_undo(
    db: MemoryDb, name: str, op: Op, last_index: int, module: Any
) -> None:
    """Sanity check of the fixtures: each operation succeeds with the expected event count."""
    world = build_world(db)
    before = db.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()[0]
    op(db, world)
    count = db.conn.execute(
        "SELECT count(*) FROM memory_export_events WHERE commit_sequence > ?", (before,)
    ).fetchone()[0]
    assert count == last_index + 1


@pytest.mark.parametrize(("name", "op", "last_index", "module"), OPERATIONS, ids=IDS)
def test_failure_on_the_last_feed_event_rolls_back_everything(
    db: MemoryDb, name: str, op: Op, last_index: int, module: Any
) -> None:
    world = build_world(db)
    before = table_snapshot(db)
    db.conn.execute(
        "CREATE TEMP TRIGGER inject_failure BEFORE INSERT ON main.memory_export_events"
        f" WHEN NEW.event_index = {last_index} BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="injected failure"):
        op(db, world)
    db.conn.execute("DROP TRIGGER inject_failure")
    assert table_snapshot(db) == before
    op(db, world)  # still usable, and the operation now succeeds
    assert table_snapshot(db) != before


@pytest.mark.parametrize(("name", "op", "last_index", "module"), OPERATIONS, ids=IDS)
def test_failure_after_the_feed_append_rolls_back_everything(
    db: MemoryDb, monkeypatch: pytest.MonkeyPatch, name: str, op: Op, last_index: int, module: Any
) -> None:
    world = build_world(db)
    before = table_snapshot(db)

    # remember appends its records already serialized (zkr.writes.capture_feed).
    appender = "append_payloads" if module is capture else "append_commit"
    real_append = getattr(feed_module, appender)

    def append_then_fail(*args: Any, **kwargs: Any) -> int:
        real_append(*args, **kwargs)
        raise RuntimeError("injected after append")

    monkeypatch.setattr(module, appender, append_then_fail)
    with pytest.raises(RuntimeError, match="injected after append"):
        op(db, world)
    assert table_snapshot(db) == before


@pytest.mark.parametrize(
    ("name", "op", "module", "builder"),
    [
        ("remember", op_remember, capture, "capture_payloads"),
        ("correct", op_correct, correction, "correction_record"),
        ("link", op_link, linking, "claim_evidence_record"),
        ("delete", op_delete, deletion, "claim_record"),
        ("profile", op_profile, profiles, "profile_record"),
        ("review", op_review, profiles, "daily_review_record"),
    ],
    ids=IDS,
)
def test_failing_record_builder_rolls_back_everything(
    db: MemoryDb, monkeypatch: pytest.MonkeyPatch, name: str, op: Op, module: Any, builder: str
) -> None:
    world = build_world(db)
    before = table_snapshot(db)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected builder failure")

    monkeypatch.setattr(module, builder, broken)
    with pytest.raises(RuntimeError, match="injected builder failure"):
        op(db, world)
    assert table_snapshot(db) == before


@pytest.mark.parametrize(
    ("name", "op", "trigger"),
    [
        # remember: after source, FTS row, evidence, locator, claim and link are written.
        ("remember", op_remember, "BEFORE UPDATE OF origin_evidence_id ON main.sources"),
        # correct: after capture, superseding and profile removal; on the corrections row.
        ("correct", op_correct, "BEFORE INSERT ON main.corrections"),
        # delete: after tombstones, retraction, embedding and profile purge; on the review purge.
        ("delete", op_delete, "BEFORE DELETE ON main.daily_reviews"),
    ],
    ids=["remember", "correct", "delete"],
)
def test_failure_on_a_late_data_write_rolls_back_everything(
    db: MemoryDb, name: str, op: Op, trigger: str
) -> None:
    world = build_world(db)
    before = table_snapshot(db)
    db.conn.execute(
        f"CREATE TEMP TRIGGER inject_failure {trigger}"
        " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="injected failure"):
        op(db, world)
    assert table_snapshot(db) == before


def test_commit_sequence_is_not_consumed_by_a_failed_mutation(db: MemoryDb) -> None:
    world = build_world(db)
    last = db.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()[0]
    db.conn.execute(
        "CREATE TEMP TRIGGER inject_failure BEFORE INSERT ON main.memory_export_events"
        " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        op_review(db, world)
    db.conn.execute("DROP TRIGGER inject_failure")
    op_review(db, world)
    assert db.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()[0] == last + 1
