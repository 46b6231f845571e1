"""Lifecycle operations (contract §4.1-§4.5): remember, locator, correct, link, delete.

Test names follow the reference's lifecycle tests (§9.1); the error-string tests cover §2.5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONTRACT_RANKING
from tests.core.conftest import feed, feed_records, remember, remember_raw, table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import ConflictError, InvalidRequest, LimitExceeded, NotFound
from zkr.feed.apply import sync
from zkr.jsonio import canonical_dumps
from zkr.operations import to_json

# The contract's lifecycle answers (§9.1): searches rank as zkr 0.2.3 did. (Under recall a
# corrected claim's old words find its current version: tests/core/test_recall_claims_first.py.)
pytestmark = CONTRACT_RANKING

A = ("a", "sam")
B = ("b", "sam")

LOCATOR = {
    "device_id": "omi-1",
    "provider": "deepgram",
    "stream_id": "stream-1",
    "segment_id": "segment-4",
    "start_ms": 1200,
    "end_ms": 2900,
}


def correct(
    db: MemoryDb, claim_id: str, value: str, valid_at: int, recorded_at: int, /, **kw: Any
) -> m.CorrectResult:
    payload = {
        "tenant_id": "a",
        "person_id": "sam",
        "claim_id": claim_id,
        "text": f"Actually Sam works at {value}",
        "value": value,
        "valid_at": valid_at,
        "recorded_at": recorded_at,
    } | kw
    return db.correct(m.CorrectRequest.model_validate(payload))


def link(
    db: MemoryDb,
    claim_id: str,
    evidence_id: str,
    relation: str = "supports",
    confidence: int = 10000,
    /,
    **kw: Any,
) -> m.OkResult:
    payload = {
        "tenant_id": "a",
        "person_id": "sam",
        "claim_id": claim_id,
        "evidence_id": evidence_id,
        "relation": relation,
        "confidence_basis_points": confidence,
    } | kw
    return db.link(m.LinkRequest.model_validate(payload))


def delete(db: MemoryDb, source_id: str, deleted_at: int, /, **kw: Any) -> m.DeleteResult:
    payload = {"tenant_id": "a", "person_id": "sam", "source_id": source_id} | kw
    payload["deleted_at"] = deleted_at
    return db.delete(m.DeleteRequest.model_validate(payload))


def search(db: MemoryDb, query: str, scope: tuple[str, str] = A, /, **kw: Any) -> m.RetrievalPack:
    payload = {"tenant_id": scope[0], "person_id": scope[1], "query": query} | kw
    return db.search(m.SearchRequest.model_validate(payload))


def claim_row(db: MemoryDb, claim_id: str) -> tuple[Any, ...]:
    row = db.conn.execute(
        "SELECT status, valid_from, valid_until, recorded_from, recorded_until FROM claims"
        " WHERE id = ?",
        (claim_id,),
    ).fetchone()
    assert row is not None
    return tuple(row)


def count(db: MemoryDb, table: str) -> int:
    return int(db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def claim_with_older_last_support(db: MemoryDb) -> tuple[m.RememberResult, m.RememberResult]:
    """Raw evidence at 10; a claim memory at 20 also supported by it; the newer source deleted."""
    older = remember_raw(db, *A, "Sam works at Acme")
    newer = remember(db, *A, "Acme", captured_at=20, recorded_at=20)
    assert newer.claim_id is not None
    link(db, newer.claim_id, older.evidence_id)
    assert delete(db, newer.source_id, 21) == m.DeleteResult(
        source_id=newer.source_id, evidence_count=1, claim_count=0
    )
    return older, newer


# ----------------------------------------------------------------------------------------------
# §9.1 lifecycle checklist
# ----------------------------------------------------------------------------------------------


def test_ingestion_keys_are_idempotent_within_scope(db: MemoryDb) -> None:
    first = remember_raw(db, *A, "Sam works at Acme", ingestion_key="turn-1")
    commits = feed(db, *A)
    replay = remember_raw(db, *A, "Sam works at Acme", ingestion_key="turn-1")
    assert replay == first
    assert count(db, "sources") == 1
    assert feed(db, *A) == commits  # a replay writes no commit
    other = remember_raw(db, *B, "Sam works at Acme", ingestion_key="turn-1")
    assert other.source_id != first.source_id
    assert other.evidence_id != first.evidence_id
    assert count(db, "sources") == 2


def test_raw_ingestion_replay_is_not_changed_by_later_claim_links(db: MemoryDb) -> None:
    raw = remember_raw(db, *A, "Sam works at Acme", ingestion_key="raw")
    claimed = remember(db, *A, "Acme")
    assert claimed.claim_id is not None
    link(db, claimed.claim_id, raw.evidence_id)
    replay = remember_raw(db, *A, "Sam works at Acme", ingestion_key="raw")
    assert replay == raw
    assert replay.claim_id is None


@pytest.mark.parametrize(
    "change",
    [
        {"text": "Sam works at Beta"},
        {"kind": "screen"},
        {"captured_at": 11},
        {"recorded_at": 11},
        {"locator": LOCATOR},
        {
            "claim": {
                "subject": "Sam",
                "predicate": "employer",
                "value": "Acme",
                "kind": "fact",
                "valid_from": 10,
            }
        },
    ],
    ids=["text", "kind", "captured_at", "recorded_at", "locator", "added-claim"],
)
def test_ingestion_key_rejects_changed_payload(db: MemoryDb, change: dict[str, Any]) -> None:
    remember_raw(db, *A, "Sam works at Acme", ingestion_key="k")
    before = table_snapshot(db)
    with pytest.raises(ConflictError) as info:
        remember_raw(db, *A, "Sam works at Acme", ingestion_key="k", **change)
    assert str(info.value) == "ingestion_key conflicts with different memory payload"
    assert isinstance(info.value, InvalidRequest)
    assert table_snapshot(db) == before


def test_ingestion_key_replays_claim_memory_and_rejects_changed_claim(db: MemoryDb) -> None:
    first = remember(db, *A, "Acme", ingestion_key="claimed")
    assert first.claim_id is not None
    assert remember(db, *A, "Acme", ingestion_key="claimed") == first
    before = table_snapshot(db)
    changed_claim = {
        "subject": "Sam",
        "predicate": "employer",
        "value": "Beta",
        "kind": "fact",
        "valid_from": 10,
    }
    for claim in (
        changed_claim,
        changed_claim | {"value": "Acme", "kind": "preference"},
        changed_claim | {"value": "Acme", "valid_from": 11},
        None,
    ):
        with pytest.raises(ConflictError, match="ingestion_key conflicts"):
            remember(db, *A, "Acme", ingestion_key="claimed", claim=claim)
    assert table_snapshot(db) == before


def test_ingestion_key_replay_compares_the_locator(db: MemoryDb) -> None:
    first = remember_raw(db, *A, "Sam said hi", ingestion_key="audio", locator=LOCATOR)
    assert remember_raw(db, *A, "Sam said hi", ingestion_key="audio", locator=LOCATOR) == first
    for locator in (LOCATOR | {"end_ms": 3000}, None):
        with pytest.raises(ConflictError):
            remember_raw(db, *A, "Sam said hi", ingestion_key="audio", locator=locator)


def test_ingestion_key_replay_returns_the_superseded_origin_claim(db: MemoryDb) -> None:
    first = remember(db, *A, "Acme", ingestion_key="claimed")
    assert first.claim_id is not None
    correct(db, first.claim_id, "Beta", 20, 20)
    assert remember(db, *A, "Acme", ingestion_key="claimed") == first


def test_ingestion_key_rejects_deleted_memory(db: MemoryDb) -> None:
    first = remember_raw(db, *A, "Sam works at Acme", ingestion_key="gone")
    delete(db, first.source_id, 10)
    before = table_snapshot(db)
    with pytest.raises(NotFound, match=r"^record not found$"):
        remember_raw(db, *A, "Sam works at Acme", ingestion_key="gone")
    with pytest.raises(NotFound):
        remember_raw(db, *A, "something else", ingestion_key="gone")
    assert table_snapshot(db) == before


def test_lifecycle_is_scoped_cited_and_propagates_deletion(db: MemoryDb) -> None:
    # Captured and valid from 1, so that the history query at valid 4 can see it.
    created = remember(db, *A, "Acme", captured_at=1, claim=CLAIM)
    assert created.claim_id is not None
    pack = search(db, "Acme")
    assert [item.memory for item in pack.items] == [
        m.MemoryRef(kind=m.MemoryKind.claim, id=created.claim_id)
    ]
    assert pack.items[0].evidence_ids == [created.evidence_id]
    assert search(db, "Acme", B).items == []

    corrected = correct(db, created.claim_id, "Beta", 5, 20)
    assert claim_row(db, created.claim_id) == ("superseded", 1, 5, 10, 20)
    assert search(db, "Acme").items == []
    history = search(db, "Acme", as_of={"valid_at": 4, "recorded_at": 15})
    assert [item.excerpt for item in history.items] == ["Sam employer Acme"]

    deleted = delete(db, corrected.source_id, 30)
    assert (deleted.evidence_count, deleted.claim_count) == (1, 1)
    assert search(db, "Beta").items == []


def test_deletion_rejects_zero_width_claim_recorded_interval_atomically(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    before = table_snapshot(db)
    with pytest.raises(InvalidRequest) as info:
        delete(db, created.source_id, 10)
    assert str(info.value) == "deleted_at must advance affected claims' recorded intervals"
    assert table_snapshot(db) == before
    assert claim_row(db, created.claim_id) == ("accepted", 10, None, 10, None)


def test_deletion_rejects_older_last_support_for_newer_claim_atomically(db: MemoryDb) -> None:
    older, newer = claim_with_older_last_support(db)
    before = table_snapshot(db)
    with pytest.raises(
        InvalidRequest, match=r"^deleted_at must advance affected claims' recorded intervals$"
    ):
        delete(db, older.source_id, 15)
    assert table_snapshot(db) == before
    assert newer.claim_id is not None
    assert claim_row(db, newer.claim_id) == ("accepted", 10, None, 20, None)


def test_deletion_closes_newer_claim_at_a_valid_recorded_time(db: MemoryDb) -> None:
    older, newer = claim_with_older_last_support(db)
    assert newer.claim_id is not None
    result = delete(db, older.source_id, 30)
    assert (result.evidence_count, result.claim_count) == (1, 1)
    assert claim_row(db, newer.claim_id) == ("retracted", 10, None, 20, 30)


def _embed_row(db: MemoryDb, kind: str, target_id: str) -> None:
    db.conn.execute(
        "INSERT INTO embeddings(tenant_id, person_id, target_kind, target_id, model, version,"
        " dimension, input_hash, normalization, distance, vector, target_revision, created_at)"
        " VALUES ('a', 'sam', ?, ?, 'm', '1', 1, 'sha256:00', '\"none\"', '\"dot\"', ?, 1, 1)",
        (kind, target_id, b"\x00\x00\x80\x3f"),
    )


def test_deleting_a_source_does_not_purge_unrelated_retracted_claim_projections(
    db: MemoryDb,
) -> None:
    unrelated = remember(db, *A, "Acme")
    assert unrelated.claim_id is not None
    db.conn.execute(
        "UPDATE claims SET status = 'retracted', recorded_until = 11 WHERE id = ?",
        (unrelated.claim_id,),
    )
    _embed_row(db, "claim", unrelated.claim_id)
    target = remember(db, *A, "Beta", recorded_at=10)
    assert target.claim_id is not None
    _embed_row(db, "claim", target.claim_id)
    _embed_row(db, "source", target.source_id)
    _embed_row(db, "evidence", target.evidence_id)
    delete(db, target.source_id, 12)
    remaining = db.conn.execute("SELECT target_kind, target_id FROM embeddings").fetchall()
    assert remaining == [("claim", unrelated.claim_id)]


# ----------------------------------------------------------------------------------------------
# remember and locator
# ----------------------------------------------------------------------------------------------


def test_remember_writes_one_commit_with_source_evidence_claim_and_link(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme", recorded_at=12)
    raw = remember_raw(db, *A, "just words", recorded_at=13)
    assert feed(db, *A) == [
        (12, ["source", "evidence", "claim", "claim_evidence"]),
        (13, ["source", "evidence"]),
    ]
    records = feed_records(db, *A)[0]
    source = records[0]["record"]
    assert source["source"]["revision"] == 1
    assert source["source"]["kind"] == "conversation"
    assert source["origin_evidence_id"] == created.evidence_id
    assert source["origin_claim_id"] == created.claim_id
    claim = records[2]["record"]
    assert claim["valid_time"] == {"from": 10, "until": None}
    assert claim["recorded_time"] == {"from": 12, "until": None}
    assert claim["status"] == "accepted"
    assert records[3]["record"]["confidence_basis_points"] == 10000
    assert raw.claim_id is None


def test_remember_stores_text_verbatim_and_quotes_the_source_kind(db: MemoryDb) -> None:
    created = remember_raw(db, *A, "  padded text\n", kind="audio")
    row = db.conn.execute(
        "SELECT kind, content, revision FROM sources WHERE id = ?", (created.source_id,)
    ).fetchone()
    assert row == ('"audio"', "  padded text\n", 1)
    quote = db.conn.execute(
        "SELECT quote, source_revision FROM evidence WHERE id = ?", (created.evidence_id,)
    ).fetchone()
    assert quote == ("  padded text\n", 1)
    relation = remember(db, *A, "Acme")
    stored = db.conn.execute(
        "SELECT relation FROM claim_evidence WHERE claim_id = ?", (relation.claim_id,)
    ).fetchone()
    assert stored == ('"supports"',)


def test_remember_accepts_times_in_any_order(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme", captured_at=50, recorded_at=5)
    assert created.claim_id is not None
    assert claim_row(db, created.claim_id) == ("accepted", 10, None, 5, None)


def test_blank_means_unicode_white_space_only(db: MemoryDb) -> None:
    # U+001C..U+001F are not White_Space in Rust, so a text made of them is not blank.
    kept = remember_raw(db, *A, "\x1c\x1d\x1e\x1f")
    assert kept.source_id
    for blank in ("", " ", "\t\n", "\u3000", "\u00a0\u2028", "\u0085"):
        with pytest.raises(InvalidRequest, match=r"^text must not be empty$"):
            remember_raw(db, *A, blank)


def test_locator_round_trips_for_live_evidence_in_scope(db: MemoryDb) -> None:
    created = remember_raw(db, *A, "Sam said hi", locator=LOCATOR)
    request = m.LocatorRequest(tenant_id="a", person_id="sam", evidence_id=created.evidence_id)
    assert db.locator(request) == m.LocatorInput.model_validate(LOCATOR)
    other = m.LocatorRequest(tenant_id="b", person_id="sam", evidence_id=created.evidence_id)
    assert db.locator(other) is None
    raw = remember_raw(db, *A, "no locator")
    assert (
        db.locator(m.LocatorRequest(tenant_id="a", person_id="sam", evidence_id=raw.evidence_id))
        is None
    )
    assert db.locator(m.LocatorRequest(tenant_id="a", person_id="sam", evidence_id="x")) is None
    records = feed_records(db, *A)[0]
    assert records[1]["record"]["locator"] == LOCATOR
    delete(db, created.source_id, 10)
    assert db.locator(request) is None


def test_point_locator_and_max_end_are_accepted(db: MemoryDb) -> None:
    point = LOCATOR | {"start_ms": 7, "end_ms": 7}
    created = remember_raw(db, *A, "point", locator=point)
    request = m.LocatorRequest(tenant_id="a", person_id="sam", evidence_id=created.evidence_id)
    assert db.locator(request) == m.LocatorInput.model_validate(point)
    widest = LOCATOR | {"start_ms": 0, "end_ms": 2**63 - 1}
    assert remember_raw(db, *A, "widest", locator=widest).evidence_id


# ----------------------------------------------------------------------------------------------
# error strings (§2.5), each leaving the database unchanged
# ----------------------------------------------------------------------------------------------

REMEMBER_ERRORS = [
    ({"tenant_id": " "}, "tenant_id must not be empty"),
    ({"person_id": ""}, "person_id must not be empty"),
    ({"tenant_id": "", "person_id": "", "text": ""}, "tenant_id must not be empty"),
    ({"text": " \t"}, "text must not be empty"),
    ({"text": "", "ingestion_key": ""}, "text must not be empty"),
    ({"ingestion_key": "  "}, "ingestion_key must not be empty"),
    ({"locator": LOCATOR | {"device_id": " "}}, "locator.device_id must not be empty"),
    ({"locator": LOCATOR | {"provider": ""}}, "locator.provider must not be empty"),
    ({"locator": LOCATOR | {"stream_id": "\n"}}, "locator.stream_id must not be empty"),
    ({"locator": LOCATOR | {"segment_id": ""}}, "locator.segment_id must not be empty"),
    (
        {"locator": LOCATOR | {"start_ms": 5, "end_ms": 4}},
        "locator end_ms must not precede start_ms",
    ),
    ({"locator": LOCATOR | {"end_ms": 2**63}}, "locator end_ms exceeds the storage range"),
    (
        {"locator": LOCATOR | {"end_ms": 2**63, "segment_id": ""}, "ingestion_key": ""},
        "locator.segment_id must not be empty",
    ),
    (
        {"locator": LOCATOR | {"start_ms": 9, "end_ms": 2}, "ingestion_key": " "},
        "locator end_ms must not precede start_ms",
    ),
]

CLAIM = {
    "subject": "Sam",
    "predicate": "employer",
    "value": "Acme",
    "kind": "fact",
    "valid_from": 1,
}


@pytest.mark.parametrize(("change", "message"), REMEMBER_ERRORS)
def test_remember_error_messages(db: MemoryDb, change: dict[str, Any], message: str) -> None:
    before = table_snapshot(db)
    with pytest.raises(InvalidRequest) as info:
        remember_raw(db, *A, "text", **change)
    assert str(info.value) == message
    assert table_snapshot(db) == before


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (CLAIM | {"subject": " "}, "claim subject must not be empty"),
        (CLAIM | {"predicate": ""}, "claim predicate must not be empty"),
        (CLAIM | {"value": "\u3000"}, "claim value must not be empty"),
        (CLAIM | {"subject": "", "value": ""}, "claim subject must not be empty"),
    ],
)
def test_remember_claim_error_messages(db: MemoryDb, claim: dict[str, Any], message: str) -> None:
    before = table_snapshot(db)
    with pytest.raises(InvalidRequest) as info:
        remember_raw(db, *A, "text", claim=claim)
    assert str(info.value) == message
    assert table_snapshot(db) == before


def test_remember_claim_fields_are_checked_only_on_insert(db: MemoryDb) -> None:
    # A keyed replay compares the claim instead of validating it: a blank claim is a conflict.
    remember_raw(db, *A, "text", ingestion_key="k")
    with pytest.raises(ConflictError):
        remember_raw(db, *A, "text", ingestion_key="k", claim=CLAIM | {"subject": ""})


def test_oversized_export_record_stores_nothing(db: MemoryDb) -> None:
    before = table_snapshot(db)
    with pytest.raises(LimitExceeded) as info:
        remember_raw(db, *A, "x" * 1_048_576)
    assert str(info.value) == "export record exceeds 1048576 bytes"
    assert table_snapshot(db) == before


def test_correct_error_messages(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    cid = created.claim_id
    before = table_snapshot(db)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"tenant_id": ""}, InvalidRequest, "tenant_id must not be empty"),
        ({"person_id": " "}, InvalidRequest, "person_id must not be empty"),
        ({"text": " "}, InvalidRequest, "correction text must not be empty"),
        ({"text": "", "value": ""}, InvalidRequest, "correction text must not be empty"),
        ({"value": "\t"}, InvalidRequest, "value must not be empty"),
        ({"value": "", "claim_id": "missing"}, InvalidRequest, "value must not be empty"),
        ({"claim_id": "missing"}, NotFound, "record not found"),
        ({"claim_id": "missing", "valid_at": 0}, NotFound, "record not found"),
        ({"tenant_id": "b"}, NotFound, "record not found"),
        (
            {"valid_at": 10},
            InvalidRequest,
            "correction timestamps must advance the original valid and recorded intervals",
        ),
        (
            {"recorded_at": 10},
            InvalidRequest,
            "correction timestamps must advance the original valid and recorded intervals",
        ),
    ]
    for change, error, message in cases:
        args = {"claim_id": cid, "value": "Beta", "valid_at": 20, "recorded_at": 20} | change
        with pytest.raises(error) as info:
            correct(
                db,
                args.pop("claim_id"),
                args.pop("value"),
                args.pop("valid_at"),
                args.pop("recorded_at"),
                **args,
            )
        assert str(info.value) == message, change
        assert table_snapshot(db) == before


def test_correcting_a_superseded_claim_is_not_found(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    correct(db, created.claim_id, "Beta", 20, 20)
    before = table_snapshot(db)
    with pytest.raises(NotFound):
        correct(db, created.claim_id, "Gamma", 30, 30)
    assert table_snapshot(db) == before


def test_correct_on_corrupt_claim_kind_is_invalid(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    db.conn.execute("UPDATE claims SET kind = 'bogus' WHERE id = ?", (created.claim_id,))
    before = table_snapshot(db)
    assert created.claim_id is not None
    with pytest.raises(InvalidRequest, match=r"^stored claim kind is invalid$"):
        correct(db, created.claim_id, "Beta", 20, 20)
    assert table_snapshot(db) == before


def test_link_error_messages(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    raw = remember_raw(db, *A, "Sam likes tea")
    other = remember_raw(db, *B, "Sam likes tea")
    assert created.claim_id is not None
    before = table_snapshot(db)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"tenant_id": " "}, InvalidRequest, "tenant id must not be empty"),
        ({"person_id": ""}, InvalidRequest, "person id must not be empty"),
        ({"claim_id": ""}, InvalidRequest, "claim id must not be empty"),
        ({"evidence_id": "\u2003"}, InvalidRequest, "evidence id must not be empty"),
        ({"evidence_id": "", "confidence": 20000}, InvalidRequest, "evidence id must not be empty"),
        (
            {"confidence": 10001},
            InvalidRequest,
            "confidence 10001 must be at most 10000 basis points",
        ),
        (
            {"confidence": 65535, "claim_id": "missing"},
            InvalidRequest,
            "confidence 65535 must be at most 10000 basis points",
        ),
        ({"claim_id": "missing"}, NotFound, "record not found"),
        ({"evidence_id": "missing"}, NotFound, "record not found"),
        ({"evidence_id": other.evidence_id}, NotFound, "record not found"),
        (
            {"evidence_id": created.evidence_id, "relation": "contradicts"},
            ConflictError,
            "claim evidence link conflicts with existing payload",
        ),
        (
            {"evidence_id": created.evidence_id, "confidence": 9999},
            ConflictError,
            "claim evidence link conflicts with existing payload",
        ),
    ]
    for change, error, message in cases:
        args = {
            "claim_id": created.claim_id,
            "evidence_id": raw.evidence_id,
            "relation": "supports",
            "confidence": 5000,
        } | change
        with pytest.raises(error) as info:
            link(
                db,
                args.pop("claim_id"),
                args.pop("evidence_id"),
                args.pop("relation"),
                args.pop("confidence"),
                **args,
            )
        assert str(info.value) == message, change
        assert table_snapshot(db) == before


def test_link_is_idempotent_and_commits_at_the_later_of_claim_and_evidence(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme", recorded_at=10)
    raw = remember_raw(db, *A, "Sam likes tea", recorded_at=15)
    assert created.claim_id is not None
    assert link(db, created.claim_id, raw.evidence_id, "contradicts", 8000) == m.OkResult()
    commits = feed(db, *A)
    assert commits[-1] == (15, ["claim_evidence"])
    before = table_snapshot(db)
    link(db, created.claim_id, raw.evidence_id, "contradicts", 8000)
    link(db, created.claim_id, created.evidence_id)  # its own origin link, identical
    assert table_snapshot(db) == before
    record = feed_records(db, *A)[-1][0]["record"]
    assert record == {
        "tenant_id": "a",
        "person_id": "sam",
        "claim_id": created.claim_id,
        "evidence_id": raw.evidence_id,
        "relation": "contradicts",
        "confidence_basis_points": 8000,
    }
    # A contradicting link does not change the claim.
    assert claim_row(db, created.claim_id)[0] == "accepted"


def test_link_needs_an_accepted_claim_and_live_evidence(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    raw = remember_raw(db, *A, "Sam likes tea")
    assert created.claim_id is not None
    correct(db, created.claim_id, "Beta", 20, 20)
    with pytest.raises(NotFound):
        link(db, created.claim_id, raw.evidence_id)
    fresh = remember(db, *A, "Gamma")
    assert fresh.claim_id is not None
    delete(db, raw.source_id, 20)
    with pytest.raises(NotFound):
        link(db, fresh.claim_id, raw.evidence_id)


def test_delete_error_messages(db: MemoryDb) -> None:
    raw = remember_raw(db, *A, "Sam likes tea", recorded_at=10)
    before = table_snapshot(db)
    with pytest.raises(InvalidRequest, match=r"^deleted_at cannot predate source recording$"):
        delete(db, raw.source_id, 9)
    for kw in ({"tenant_id": "b"}, {"person_id": "max"}, {"source_id": "missing"}):
        with pytest.raises(NotFound, match=r"^record not found$"):
            delete(db, raw.source_id, 20, **kw)
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        delete(db, raw.source_id, 20, tenant_id="")
    with pytest.raises(InvalidRequest, match=r"^person_id must not be empty$"):
        delete(db, raw.source_id, 20, person_id=" ")
    assert table_snapshot(db) == before
    delete(db, raw.source_id, 10)  # equal to the source's recording is allowed
    after = table_snapshot(db)
    with pytest.raises(NotFound):
        delete(db, raw.source_id, 20)  # deleting twice
    assert table_snapshot(db) == after


# ----------------------------------------------------------------------------------------------
# correct and delete: rows and feed
# ----------------------------------------------------------------------------------------------


def test_correct_writes_capture_closes_old_claim_and_drops_its_profile(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    db.conn.execute("UPDATE claims SET kind = 'profile_fact' WHERE id = ?", (created.claim_id,))
    entry = db.profile(
        m.ProfileRequest(
            tenant_id="a",
            person_id="sam",
            stability=m.ProfileStability.current,
            claim_id=created.claim_id,
            recorded_at=11,
        )
    )
    result = correct(db, created.claim_id, "Beta", 15, 20)
    assert result.superseded_claim_id == created.claim_id
    source = db.conn.execute(
        "SELECT kind, captured_at, recorded_at, ingestion_key, origin_evidence_id,"
        " origin_claim_id FROM sources WHERE id = ?",
        (result.source_id,),
    ).fetchone()
    assert source == ('"user_correction"', 15, 20, None, result.evidence_id, result.claim_id)
    new = db.conn.execute(
        "SELECT subject, predicate, value, kind, valid_from, recorded_from, status FROM claims"
        " WHERE id = ?",
        (result.claim_id,),
    ).fetchone()
    assert new == ("Sam", "employer", "Beta", "profile_fact", 15, 20, "accepted")
    assert count(db, "profile_entries") == 0
    assert feed(db, *A)[-1] == (
        20,
        [
            "source",
            "evidence",
            "claim",
            "claim",
            "claim_evidence",
            "correction",
            "deletion",
        ],
    )
    records = feed_records(db, *A)[-1]
    assert records[2]["record"]["id"] == created.claim_id
    assert records[2]["record"]["status"] == "superseded"
    assert records[3]["record"]["id"] == result.claim_id
    assert records[5]["record"] == {
        "tenant_id": "a",
        "person_id": "sam",
        "superseded_claim_id": created.claim_id,
        "claim_id": result.claim_id,
        "source_id": result.source_id,
        "evidence_id": result.evidence_id,
        "valid_at": 15,
        "recorded_at": 20,
    }
    assert records[6]["record"] == {
        "tenant_id": "a",
        "person_id": "sam",
        "target": {"kind": "profile_entry", "id": entry.id},
        "deleted_at": 20,
    }


def test_delete_feed_lists_source_evidence_retracted_claims_profiles_and_reviews(
    db: MemoryDb,
) -> None:
    created = remember(db, *A, "Acme")
    kept = remember(db, *A, "Kept")
    assert created.claim_id is not None and kept.claim_id is not None
    # The kept claim is contradicted by the deleted source: a candidate, but keeps its support.
    link(db, kept.claim_id, created.evidence_id, "contradicts", 100)
    db.conn.execute("UPDATE claims SET kind = 'profile_fact' WHERE id = ?", (created.claim_id,))
    entry = db.profile(
        m.ProfileRequest(
            tenant_id="a",
            person_id="sam",
            stability=m.ProfileStability.stable,
            claim_id=created.claim_id,
            recorded_at=10,
        )
    )
    review = db.review(
        m.ReviewRequest(
            tenant_id="a",
            person_id="sam",
            day="2024-01-01",
            summary="Sam at Acme",
            evidence_ids=[kept.evidence_id, created.evidence_id],
            recorded_at=10,
        )
    )
    result = delete(db, created.source_id, 25)
    assert result == m.DeleteResult(source_id=created.source_id, evidence_count=1, claim_count=1)
    assert feed(db, *A)[-1] == (
        25,
        ["source", "deletion", "evidence", "deletion", "claim", "deletion", "deletion"],
    )
    records = [event["record"] for event in feed_records(db, *A)[-1]]
    assert records[0]["source"]["deleted_at"] == 25
    assert records[0]["source"]["revision"] == 2
    assert records[1]["target"] == {"kind": "source", "id": created.source_id}
    assert records[2]["deleted_at"] == 25
    assert records[3]["target"] == {"kind": "evidence", "id": created.evidence_id}
    assert records[4]["id"] == created.claim_id
    assert records[4]["status"] == "retracted"
    assert records[4]["recorded_time"] == {"from": 10, "until": 25}
    assert records[5]["target"] == {"kind": "profile_entry", "id": entry.id}
    assert records[6]["target"] == {"kind": "daily_review", "id": review.id}
    assert claim_row(db, kept.claim_id)[0] == "accepted"
    assert count(db, "daily_reviews") == 0
    assert count(db, "source_fts") == 1


def test_deleting_a_correction_does_not_reinstate_the_old_claim(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    corrected = correct(db, created.claim_id, "Beta", 20, 20)
    delete(db, corrected.source_id, 30)
    assert claim_row(db, created.claim_id)[0] == "superseded"
    assert claim_row(db, corrected.claim_id)[0] == "retracted"


# ----------------------------------------------------------------------------------------------
# issue 3, acceptance 2: a preference corrected, viewed through time, its correction deleted
# ----------------------------------------------------------------------------------------------


def test_preference_correction_history_and_deletion_scenario(db: MemoryDb) -> None:
    prefs: dict[str, Any] = {
        "tenant_id": "a",
        "person_id": "sam",
        "kind": "conversation",
        "text": "Sam takes oat milk in coffee",
        "captured_at": 100,
        "recorded_at": 100,
        "claim": {
            "subject": "Sam",
            "predicate": "milk",
            "value": "oat milk",
            "kind": "preference",
            "valid_from": 100,
        },
    }
    created = db.remember(m.RememberRequest.model_validate(prefs))
    assert created.claim_id is not None
    corrected = db.correct(
        m.CorrectRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=created.claim_id,
            text="Sam switched to almond milk",
            value="almond milk",
            valid_at=200,
            recorded_at=200,
        )
    )

    def claim_hits(query: str, **kw: Any) -> list[tuple[str, str]]:
        return [
            (item.memory.id, item.excerpt)
            for item in search(db, query, **kw).items
            if item.memory.kind == m.MemoryKind.claim
        ]

    assert claim_hits("milk") == [(corrected.claim_id, "Sam milk almond milk")]
    assert claim_hits("oat") == []
    before = {"as_of": {"valid_at": 150, "recorded_at": 150}}
    after = {"as_of": {"valid_at": 250, "recorded_at": 250}}
    assert claim_hits("milk", **before) == [(created.claim_id, "Sam milk oat milk")]
    assert claim_hits("milk", **after) == [(corrected.claim_id, "Sam milk almond milk")]

    delete(db, corrected.source_id, 300)
    assert claim_hits("milk") == []
    assert claim_hits("oat") == []
    assert claim_row(db, created.claim_id)[0] == "superseded"
    assert [kinds for _, kinds in feed(db, *A)] == [
        ["source", "evidence", "claim", "claim_evidence"],
        ["source", "evidence", "claim", "claim", "claim_evidence", "correction"],
        ["source", "deletion", "evidence", "deletion", "claim"],
    ]
    assert [recorded_at for recorded_at, _ in feed(db, *A)] == [100, 200, 300]
    # History before the correction is unchanged by deleting it; the deleted correction's claim is
    # not resurrected at a time when it was current.
    assert claim_hits("milk", **before) == [(created.claim_id, "Sam milk oat milk")]
    assert claim_hits("milk", **after) == []


def test_preference_scenario_replica_answers_history_the_same(db: MemoryDb, tmp_path: Path) -> None:
    """The scenario above, replicated through its export feed: current and past answers match."""
    prefs = remember_raw(
        db, *A, "Sam takes oat milk in coffee", captured_at=100, recorded_at=100,
        claim={"subject": "Sam", "predicate": "milk", "value": "oat milk",
               "kind": "preference", "valid_from": 100},
    )  # fmt: skip
    assert prefs.claim_id is not None
    corrected = db.correct(
        m.CorrectRequest(
            tenant_id="a", person_id="sam", claim_id=prefs.claim_id,
            text="Sam switched to almond milk", value="almond milk", valid_at=200, recorded_at=200,
        )
    )  # fmt: skip
    delete(db, corrected.source_id, 300)
    remember_raw(db, "b", "sam", "Sam drinks no milk")  # another scope: never replicated
    times = [None, (50, 50), (150, 150), (250, 250), (350, 350), (150, 250), (250, 150)]

    def history(handle: MemoryDb) -> list[str]:
        answers = []
        for query in ("milk", "oat", "almond", "coffee"):
            for at in times:
                extra = {} if at is None else {"as_of": {"valid_at": at[0], "recorded_at": at[1]}}
                answers.append(canonical_dumps(to_json(search(handle, query, **extra))))
        return answers

    with MemoryDb(tmp_path / "replica.db") as replica:
        sync(db, replica, *A, limit=2)
        assert history(replica) == history(db)
    # Not vacuous: the past differs from the present, and it holds the superseded claim.
    assert history(db)[0] != history(db)[2]
    assert "Sam milk oat milk" in history(db)[2]


def test_correct_checks_the_replacement_claim_fields_on_hand_edited_data(db: MemoryDb) -> None:
    created = remember(db, *A, "Acme")
    assert created.claim_id is not None
    db.conn.execute("UPDATE claims SET predicate = ' ' WHERE id = ?", (created.claim_id,))
    before = table_snapshot(db)
    with pytest.raises(InvalidRequest, match=r"^claim predicate must not be empty$"):
        correct(db, created.claim_id, "Beta", 20, 20)
    assert table_snapshot(db) == before
