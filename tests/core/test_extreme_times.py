"""Captures at the ends of the i64 range (found by the issue 18 fuzz suite).

``captured_at`` is any i64; the recall index computed ``captured_at ± 3 h`` in Python (an int
SQLite cannot bind: ``OverflowError``, an internal error) and ``abs(t - captured_at)`` in SQL
(SQLite's ``abs`` fails on -2^63).
"""

from __future__ import annotations

from zkr.db import MemoryDb
from zkr.models import I64_MAX, I64_MIN
from zkr.store.recall_index import build_recall_index

TIMES = [I64_MIN, I64_MIN + 1, 0, I64_MAX]


def test_captures_at_the_i64_limits_are_stored_and_found(db: MemoryDb) -> None:
    stored = [
        db.run(
            "remember",
            {"tenant_id": "t", "person_id": "p", "kind": "audio", "text": f"edge {index}",
             "captured_at": at, "recorded_at": 1},
        ).source_id
        for index, at in enumerate(TIMES)
    ]  # fmt: skip
    pack = db.run("search", {"tenant_id": "t", "person_id": "p", "query": "edge", "limit": 10})
    assert sorted(item.memory.id for item in pack.items) == sorted(stored)
    with db.atomic() as conn:
        assert build_recall_index(conn) == len(TIMES)  # the migration's rebuild, too
