"""``memories`` and ``history`` from the replica equal zkr's own answers on the source database.

Persons built with every write of zkr (corrections, links, deletions, reviews, profiles) are
synced into a real PostgreSQL; then every page of ``memories`` (small pages, so the cursor is
used; with kind filters; with ``as_of``) and the ``history`` of every claim id are compared with
what the SQLite file answers, model for model. Cursors are zkr's own: a cursor from one side
continues the list on the other.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.postgres.builders import Person, build_database
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import InvalidRequest, NotFound, RequestParseError
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.serve import answer
from zkr_postgres.sync import sync_database


def all_pages(run: Any, request: dict[str, Any]) -> list[m.MemoriesPage]:
    """Every page of a ``memories`` listing, following next_cursor."""
    pages: list[m.MemoriesPage] = []
    cursor: str | None = None
    while True:
        page = run(m.MemoriesRequest(**request, cursor=cursor))
        pages.append(page)
        cursor = page.next_cursor
        if cursor is None:
            return pages
        assert len(pages) < 1_000


def memories_requests(person: Person) -> list[dict[str, Any]]:
    """The listings compared for one person: whole, paged, filtered, and as of two moments."""
    scope = {"tenant_id": person.tenant_id, "person_id": person.person_id}
    return [
        {**scope},
        {**scope, "limit": 2},
        {**scope, "limit": 3, "claim_kinds": ["fact", "preference"]},
        {**scope, "limit": 2, "source_kinds": ["conversation", "user_correction"]},
        {**scope, "claim_kinds": ["profile_fact"], "source_kinds": ["conversation"]},
        {**scope, "limit": 2, "as_of": {"valid_at": 1_100, "recorded_at": 1_100}},
        {**scope, "as_of": {"valid_at": 1_200, "recorded_at": 1_150}},
        # Around the builder's corrections (recorded after its captures): as then believed.
        {**scope, "limit": 3, "as_of": {"valid_at": 1_050, "recorded_at": 1_300}},
        {**scope, "as_of": {"valid_at": 1_300, "recorded_at": 1_250}},
    ]


def compare_person(db: MemoryDb, replica: Replica, person: Person) -> tuple[int, int]:
    """Assert equal ``memories`` and ``history`` for *person*; returns (items, versions) seen."""
    items = versions = 0
    for request in memories_requests(person):
        expected = all_pages(db.memories, request)
        assert all_pages(replica.memories, request) == expected, (person, request)
        items += sum(len(page.items) for page in expected)
    scope = {"tenant_id": person.tenant_id, "person_id": person.person_id}
    for claim_id in person.claims:
        request = m.HistoryRequest(**scope, claim_id=claim_id)
        chain = db.history(request)
        assert replica.history(request) == chain, (person, claim_id)
        versions += len(chain.versions)
    return items, versions


@pytest.fixture
def synced(tmp_path: Path, pg: str) -> tuple[MemoryDb, list[Person], str]:
    scopes = [("acme", f"p{n}") for n in range(12)] + [("tenant é", "pérson ☃")]
    db = MemoryDb(tmp_path / "laptop.db")
    persons = build_database(db, scopes, seed=7, memories=8)
    with connect(pg) as conn:
        sync_database(conn, db, "laptop")
    return db, persons, pg


def test_memories_and_history_equal_the_source(synced: tuple[MemoryDb, list[Person], str]) -> None:
    db, persons, dsn = synced
    items = versions = 0
    with Replica(dsn) as replica:
        for person in persons:
            seen = compare_person(db, replica, person)
            items, versions = items + seen[0], versions + seen[1]
    db.close()
    # The builder's dice give corrections (two-version chains) and deletions: all were compared.
    assert items > 13 * 8 and versions > sum(len(p.claims) for p in persons)


def test_a_cursor_continues_across_sides(synced: tuple[MemoryDb, list[Person], str]) -> None:
    db, persons, dsn = synced
    person = persons[0]
    scope = {"tenant_id": person.tenant_id, "person_id": person.person_id}
    with Replica(dsn) as replica:
        first = db.memories(m.MemoriesRequest(**scope, limit=3))
        assert first.next_cursor is not None
        rest = m.MemoriesRequest(**scope, limit=3, cursor=first.next_cursor)
        assert replica.memories(rest) == db.memories(rest)
    db.close()


def test_bad_requests_are_refused_like_zkr(synced: tuple[MemoryDb, list[Person], str]) -> None:
    db, persons, dsn = synced
    scope = {"tenant_id": persons[0].tenant_id, "person_id": persons[0].person_id}
    with Replica(dsn) as replica:
        with pytest.raises(InvalidRequest, match="cursor is not a memories cursor"):
            replica.run("memories", {**scope, "cursor": "nonsense"})
        with pytest.raises(InvalidRequest, match="person_id must not be empty"):
            replica.run("memories", {"tenant_id": "acme", "person_id": " "})
        with pytest.raises(RequestParseError):
            replica.run("memories", {**scope, "claim_kinds": ["no such kind"]})
        with pytest.raises(NotFound):
            replica.run("history", {**scope, "claim_id": "missing"})
        # A claim of another person is not found either.
        other = persons[1].claims[0]
        with pytest.raises(NotFound):
            replica.run("history", {**scope, "claim_id": other})
        # Through serve's line protocol: the same answers as JSON.
        line = answer(
            replica,
            '{"command":"history","request":{"tenant_id":"acme",'
            f'"person_id":"{persons[1].person_id}","claim_id":"{other}"}}}}',
        )
        assert isinstance(line, dict) and line["current_claim_id"] in (None, *persons[1].claims)
        listed = answer(
            replica,
            '{"id":1,"command":"memories","request":{"tenant_id":"acme",'
            f'"person_id":"{persons[1].person_id}","limit":1}}}}',
        )
        assert isinstance(listed, dict) and len(listed["result"]["items"]) == 1
    db.close()


def test_memories_of_an_unscoped_or_empty_person_are_empty(pg: str) -> None:
    with Replica(pg) as replica:
        page = replica.memories(m.MemoriesRequest(tenant_id="nobody", person_id="here"))
    assert page == m.MemoriesPage(items=[], next_cursor=None)


def test_random_persons_paged_at_every_limit(synced: tuple[MemoryDb, list[Person], str]) -> None:
    db, persons, dsn = synced
    rng = random.Random(3)
    with Replica(dsn) as replica:
        for person in rng.sample(persons, 4):
            scope = {"tenant_id": person.tenant_id, "person_id": person.person_id}
            for limit in range(1, 6):
                request = {**scope, "limit": limit}
                assert all_pages(replica.memories, request) == all_pages(db.memories, request)
    db.close()
