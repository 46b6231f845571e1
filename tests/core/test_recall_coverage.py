"""The recall coverage factor's scratch index (issue 27.5): each query word matched against a copy
of the page's rows gives exactly what matching it against the whole recall index gives, from any
thread, leaves nothing behind in the search's connection, and is empty again after each use."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval import _recall_coverage
from zkr.retrieval._recall_query import recall_concepts

SCOPE = {"tenant_id": "a", "person_id": "sam"}
TURNS = [
    "Priya works at Globex since March",
    "We went to the farmers market on Sunday",
    "Need to renew the passport before the trip to Oslo",
    "The gym by the office opens at six",
    "Priya said the market had the best needles and thread",
    "I need new running shoes for the gym",
    "Nothing about any of that here",
]
QUERIES = [
    "where does Priya work?",
    "when did we go to the farmers market?",
    "what do I need for the gym?",
    "passport trip needs",
]


@pytest.fixture
def db(tmp_path: Path) -> MemoryDb:
    db = MemoryDb(str(tmp_path / "coverage.db"))
    for at, text in enumerate(TURNS, start=100):
        db.remember(
            m.RememberRequest.model_validate(
                {**SCOPE, "kind": "conversation", "text": text, "captured_at": at,
                 "recorded_at": at}
            )
        )  # fmt: skip
    return db


def literal(db: MemoryDb, query: str, sources: list[str]) -> dict[str, float]:
    """Each word matched against the whole recall index, the sources' rows kept."""
    concepts = recall_concepts(query)
    held = dict.fromkeys(sources, 0)
    for concept in concepts:
        for (source_id,) in db.conn.execute(
            "SELECT s.id FROM recall_fts JOIN sources AS s ON s.rowid = recall_fts.rowid"
            " WHERE recall_fts MATCH ?",
            (concept,),
        ):
            if source_id in held:
                held[source_id] += 1
    return {source_id: count / len(concepts) for source_id, count in held.items()}


def all_sources(db: MemoryDb) -> list[str]:
    return [row[0] for row in db.conn.execute("SELECT id FROM sources ORDER BY id")]


@pytest.mark.parametrize("query", QUERIES)
def test_the_scratch_index_matches_what_the_whole_index_matches(db: MemoryDb, query: str) -> None:
    sources = all_sources(db)
    got = _recall_coverage.coverage(db.conn, query, sources, 4)
    assert got == literal(db, query, sources)
    assert any(0 < share < 1 for share in got.values())  # the queries do split the rows
    # Again, in another order and on a part of the page: nothing is left from the first use.
    part = sources[::-2]
    assert _recall_coverage.coverage(db.conn, query, part, 4) == literal(db, query, part)


def test_each_thread_has_its_own_scratch_and_the_connection_gets_nothing(db: MemoryDb) -> None:
    sources = all_sources(db)
    expected = {query: literal(db, query, sources) for query in QUERIES}
    found: dict[str, dict[str, float]] = {}
    thread_conns: list[object] = []

    def work(query: str) -> None:
        found[query] = _recall_coverage.coverage(db.conn, query, sources, 4)
        thread_conns.append(_recall_coverage._scratch())

    threads = [threading.Thread(target=work, args=(query,)) for query in QUERIES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == expected
    assert len({id(conn) for conn in thread_conns}) == len(QUERIES)
    search = {**SCOPE, "query": QUERIES[0], "ranking": "recall"}
    assert db.search(m.SearchRequest.model_validate(search)).items
    # The search's own connection has no scratch table (the temp schema stays empty) ...
    assert db.conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)
    # ... and this thread's scratch index is empty between searches.
    scratch = _recall_coverage._scratch()
    rows = scratch.execute("SELECT rowid FROM cover WHERE cover MATCH ?", ('"priya"',)).fetchall()
    assert rows == []
