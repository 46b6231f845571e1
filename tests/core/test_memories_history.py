"""``memories`` and ``history``: filters, cursors, bounds, query plans, chains (issue 14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import remember, remember_raw
from zkr import models as m
from zkr import operations
from zkr.db import MemoryDb
from zkr.errors import InvalidRequest, NotFound
from zkr.retrieval import listing

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def page(db: MemoryDb, **fields: Any) -> m.MemoriesPage:
    result: m.MemoriesPage = db.memories(m.MemoriesRequest.model_validate({**SCOPE, **fields}))
    return result


def kinds(result: m.MemoriesPage) -> list[str]:
    return [
        item.claim.kind.value if item.claim else f"source:{item.capture.kind.value}"  # type: ignore[union-attr]
        for item in result.items
    ]


def test_filters_by_claim_kind_and_source_kind(db: MemoryDb) -> None:
    remember(db, "a", "sam", "Acme", recorded_at=11)  # fact claim + conversation capture
    remember_raw(db, "a", "sam", "a scanned page", kind="document", recorded_at=12)
    remember_raw(db, "a", "sam", "a screenshot", kind="screen", recorded_at=13)
    everything = kinds(page(db))
    # The capture and its claim share their recorded time: ordered by id (descending) between them.
    assert everything[:2] == ["source:screen", "source:document"]
    assert sorted(everything[2:]) == ["fact", "source:conversation"]
    assert kinds(page(db, claim_kinds=["fact"])) == ["fact"]
    assert kinds(page(db, claim_kinds=["task"])) == []
    assert kinds(page(db, source_kinds=["document", "screen"])) == [
        "source:screen",
        "source:document",
    ]
    assert kinds(page(db, claim_kinds=["fact"], source_kinds=["screen"])) == [
        "source:screen",
        "fact",
    ]


def test_items_cite_live_evidence_and_show_the_statement(db: MemoryDb) -> None:
    stored = remember(db, "a", "sam", "Acme")
    (claim_item,) = page(db, claim_kinds=["fact"]).items
    assert claim_item.memory == m.MemoryRef(kind=m.MemoryKind.claim, id=stored.claim_id or "")
    assert claim_item.claim is not None and claim_item.capture is None
    assert (claim_item.claim.subject, claim_item.claim.predicate, claim_item.claim.value) == (
        "Sam",
        "employer",
        "Acme",
    )
    assert claim_item.claim.valid_time.from_ == 10 and claim_item.claim.valid_time.until is None
    assert claim_item.evidence_ids == [stored.evidence_id]
    (capture_item,) = page(db, source_kinds=["conversation"]).items
    assert capture_item.capture is not None and capture_item.capture.text == "Sam works at Acme"
    assert capture_item.evidence_ids == [stored.evidence_id]
    db.delete(m.DeleteRequest(**SCOPE, source_id=stored.source_id, deleted_at=20))
    assert page(db).items == []


def test_cursor_pages_are_stable_when_newer_memories_arrive(db: MemoryDb) -> None:
    for i in range(12):
        remember_raw(db, "a", "sam", f"note {i}", recorded_at=100 + i)
    first = page(db, limit=5)
    assert [item.recorded_at for item in first.items] == [111, 110, 109, 108, 107]
    remember_raw(db, "a", "sam", "a newer note", recorded_at=500)
    second = page(db, limit=5, cursor=first.next_cursor)
    assert [item.recorded_at for item in second.items] == [106, 105, 104, 103, 102]
    last = page(db, limit=5, cursor=second.next_cursor)
    assert [item.recorded_at for item in last.items] == [101, 100]
    assert last.next_cursor is None


def test_as_of_lists_what_was_held_then(db: MemoryDb) -> None:
    stored = remember(db, "a", "sam", "Acme")
    db.correct(
        m.CorrectRequest(
            **SCOPE,
            claim_id=stored.claim_id or "",
            text="Sam moved to Beta",
            value="Beta",
            valid_at=30,
            recorded_at=30,
        )
    )
    now = [item.claim.value for item in page(db, claim_kinds=["fact"]).items if item.claim]
    then = page(db, claim_kinds=["fact"], as_of={"valid_at": 20, "recorded_at": 20})
    assert now == ["Beta"]
    assert [item.claim.value for item in then.items if item.claim] == ["Acme"]
    # As believed at 20: the correction recorded at 30 was not known yet (issue 24).
    held = then.items[0].claim
    assert held is not None
    assert held.status is m.ClaimStatus.accepted
    assert (held.valid_time.until, held.recorded_time.until) == (None, None)
    # Just before the correction was recorded it was still believed; from then on a mistake
    # correction withdrew it, and its replacement is only true from 30.
    before = page(db, claim_kinds=["fact"], as_of={"valid_at": 20, "recorded_at": 29})
    assert [(i.claim.value, i.claim.status) for i in before.items if i.claim] == [
        ("Acme", m.ClaimStatus.accepted)
    ]
    known = page(db, claim_kinds=["fact"], as_of={"valid_at": 20, "recorded_at": 30})
    assert [item.claim.value for item in known.items if item.claim] == []


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!!",
        "bTE6eA",
        "bTE6MTI6",
        "eDE6MTI6YWJj",
        "bTE6MDE6YWJj",
        "bTE6OTk5OTk5OTk5OTk5OTk5OTk5OTk6YQ",
    ],
)
def test_a_bad_cursor_is_refused(db: MemoryDb, cursor: str) -> None:
    with pytest.raises(InvalidRequest, match=r"^cursor is not a memories cursor$"):
        page(db, cursor=cursor)


def test_cursor_round_trip() -> None:
    assert listing.decode_cursor(listing.encode_cursor(-5, "abc")) == (-5, "abc")
    assert listing.decode_cursor(listing.encode_cursor(m.I64_MAX, "f" * 32)) == (
        m.I64_MAX,
        "f" * 32,
    )


def test_limit_rules_and_page_byte_budget(db: MemoryDb) -> None:
    big = "x" * 5000
    for i in range(110):
        remember_raw(db, "a", "sam", f"{big} {i}", recorded_at=100 + i)
    assert len(page(db, limit=0).items) == 10
    full = page(db, limit=1000)
    assert len(full.items) == 100  # capped at 100; each text cut to 4096 bytes
    assert all(len(item.capture.text.encode()) <= 4096 for item in full.items if item.capture)
    assert full.next_cursor is not None


@pytest.mark.parametrize("keyset", [False, True])
@pytest.mark.parametrize("as_of", [False, True])
@pytest.mark.parametrize("which", ["claims", "captures"])
def test_page_statements_walk_the_listing_index(
    tmp_path: Path, keyset: bool, as_of: bool, which: str
) -> None:
    """No scan, no sort: each kind's page is a range of its listing index, newest first."""
    build = listing.claim_statements if which == "claims" else listing.capture_statements
    index = "claims_kind_listing" if which == "claims" else "sources_kind_listing"
    sql, _ = build(keyset, as_of)
    params = {
        "tenant": "a",
        "person": "sam",
        "kind": "fact",
        "rows": 11,
        "after_recorded": 5,
        "after_id": "x",
        "valid_at": 1,
        "recorded_at": 1,
    }
    with MemoryDb(tmp_path / "plans.db") as db:
        plan = [row[3] for row in db.conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    assert index in plan[0], plan
    if keyset:
        assert "(recorded_" in plan[0] and ",id)<(?,?)" in plan[0], plan
    assert not any(step.startswith("SCAN") or "TEMP B-TREE" in step for step in plan), plan


# ------------------------------------------------------------------------------------ history


def test_history_answers_for_every_version_of_a_chain(db: MemoryDb) -> None:
    first = remember(db, "a", "sam", "Acme")
    assert first.claim_id is not None
    second = db.correct(
        m.CorrectRequest(
            **SCOPE,
            claim_id=first.claim_id,
            text="now Beta",
            value="Beta",
            valid_at=20,
            recorded_at=20,
        )
    )
    third = db.correct(
        m.CorrectRequest(
            **SCOPE,
            claim_id=second.claim_id,
            text="now Gamma",
            value="Gamma",
            valid_at=30,
            recorded_at=30,
        )
    )
    chains = [
        db.history(m.HistoryRequest(**SCOPE, claim_id=claim_id))
        for claim_id in (first.claim_id, second.claim_id, third.claim_id)
    ]
    for asked, chain in zip((first.claim_id, second.claim_id, third.claim_id), chains, strict=True):
        assert chain.claim_id == asked
        assert [v.claim.value for v in chain.versions] == ["Acme", "Beta", "Gamma"]
        assert chain.current_claim_id == third.claim_id
    chain = chains[0]
    assert chain.versions[0].claim.valid_time.until == 20
    assert chain.versions[0].claim.recorded_time.until == 20
    assert chain.versions[0].corrected_by is not None
    assert chain.versions[0].corrected_by.claim_id == second.claim_id
    assert chain.versions[0].evidence[0].quote == "Sam works at Acme"
    assert [(e.at, e.event) for e in chain.events] == [
        (10, "recorded"),
        (20, "recorded"),
        (20, "corrected"),
        (30, "recorded"),
        (30, "corrected"),
    ]
    # `get` still refuses a superseded claim (contract), history does not.
    with pytest.raises(NotFound):
        db.get(
            m.GetRequest.model_validate(
                {**SCOPE, "target": {"kind": "claim", "id": first.claim_id}}
            )
        )


def test_history_shows_links_deletions_and_retraction(db: MemoryDb) -> None:
    stored = remember(db, "a", "sam", "Acme")
    assert stored.claim_id is not None
    other = remember_raw(db, "a", "sam", "Acme badge photo", recorded_at=15)
    db.link(
        m.LinkRequest.model_validate(
            {
                **SCOPE,
                "claim_id": stored.claim_id,
                "evidence_id": other.evidence_id,
                "relation": "contradicts",
                "confidence_basis_points": 4000,
            }
        )
    )
    db.delete(m.DeleteRequest(**SCOPE, source_id=stored.source_id, deleted_at=40))
    chain = db.history(m.HistoryRequest(**SCOPE, claim_id=stored.claim_id))
    (version,) = chain.versions
    assert version.claim.status is m.ClaimStatus.retracted
    assert chain.current_claim_id is None
    assert [(e.evidence_id, e.relation.value, e.quote) for e in version.evidence] == [
        (stored.evidence_id, "supports", ""),  # deleted: its text is not shown
        (other.evidence_id, "contradicts", "Acme badge photo"),
    ]
    assert [(e.at, e.event) for e in chain.events] == [
        (10, "recorded"),
        (15, "linked"),
        (40, "deleted"),
        (40, "retracted"),
    ]


def test_history_of_another_scope_or_a_missing_id_is_not_found(db: MemoryDb) -> None:
    stored = remember(db, "a", "sam", "Acme")
    for scope, claim_id in (
        ({"tenant_id": "b", "person_id": "sam"}, stored.claim_id),
        (SCOPE, "f" * 32),
    ):
        with pytest.raises(NotFound) as caught:
            db.history(m.HistoryRequest.model_validate({**scope, "claim_id": claim_id}))
        assert str(caught.value) == "record not found"


def test_the_operations_are_in_the_table() -> None:
    for name, effect_model in (
        ("memories", m.MemoriesRequest),
        ("history", m.HistoryRequest),
        ("forget", m.ForgetRequest),
    ):
        assert operations.OPERATIONS[name].request is effect_model


def test_a_history_larger_than_a_read_page_is_refused_clearly(db: MemoryDb) -> None:
    # Every correction adds a version (and a link adds evidence): 3,000 corrections answered
    # 3.7 MB in 2 s, with no bound. Like every read page, a history holds at most 1,000,000 bytes;
    # past that it is a clear error, found without building the whole chain.
    from zkr.errors import LimitExceeded

    first = remember(db, "a", "sam", "Acme")
    claim_id = first.claim_id
    assert claim_id is not None
    for at in range(20, 26):  # six versions of ~200 KB values
        claim_id = db.correct(
            m.CorrectRequest(
                **SCOPE, claim_id=claim_id, text=f"now {at}", value=f"{at} " + "x" * 200_000,
                valid_at=at, recorded_at=at,
            )
        ).claim_id  # fmt: skip
    for asked in (first.claim_id, claim_id):
        with pytest.raises(LimitExceeded, match="history exceeds the 1000000-byte page limit"):
            db.history(m.HistoryRequest(**SCOPE, claim_id=asked))
    # A chain that fits is answered whole, as before.
    short = remember(db, "a", "sam", "Initech")
    assert short.claim_id is not None
    assert len(db.history(m.HistoryRequest(**SCOPE, claim_id=short.claim_id)).versions) == 1
