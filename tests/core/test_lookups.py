"""The host look-ups as zkr-core read operations: ``sequence``, ``claims``, ``captures``, and the
"now" floors of the ``correct``/``delete`` tools (what zkr-hermes used to read with its own SQL)."""

from __future__ import annotations

from typing import Any

import pytest

from zkr import MemoryDb
from zkr.errors import InvalidRequest
from zkr.operations import OPERATIONS
from zkr.tools import tool_request

A = {"tenant_id": "t", "person_id": "ana"}
B = {"tenant_id": "t", "person_id": "bo"}


@pytest.fixture
def db() -> MemoryDb:
    return MemoryDb(":memory:")


def _remember(
    db: MemoryDb, scope: dict[str, str], text: str, at: int, key: str | None = None, **claim: Any
) -> Any:
    request: dict[str, Any] = {
        **scope,
        "kind": "conversation",
        "text": text,
        "captured_at": at,
        "recorded_at": at,
        "ingestion_key": key,
    }
    if claim:
        request["claim"] = {"kind": "fact", "valid_from": at, "value": text, **claim}
    return db.run("remember", request)


def test_sequence_moves_with_every_write_of_the_scope_only(db: MemoryDb) -> None:
    assert db.run("sequence", A).sequence == 0
    _remember(db, A, "one", 1)
    first = db.run("sequence", A).sequence
    assert first > 0
    _remember(db, B, "other scope", 2)
    assert db.run("sequence", A).sequence == first
    _remember(db, A, "two", 3)
    assert db.run("sequence", A).sequence > first
    _remember(db, A, "two", 3, key=None)  # a new capture (no key): moves again
    with pytest.raises(InvalidRequest):
        db.run("sequence", {"tenant_id": " ", "person_id": "ana"})


def test_claims_filters_live_claims_and_names_their_live_sources(db: MemoryDb) -> None:
    old = _remember(db, A, "Sam works at Acme", 1, subject="Sam", predicate="employer")
    _remember(db, A, "Sam likes tea", 2, subject="Sam", predicate="likes")
    _remember(db, B, "Sam works at Acme", 3, subject="Sam", predicate="employer")
    found = db.run("claims", {**A, "subject": "Sam", "contains": "Acme"})
    assert [c.id for c in found] == [old.claim_id]
    assert found[0].source_ids == [old.source_id]
    assert found[0].valid_from == 1 and found[0].recorded_from == 1
    assert len(db.run("claims", {**A, "subject": "Sam"})) == 2
    assert [c.predicate for c in db.run("claims", {**A, "subject": "Sam"})] == ["likes", "employer"]
    # a superseded claim is no longer live; its replacement is
    corrected = db.run(
        "correct",
        {
            **A,
            "claim_id": old.claim_id,
            "text": "now Beta",
            "value": "Beta",
            "valid_at": 5,
            "recorded_at": 5,
        },
    )
    assert db.run("claims", {**A, "contains": "Acme"}) == []
    assert [c.id for c in db.run("claims", {**A, "predicate": "employer"})] == [corrected.claim_id]
    # a claim whose supporting source is deleted is retracted: gone from the list
    likes = db.run("claims", {**A, "predicate": "likes"})[0]
    db.run("delete", {**A, "source_id": likes.source_ids[0], "deleted_at": 9})
    assert db.run("claims", {**A, "predicate": "likes"}) == []


def test_captures_are_live_newest_first_and_filtered_by_key_prefix(db: MemoryDb) -> None:
    first = _remember(db, A, "turn one", 1, key="hermes-turn:1")
    second = _remember(db, A, "turn two", 2, key="hermes-turn:2")
    _remember(db, A, "a note", 3, key="hermes-memory:1")
    _remember(db, B, "turn of bo", 4, key="hermes-turn:3")
    turns = db.run("captures", {**A, "key_prefix": "hermes-turn:"})
    assert [(c.source_id, c.evidence_id, c.text) for c in turns] == [
        (second.source_id, second.evidence_id, "turn two"),
        (first.source_id, first.evidence_id, "turn one"),
    ]
    assert len(db.run("captures", A)) == 3
    assert len(db.run("captures", {**A, "limit": 1})) == 1
    db.run("delete", {**A, "source_id": second.source_id, "deleted_at": 5})
    assert [c.source_id for c in db.run("captures", {**A, "key_prefix": "hermes-turn:"})] == [
        first.source_id
    ]


def test_tool_now_advances_past_the_claim_it_corrects(db: MemoryDb) -> None:
    stored = _remember(db, A, "Sam works at Acme", 100, subject="Sam", predicate="employer")
    correct = OPERATIONS["correct"]
    args = {"claim_id": stored.claim_id, "text": "Beta now", "value": "Beta"}
    # without the database the host's "now" is taken as is (and would be refused at run time)
    request = tool_request(correct, args, now=100, **A)
    assert (request.valid_at, request.recorded_at) == (100, 100)  # type: ignore[attr-defined]
    request = tool_request(correct, args, now=100, db=db, **A)
    assert (request.valid_at, request.recorded_at) == (101, 101)  # type: ignore[attr-defined]
    assert db.run("correct", request).superseded_claim_id == stored.claim_id
    # a later "now" is kept; explicit times are never changed
    later = tool_request(correct, args, now=500, db=db, **A)
    assert later.valid_at == 500  # type: ignore[attr-defined]
    explicit = tool_request(correct, {**args, "valid_at": 7, "recorded_at": 8}, now=1, db=db, **A)
    assert (explicit.valid_at, explicit.recorded_at) == (7, 8)  # type: ignore[attr-defined]
    # another scope's claim gives no floor
    assert tool_request(correct, args, now=50, db=db, **B).valid_at == 50  # type: ignore[attr-defined]


def test_tool_now_deletes_late_enough_to_retract(db: MemoryDb) -> None:
    stored = _remember(db, A, "Ana is in Lisbon", 200, subject="Ana", predicate="city")
    delete = OPERATIONS["delete"]
    request = tool_request(delete, {"source_id": stored.source_id}, now=150, db=db, **A)
    assert request.deleted_at == 201  # type: ignore[attr-defined]
    result = db.run("delete", request)
    assert result.claim_count == 1
    missing = tool_request(delete, {"source_id": "nope"}, now=150, db=db, **A)
    assert missing.deleted_at == 150  # type: ignore[attr-defined]


@pytest.mark.parametrize("operation", ["captures", "claims"])
def test_a_page_of_large_memories_stays_within_the_read_page_budget(
    db: MemoryDb, operation: str
) -> None:
    # 100 captures of ~1 MiB each answered 100 MB (memories, profiles and reviews hold a page
    # to 1,000,000 bytes): a page now stops before the budget, newest first, at least one item.
    from zkr.jsonio import compact_len
    from zkr.operations import to_json
    from zkr.writes.profiles import MAX_READ_PAGE_BYTES

    def store(at: int, size: int) -> None:
        large = f"{at} " + "word " * (size // 5)
        text, value = (large, "v") if operation == "captures" else ("t", large)
        _remember(db, A, text, at, subject="Ana", predicate=f"p{at}", value=value)

    for at in range(1, 6):
        store(at, 400_000)
    page = to_json(db.run(operation, {**A, "limit": 100}))
    assert len(page) == 2  # two of ~400 KB fit, a third would not
    assert compact_len(page) <= MAX_READ_PAGE_BYTES
    first = page[0]["text"] if operation == "captures" else page[0]["value"]
    assert first.startswith("5 ")  # the newest
    store(9, 1_040_000)  # one memory larger than the budget is still answered, alone
    assert len(db.run(operation, {**A, "limit": 100})) == 1
