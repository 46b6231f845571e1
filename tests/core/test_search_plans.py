"""Search statements seek by the ids they are given; none walks a whole scope.

Without ANALYZE statistics SQLite may prefer a scope index over an ``id IN (...)`` list (it did
for the batched claim items: every claim of the scope was read per search). These checks pin the
plans that keep a search's work proportional to its results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zkr.db import MemoryDb
from zkr.retrieval import _lexical as lexical
from zkr.retrieval import _materialize as materialize

PARAMS = {"tenant": "t", "person": "p", "valid_at": 1, "recorded_at": 1, "match": '"x"'}

STATEMENTS = {
    # name: (statement, alias of the first table, how it must be searched)
    "claim items": (materialize._CLAIM_CURRENT, "c", "sqlite_autoindex_claims_1 (id=?)"),
    "claim items as_of": (materialize._CLAIM_AS_OF, "c", "sqlite_autoindex_claims_1 (id=?)"),
    "source items": (materialize._SOURCE, "s", "AND id=?)"),
    "evidence items": (materialize._EVIDENCE, "e", "sqlite_autoindex_evidence_1 (id=?)"),
    "resolution": (lexical._RESOLVE_CURRENT, "s", "AND id=?)"),
    "resolution as_of": (lexical._RESOLVE_AS_OF, "s", "AND id=?)"),
}


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_statement_seeks_its_ids(tmp_path: Path, name: str) -> None:
    template, alias, seek = STATEMENTS[name]
    db = MemoryDb(tmp_path / "plans.db")
    ids = {f"t{index}": f"id{index}" for index in range(3)}
    sql = template.replace("{ids}", ", ".join(f":{key}" for key in ids))
    plan = [row[3] for row in db.conn.execute("EXPLAIN QUERY PLAN " + sql, {**PARAMS, **ids})]
    db.close()
    first = next(step for step in plan if step.startswith(("SEARCH", "SCAN")))
    assert first.split()[:2] == ["SEARCH", alias], plan
    assert seek in first, plan
    assert not any(step.startswith("SCAN") for step in plan), plan
