"""Profile entries and daily reviews (contract §4.6-§4.10, §9.1 items 10-12)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.conftest import feed, remember, remember_raw, table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import InvalidRequest, LimitExceeded, NotFound, RequestParseError
from zkr.operations import OPERATIONS, parse
from zkr.writes.profiles import MAX_READ_PAGE_BYTES, check_read_page

A = ("a", "sam")


def profile_fact(db: MemoryDb, value: str, recorded_at: int = 10, **kw: Any) -> m.RememberResult:
    claim = {
        "subject": "Sam",
        "predicate": kw.pop("predicate", "employer"),
        "value": value,
        "kind": "profile_fact",
        "valid_from": 10,
    }
    return remember(db, *A, value, recorded_at=recorded_at, claim=claim, **kw)


def profile(
    db: MemoryDb, claim_id: str | None, recorded_at: int, stability: str = "stable", /, **kw: Any
) -> m.ProfileEntry:
    payload = {
        "tenant_id": "a",
        "person_id": "sam",
        "stability": stability,
        "claim_id": claim_id,
        "recorded_at": recorded_at,
    } | kw
    return db.profile(m.ProfileRequest.model_validate(payload))


def profiles(db: MemoryDb, limit: int = 10, /, **kw: Any) -> list[m.ProfileEntry]:
    payload = {"tenant_id": "a", "person_id": "sam", "limit": limit} | kw
    return db.profiles(m.ProfilesRequest.model_validate(payload))


def review(
    db: MemoryDb,
    evidence_ids: list[str],
    day: str = "2024-05-01",
    recorded_at: int = 10,
    /,
    **kw: Any,
) -> m.ReviewResult:
    payload = {
        "tenant_id": "a",
        "person_id": "sam",
        "day": day,
        "summary": "Sam talked about work",
        "evidence_ids": evidence_ids,
        "recorded_at": recorded_at,
    } | kw
    return db.review(m.ReviewRequest.model_validate(payload))


def reviews(db: MemoryDb, limit: int = 10, /, **kw: Any) -> list[m.ReviewItem]:
    payload = {"tenant_id": "a", "person_id": "sam", "limit": limit} | kw
    return db.reviews(m.ReviewsRequest.model_validate(payload))


def link(db: MemoryDb, claim_id: str, evidence_id: str, relation: str, **kw: Any) -> m.OkResult:
    payload = {
        "tenant_id": "a",
        "person_id": "sam",
        "claim_id": claim_id,
        "evidence_id": evidence_id,
        "relation": relation,
        "confidence_basis_points": 8000,
    } | kw
    return db.link(m.LinkRequest.model_validate(payload))


def delete(db: MemoryDb, source_id: str, deleted_at: int) -> m.DeleteResult:
    return db.delete(
        m.DeleteRequest(tenant_id="a", person_id="sam", source_id=source_id, deleted_at=deleted_at)
    )


# ----------------------------------------------------------------------------------------------
# §9.1 checklist
# ----------------------------------------------------------------------------------------------


def test_profile_entries_and_claim_evidence_remain_scoped_and_live(db: MemoryDb) -> None:
    acme = profile_fact(db, "Acme", recorded_at=10)
    assert acme.claim_id is not None
    with pytest.raises(InvalidRequest, match=r"^profile entry cannot predate its backing claim$"):
        profile(db, acme.claim_id, 9)

    entry = profile(db, acme.claim_id, 10)
    assert (entry.key, entry.value, entry.stability) == ("employer", "Acme", "stable")
    assert profiles(db) == [entry]
    commits = feed(db, *A)
    assert profile(db, acme.claim_id, 10) == entry  # identical replay
    assert feed(db, *A) == commits

    beta = profile_fact(db, "Beta", recorded_at=10)
    assert beta.claim_id is not None
    with pytest.raises(InvalidRequest, match=r"^profile replacement must advance recorded_at$"):
        profile(db, beta.claim_id, 10)
    replaced = profile(db, beta.claim_id, 11)
    assert replaced.id == entry.id
    assert (replaced.key, replaced.value, replaced.claim_id) == ("employer", "Beta", beta.claim_id)
    assert profiles(db) == [replaced]

    assert link(db, acme.claim_id, beta.evidence_id, "contradicts") == m.OkResult()
    with pytest.raises(NotFound):
        link(db, acme.claim_id, beta.evidence_id, "supports", tenant_id="b")

    delete(db, beta.source_id, 20)
    assert profiles(db) == []

    raw = (
        '{"tenant_id":"a","person_id":"sam","stability":"stable","claim_id":"'
        + acme.claim_id
        + '","recorded_at":30,"key":"employer","value":"Acme"}'
    )
    with pytest.raises(RequestParseError, match="unknown field"):
        parse(OPERATIONS["profile"], raw)


def test_profile_and_review_pages_are_byte_bounded(db: MemoryDb) -> None:
    big = "x" * 600_000
    for predicate in ("first", "second"):
        created = profile_fact(db, big, predicate=predicate, text=f"Sam {predicate}")
        profile(db, created.claim_id, 10)
    with pytest.raises(LimitExceeded, match=r"^read page exceeds the 1000000-byte page limit$"):
        profiles(db, 100)
    assert len(profiles(db, 1)) == 1

    evidence = remember_raw(db, *A, "Sam had a long day").evidence_id
    review(db, [evidence], summary=big)
    review(db, [evidence], summary=big)
    with pytest.raises(LimitExceeded, match=r"^read page exceeds the 1000000-byte page limit$"):
        reviews(db)
    assert len(reviews(db, 1)) == 1


def test_single_oversized_read_record_is_refused(db: MemoryDb) -> None:
    evidence = remember_raw(db, *A, "Sam had a long day").evidence_id
    review(db, [evidence], summary="y" * 999_999)
    with pytest.raises(LimitExceeded, match=r"^read record exceeds the 1000000-byte page limit$"):
        reviews(db)


def test_reviews_require_live_same_scope_evidence(db: MemoryDb) -> None:
    cited = remember_raw(db, *A, "Sam shipped the release")
    stored = review(db, [cited.evidence_id])
    assert reviews(db) == [
        m.ReviewItem(
            id=stored.id,
            day="2024-05-01",
            summary="Sam talked about work",
            evidence_ids=[cited.evidence_id],
            recorded_at=10,
        )
    ]
    assert reviews(db, tenant_id="b") == []
    delete(db, cited.source_id, 20)
    assert reviews(db) == []
    with pytest.raises(InvalidRequest, match=f"^evidence {cited.evidence_id} is unavailable$"):
        review(db, [cited.evidence_id])


# ----------------------------------------------------------------------------------------------
# profile rules
# ----------------------------------------------------------------------------------------------


def test_profile_needs_a_live_profile_fact_claim_in_scope(db: MemoryDb) -> None:
    fact = remember(db, *A, "Acme")  # kind fact
    live = profile_fact(db, "Acme")
    assert live.claim_id is not None and fact.claim_id is not None
    before = table_snapshot(db)
    for claim_id, kw in (
        (fact.claim_id, {}),
        (live.claim_id, {"tenant_id": "b"}),
        (live.claim_id, {"person_id": "max"}),
        ("missing", {}),
        ("", {}),  # claim_id is not text-checked: blank is simply not found
    ):
        with pytest.raises(NotFound, match=r"^record not found$"):
            profile(db, claim_id, 10, **kw)
    assert table_snapshot(db) == before
    db.conn.execute("UPDATE claims SET valid_until = 50 WHERE id = ?", (live.claim_id,))
    before = table_snapshot(db)
    with pytest.raises(NotFound):
        profile(db, live.claim_id, 10)  # no longer current
    assert table_snapshot(db) == before


def test_profile_of_a_superseded_claim_is_not_found(db: MemoryDb) -> None:
    created = profile_fact(db, "Berlin", predicate="city")
    assert created.claim_id is not None
    db.correct(
        m.CorrectRequest(
            tenant_id="a",
            person_id="sam",
            claim_id=created.claim_id,
            text="Sam moved to Munich",
            value="Munich",
            valid_at=20,
            recorded_at=20,
        )
    )
    with pytest.raises(NotFound):
        profile(db, created.claim_id, 30)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tenant_id": " "}, "tenant_id must not be empty"),
        ({"person_id": ""}, "person_id must not be empty"),
    ],
)
def test_scope_error_messages_of_profiles_and_reviews(
    db: MemoryDb, change: dict[str, Any], message: str
) -> None:
    created = profile_fact(db, "Acme")
    evidence = created.evidence_id
    before = table_snapshot(db)
    calls = [
        lambda: profile(db, created.claim_id, 10, **change),
        lambda: profiles(db, **change),
        lambda: review(db, [evidence], **change),
        lambda: reviews(db, **change),
    ]
    for call in calls:
        with pytest.raises(InvalidRequest) as info:
            call()
        assert str(info.value) == message
    assert table_snapshot(db) == before


def test_profile_writes_one_profile_event_per_change(db: MemoryDb) -> None:
    acme = profile_fact(db, "Acme", recorded_at=10)
    entry = profile(db, acme.claim_id, 12, "current")
    assert feed(db, *A)[-1] == (12, ["profile"])
    restabilized = profile(db, acme.claim_id, 13, "stable")
    assert restabilized.id == entry.id
    assert feed(db, *A)[-1] == (13, ["profile"])
    assert len(feed(db, *A)) == 3
    stored = db.conn.execute("SELECT stability FROM profile_entries").fetchall()
    assert stored == [('"stable"',)]


def test_profiles_order_limit_and_liveness(db: MemoryDb) -> None:
    entries = []
    for index in range(12):
        created = profile_fact(db, f"v{index}", predicate=f"key{index}", text=f"fact {index}")
        entries.append(profile(db, created.claim_id, 10 + index % 3))
    expected = sorted(entries, key=lambda e: (-e.recorded_at, e.id))
    assert profiles(db, 0) == expected[:10]
    assert profiles(db, 200) == expected
    assert profiles(db, 3) == expected[:3]
    # A hand-closed claim no longer backs a listed profile.
    db.conn.execute("UPDATE claims SET recorded_until = 99 WHERE id = ?", (expected[0].claim_id,))
    assert profiles(db, 100) == expected[1:]


# ----------------------------------------------------------------------------------------------
# review rules
# ----------------------------------------------------------------------------------------------


def test_review_error_messages(db: MemoryDb) -> None:
    live = remember_raw(db, *A, "Sam shipped the release").evidence_id
    gone = remember_raw(db, *A, "Sam deleted this")
    delete(db, gone.source_id, 10)
    other = remember_raw(db, "b", "sam", "Sam elsewhere").evidence_id
    before = table_snapshot(db)
    cases: list[tuple[dict[str, Any], list[str], str]] = [
        ({"day": " "}, [live], "day must not be empty"),
        ({"day": "", "summary": ""}, [], "day must not be empty"),
        ({"summary": "\n"}, [live], "summary must not be empty"),
        ({"summary": ""}, [], "summary must not be empty"),
        ({}, [], "review needs evidence_ids"),
        ({}, [live, "missing", other], "evidence missing is unavailable"),
        ({}, [other, "missing"], f"evidence {other} is unavailable"),
        ({}, [live, gone.evidence_id], f"evidence {gone.evidence_id} is unavailable"),
    ]
    for change, evidence_ids, message in cases:
        with pytest.raises(InvalidRequest) as info:
            review(db, evidence_ids, **change)
        assert str(info.value) == message
    assert table_snapshot(db) == before


def test_reviews_are_not_idempotent_and_keep_duplicates(db: MemoryDb) -> None:
    evidence = remember_raw(db, *A, "Sam shipped the release").evidence_id
    first = review(db, [evidence, evidence], "2024-05-01", 10)
    second = review(db, [evidence, evidence], "2024-05-01", 10)
    assert first.id != second.id
    assert feed(db, *A)[-2:] == [(10, ["daily_review"]), (10, ["daily_review"])]
    stored = db.conn.execute(
        "SELECT evidence_ids FROM daily_reviews WHERE id = ?", (first.id,)
    ).fetchone()
    assert stored == (f'["{evidence}","{evidence}"]',)


def test_reviews_order_by_day_then_recorded_at(db: MemoryDb) -> None:
    evidence = remember_raw(db, *A, "Sam shipped the release").evidence_id
    early = review(db, [evidence], "2024-05-01", 30)
    late_old = review(db, [evidence], "2024-05-02", 10)
    late_new = review(db, [evidence], "2024-05-02", 20)
    assert [item.id for item in reviews(db)] == [late_new.id, late_old.id, early.id]
    assert [item.id for item in reviews(db, 1)] == [late_new.id]


def test_reviews_of_one_day_are_found_however_many_newer_days_there_are(db: MemoryDb) -> None:
    evidence = remember_raw(db, *A, "Sam shipped the release").evidence_id
    oldest = review(db, [evidence], "2020-01-01", 5)
    for day in range(1, 121):  # more days than any page holds (100)
        review(db, [evidence], f"2021-{1 + day // 28:02d}-{1 + day % 28:02d}", 10)
    assert oldest.id not in {item.id for item in reviews(db, 100)}
    assert [item.id for item in reviews(db, 100, day="2020-01-01")] == [oldest.id]
    again = review(db, [evidence], "2020-01-01", 50)
    assert [item.id for item in reviews(db, 1, day="2020-01-01")] == [again.id]
    assert reviews(db, day="2020-01-02") == []
    assert reviews(db, day="2020-01-01 ") == []  # the day as stored, not a pattern or a prefix
    assert [
        item.id for item in db.run("reviews", {"tenant_id": "a", "person_id": "sam", "day": None})
    ] == [item.id for item in reviews(db)]
    with pytest.raises(RequestParseError, match="invalid value for `day`"):
        parse(OPERATIONS["reviews"], '{"tenant_id": "a", "person_id": "sam", "day": 20200101}')


# ----------------------------------------------------------------------------------------------
# read page byte guard (§4.10)
# ----------------------------------------------------------------------------------------------


def _item_of_size(size: int) -> m.ReviewItem:
    empty = m.ReviewItem(id="i", day="d", summary="", evidence_ids=["e"], recorded_at=1)
    overhead = len(empty.model_dump_json().encode())
    item = empty.model_copy(update={"summary": "s" * (size - overhead)})
    assert len(item.model_dump_json().encode()) == size
    return item


def test_read_page_guard_boundaries() -> None:
    check_read_page([])
    check_read_page([_item_of_size(MAX_READ_PAGE_BYTES - 2)])  # exactly "[item]"
    with pytest.raises(LimitExceeded, match=r"^read record exceeds"):
        check_read_page([_item_of_size(MAX_READ_PAGE_BYTES - 1)])
    half = (MAX_READ_PAGE_BYTES - 3) // 2  # "[a,b]" == 3 bytes of punctuation
    check_read_page([_item_of_size(half), _item_of_size(MAX_READ_PAGE_BYTES - 3 - half)])
    with pytest.raises(LimitExceeded, match=r"^read page exceeds"):
        check_read_page([_item_of_size(half), _item_of_size(MAX_READ_PAGE_BYTES - 2 - half)])
