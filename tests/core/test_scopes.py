"""``scopes``: the persons of one tenant, bounded, paged with a stable cursor, never another
tenant's (issue 28, acceptance 4)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr import MemoryDb
from zkr.errors import InvalidRequest
from zkr.tools import tool_specs
from zkr.writes.profiles import MAX_READ_PAGE_BYTES


def _remember(db: MemoryDb, tenant: str, person: str, at: int = 1) -> None:
    db.run(
        "remember",
        {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "conversation",
            "text": "hello",
            "captured_at": at,
            "recorded_at": at,
        },
    )


def _all_pages(db: MemoryDb, tenant: str, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        request: dict[str, Any] = {"tenant_id": tenant, "limit": limit, "cursor": cursor}
        page = db.run("scopes", request)
        pages.append([item.person_id for item in page.items])
        if page.next_cursor is None:
            return pages
        assert len(pages) < 1000, "paging does not end"
        cursor = page.next_cursor


# Ids that share prefixes, differ only in case or in a combining mark, and leave ASCII.
_ids = st.text(alphabet=st.sampled_from("aAbé\u0301 _-z0:/"), min_size=1, max_size=6).filter(
    lambda text: text.strip() != ""
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    written=st.lists(st.tuples(st.sampled_from(["t1", "t2", "T1", "t1 "]), _ids), max_size=25),
    limit=st.integers(min_value=0, max_value=130),
)
def test_pages_hold_exactly_the_tenants_persons_once_each_in_order(
    written: list[tuple[str, str]], limit: int
) -> None:
    db = MemoryDb(":memory:")
    for at, (tenant, person) in enumerate(written, start=1):
        _remember(db, tenant, person, at)
    for tenant in ("t1", "t2", "T1", "t1 "):
        pages = _all_pages(db, tenant, limit)
        listed = [person for page in pages for person in page]
        assert listed == sorted({p for t, p in written if t == tenant})
        bound = 10 if limit == 0 else min(limit, 100)
        assert all(len(page) <= bound for page in pages)
        # Only the last page may be short, and only an empty tenant has an empty page.
        assert all(len(page) == bound for page in pages[:-1])
        assert pages[-1] or not listed


@settings(max_examples=40, deadline=None)
@given(
    before=st.sets(_ids, min_size=1, max_size=12),
    during=st.lists(st.tuples(st.integers(min_value=0, max_value=12), _ids), max_size=12),
    limit=st.integers(min_value=1, max_value=4),
)
def test_a_cursor_is_stable_while_persons_arrive_between_pages(
    before: set[str], during: list[tuple[int, str]], limit: int
) -> None:
    db = MemoryDb(":memory:")
    for person in sorted(before):
        _remember(db, "t", person)
    seen: list[str] = []
    cursor: str | None = None
    for page_number in range(100):
        for after_page, person in during:
            if after_page == page_number:
                _remember(db, "t", person, 2)
                _remember(db, "other", person + "!", 2)
        page = db.run("scopes", {"tenant_id": "t", "limit": limit, "cursor": cursor})
        seen.extend(item.person_id for item in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    # Ascending without repeats, everyone present from the start listed, no other tenant's.
    assert seen == sorted(set(seen))
    assert before <= set(seen)
    assert set(seen) <= before | {person for _, person in during}


def test_a_page_holds_at_most_the_read_budget_and_always_one_person() -> None:
    db = MemoryDb(":memory:")
    big = [letter * (MAX_READ_PAGE_BYTES // 3) for letter in "abcd"]
    for person in big:
        _remember(db, "t", person)
    pages = _all_pages(db, "t", 100)
    assert [len(page) for page in pages] == [2, 2]
    assert [p for page in pages for p in page] == big
    huge = "h" * (MAX_READ_PAGE_BYTES + 10)
    _remember(db, "u", huge)
    assert _all_pages(db, "u", 10) == [[huge]]


def test_bad_requests_are_refused_with_one_line() -> None:
    db = MemoryDb(":memory:")
    _remember(db, "t", "ana")
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        db.run("scopes", {"tenant_id": " "})
    for cursor in ("", "not base64!", "bTE6MTphYg", "czE6"):
        with pytest.raises(InvalidRequest, match=r"^cursor is not a scopes cursor$"):
            db.run("scopes", {"tenant_id": "t", "cursor": cursor})


def test_no_host_offers_the_listing_to_a_model() -> None:
    # A host serves one person: the other persons of its tenant are none of the model's business.
    assert "scopes" not in {spec.operation for spec in tool_specs()}
