"""The recall coverage factor's scratch index (issue 27.5): each query word matched against a copy
of the page's rows gives exactly what matching it against the whole recall index gives, from any
thread, leaves nothing behind in the search's connection, and is empty again after each use."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval import _recall_coverage
from zkr.retrieval._recall_query import recall_concepts
from zkr.retrieval._recall_tuning import RecallTuning

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
    # remember defers its recall rows; a search applies them, the calls below read the index.
    db.apply_recall_backlog()
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


WORDS = ["priya", "market", "gym", "passport", "trip", "oslo", "shoes", "thread", "office", "tea"]


def eager_order(
    db: MemoryDb, query: str, sources: list[str], more: bool, bm25: dict[str, float],
    neighbours_only: set[str], floor: float,
) -> list[str]:  # fmt: skip
    """The coverage order counted over the whole page at once (the page's rule: settled when
    better than the page's last row unscaled)."""
    shares = _recall_coverage.coverage(db.conn, query, sources, 4)
    if not shares:
        return sources
    boundary = (sources[-1] in neighbours_only, bm25[sources[-1]])
    scaled = {s: bm25[s] * (floor + (1.0 - floor) * shares[s]) for s in sources}
    ordered = sorted(sources, key=lambda s: (s in neighbours_only, scaled[s], s))
    if more:
        ordered = [s for s in ordered if (s in neighbours_only, scaled[s]) < boundary]
    return ordered


@pytest.mark.parametrize("seed", range(6))
def test_rows_counted_as_deep_as_asked_are_the_first_of_the_whole_pages_order(
    tmp_path: Path, seed: int
) -> None:
    """``covered_first`` counts rows in runs; whatever it is asked, it answers the first rows of
    the order the whole page gives, and the whole page when asked for all."""
    rng = random.Random(seed)
    db = MemoryDb(str(tmp_path / "runs.db"))
    for at in range(150):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        db.remember(
            m.RememberRequest.model_validate(
                {**SCOPE, "kind": "document", "text": text, "captured_at": at, "recorded_at": at}
            )
        )
    sources = all_sources(db)
    # A page as _scored_sources gives it: (neighbours only, bm25, id) ascending, ties included;
    # scores spread wide (bm25 decides) or narrow (the coverage factor does, so a row counted
    # late still passes rows counted before it).
    spread = 40 if seed % 2 else 2
    bm25 = {s: -10.0 - rng.randint(0, spread) / 4 for s in sources}
    neighbours_only = {s for s in sources if rng.random() < 0.2}
    sources.sort(key=lambda s: (s in neighbours_only, bm25[s], s))
    query = " ".join(rng.sample(WORDS, 3))
    tuning = RecallTuning()
    for more in (True, False):
        expected = eager_order(
            db, query, sources, more, dict(bm25), neighbours_only, tuning.coverage_floor
        )
        assert 0 < len(expected) <= len(sources)
        asking = _recall_coverage.covered_first(
            db.conn, query, sources, more, dict(bm25), neighbours_only, tuning, {}
        )
        for count in (1, 5, 10, 40, 70, 150, 151):  # one object asked deeper and deeper
            assert asking(count) == expected[:count], (more, count)
        for count in (0, 3, 33, 64, 149):  # a fresh object asked once
            fresh = _recall_coverage.covered_first(
                db.conn, query, sources, more, dict(bm25), neighbours_only, tuning, {}
            )
            assert fresh(count) == expected[:count], (more, count)
    db.close()
