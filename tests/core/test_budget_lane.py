"""The dense lane's load does not count against a search's time budget (issue 13.3 at 100k).

Loading a lane reads every vector of the scope: seconds for 100,000 vectors on a busy machine,
paid once per process and kept. Counted in the 5 s budget, it made every hybrid search of such a
store fail under load, each retry starting the load again. The rest of the search keeps its budget.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import zkr.embeddings.dense as dense
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import LimitExceeded
from zkr.store.budget import budget_paused, search_budget

SCOPE = {"tenant_id": "a", "person_id": "sam"}
BUDGET = 0.2


@pytest.fixture
def slow_lane_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryDb:
    db = MemoryDb(tmp_path / "m.db")
    for index, text in enumerate(["kiwi jam", "fig tart", "kiwi pie"]):
        stored = db.remember(
            m.RememberRequest.model_validate(
                {**SCOPE, "kind": "document", "text": text,
                 "captured_at": index, "recorded_at": index}
            )
        )  # fmt: skip
        db.embed(
            m.EmbedRequest.model_validate(
                {**SCOPE, "target": {"kind": "source", "id": stored.source_id},
                 "embedding": {"model": "mini", "version": "1", "vector": [1.0, index, 0.5],
                               "input_hash": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                               "normalization": "none", "distance": "cosine"}}
            )
        )  # fmt: skip
    build = dense._build

    def slow_build(*args: Any) -> Any:
        time.sleep(BUDGET * 2)  # the lane's load outlasts the whole budget...
        return build(*args)  # ...and then reads the vectors (SQL the budget would abort)

    monkeypatch.setattr(dense, "_build", slow_build)
    db.search_budget_seconds = BUDGET
    return db


@pytest.mark.parametrize("ranking", list(m.Ranking))
def test_a_slow_lane_load_does_not_spend_the_search_budget(
    slow_lane_db: MemoryDb, ranking: m.Ranking
) -> None:
    request = m.SearchRequest.model_validate(
        {**SCOPE, "query": "kiwi", "ranking": ranking,
         "query_embedding": {"model": "mini", "version": "1", "vector": [1.0, 0.0, 0.5]}}
    )  # fmt: skip
    pack = slow_lane_db.search(request)
    assert {item.excerpt for item in pack.items} == {"kiwi jam", "kiwi pie", "fig tart"}


COUNT = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)"
    " SELECT count(*) FROM n"
)


def test_only_the_paused_block_is_left_out_of_the_budget() -> None:
    conn = sqlite3.connect(":memory:")
    with search_budget(conn, BUDGET):
        with budget_paused(conn):
            time.sleep(BUDGET * 2)
            assert conn.execute(COUNT).fetchone() == (50000,)  # past the deadline, not counted
        assert conn.execute(COUNT).fetchone() == (50000,)  # the budget's own time is left
    with pytest.raises(LimitExceeded), search_budget(conn, BUDGET):
        with budget_paused(conn):
            time.sleep(BUDGET / 2)
        time.sleep(BUDGET)  # outside the pause: this time counts
        conn.execute(COUNT).fetchone()
