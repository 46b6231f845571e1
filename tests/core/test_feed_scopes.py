"""``feed_heads``: the scopes of a database's export feed and the last commit of each."""

from __future__ import annotations

from typing import Any

from zkr import operations
from zkr.db import MemoryDb
from zkr.feed.scopes import FeedHead, feed_heads


def _remember(db: MemoryDb, tenant: str, person: str, text: str, at: int) -> Any:
    return operations.run(
        db,
        "remember",
        {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "conversation",
            "text": text,
            "captured_at": at,
            "recorded_at": at,
        },
    )


def test_empty_database_has_no_scopes(db: MemoryDb) -> None:
    assert feed_heads(db) == []


def test_every_scope_with_its_last_commit_in_scope_order(db: MemoryDb) -> None:
    _remember(db, "b", "sam", "one", 1)  # commit 1
    _remember(db, "a", "zoe", "two", 2)  # commit 2
    _remember(db, "b", "sam", "three", 3)  # commit 3
    _remember(db, "a", "max", "four", 4)  # commit 4
    assert feed_heads(db) == [
        FeedHead("a", "max", 4),
        FeedHead("a", "zoe", 2),
        FeedHead("b", "sam", 3),
    ]
    # The head is where an export of the scope ends.
    page = operations.run(
        db,
        "export",
        {"tenant_id": "b", "person_id": "sam", "export_format": 1, "limit": 100},
    )
    assert page["high_water_mark"] == 3
