"""Lexical paging corner cases: scores tied across pages, the switch to scope-filtered pages.

``zkr.retrieval._lexical`` reads FTS pages ordered by bm25 alone and filters the scope in Python
until the
scope turns out to be a small part of the matches; then it filters in SQL. Every paging setting
must give the rows of the contract's literal §5.3 query (written here as one SQL statement, current
mode), and, with ``as_of``, the same rows as the default setting.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval._lexical import PAGING, Paging, matching_rows

WORDS = ["kiwi", "plum", "fig", "lime", "pear"]

# §5.3 literally: every joined row, ordered by bm25, source id, claim id (NULL first), LIMIT.
LITERAL = """
SELECT s.id, c.id
FROM source_fts AS f
JOIN sources AS s ON s.id = f.source_id AND s.tenant_id = :tenant AND s.person_id = :person
 AND s.deleted_at IS NULL
JOIN evidence AS e ON e.source_id = s.id AND e.tenant_id = s.tenant_id
 AND e.person_id = s.person_id AND e.deleted_at IS NULL
LEFT JOIN claim_evidence AS ce ON ce.evidence_id = e.id AND ce.tenant_id = s.tenant_id
 AND ce.person_id = s.person_id AND ce.relation = '"supports"'
LEFT JOIN claims AS c ON c.id = ce.claim_id AND c.tenant_id = s.tenant_id
 AND c.person_id = s.person_id AND c.status = 'accepted' AND c.valid_until IS NULL
 AND c.recorded_until IS NULL
WHERE source_fts MATCH :match AND f.tenant_id = :tenant AND f.person_id = :person
  AND (c.id IS NOT NULL OR NOT EXISTS (
        SELECT 1 FROM evidence AS e2 JOIN claim_evidence AS ce2 ON ce2.evidence_id = e2.id
         AND ce2.relation = '"supports"'
        WHERE e2.source_id = s.id AND e2.deleted_at IS NULL))
ORDER BY bm25(source_fts), s.id, c.id
LIMIT :limit
"""

# (page, growth, chunk, scoped after, scoped below): defaults, tiny pages and blocks that never
# filter in SQL, tiny ones that switch to scoped pages at once, and a switch after a few pages.
SETTINGS = [
    (64, 8, 500, 4096, 0.5),
    (1, 2, 2, 10**9, 0.0),
    (1, 2, 3, 0, 2.0),
    (2, 1, 1, 0, 2.0),
    (3, 2, 500, 20, 2.0),
]


def remember(db: MemoryDb, rng: random.Random, person: str, at: int) -> m.RememberResult:
    # Few words, short texts: many sources share one text and so one bm25 score.
    text = " ".join(rng.choices(WORDS, [8, 4, 2, 1, 1], k=rng.randint(1, 3)))
    payload: dict[str, Any] = {
        "tenant_id": "t",
        "person_id": person,
        "kind": "conversation",
        "text": text,
        "captured_at": at,
        "recorded_at": at,
    }
    if rng.random() < 0.4:
        payload["claim"] = {
            "subject": "Sam",
            "predicate": "likes",
            "value": rng.choice(WORDS),
            "kind": "fact",
            "valid_from": at,
        }
    return db.remember(m.RememberRequest.model_validate(payload))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryDb]:
    path: Path = tmp_path_factory.mktemp("paging") / "memory.db"
    store = MemoryDb(path)
    store.conn.execute("PRAGMA synchronous = OFF")  # a throwaway file: skip the per-commit fsync
    rng = random.Random(5)
    # "me" holds a small part of the matches, so the scope filter decides what a page yields.
    people = ["other"] * 9 + ["me"]
    stored = [
        (person, remember(store, rng, person, at))
        for at, person in enumerate(rng.choices(people, k=500), start=1)
    ]
    claims = [(person, r) for person, r in stored if r.claim_id is not None]
    for person, result in rng.sample(stored, 40):
        # Extra supports from raw captures to popular claims: several rows per FTS row.
        claim = next(c for p, c in claims if p == person)
        exists = store.conn.execute(
            "SELECT 1 FROM claim_evidence WHERE claim_id = ? AND evidence_id = ?",
            (claim.claim_id, result.evidence_id),
        ).fetchone()
        if not exists:
            store.link(
                m.LinkRequest.model_validate(
                    {
                        "tenant_id": "t",
                        "person_id": person,
                        "claim_id": claim.claim_id,
                        "evidence_id": result.evidence_id,
                        "relation": "supports",
                        "confidence_basis_points": 5000,
                    }
                )
            )
    for person, result in rng.sample(stored, 30):
        store.delete(
            m.DeleteRequest.model_validate(
                {
                    "tenant_id": "t",
                    "person_id": person,
                    "source_id": result.source_id,
                    "deleted_at": 1000,
                }
            )
        )
    with store.atomic() as conn:
        # Legacy stores may index one source twice: both FTS rows join, in one sort group.
        conn.execute(
            "INSERT INTO source_fts(source_id, tenant_id, person_id, content)"
            " SELECT source_id, tenant_id, person_id, content FROM source_fts"
            " WHERE rowid % 7 = 0"
        )
    try:
        yield store
    finally:
        store.close()


def targets(
    db: MemoryDb,
    match: str,
    person: str,
    as_of: m.AsOf | None,
    limit: int,
    paging: Paging = PAGING,
) -> list[Any]:
    with db.atomic(write=False) as conn:
        # The first *limit* rows, duplicates included, read as a caller wanting them all reads.
        return list(matching_rows(conn, match, "t", person, as_of, limit, limit, paging))


def literal(db: MemoryDb, match: str, person: str, limit: int) -> list[tuple[str, str]]:
    rows = db.conn.execute(
        LITERAL, {"match": match, "tenant": "t", "person": person, "limit": limit}
    ).fetchall()
    return [("source", s) if c is None else ("claim", c) for s, c in rows]


def test_the_store_has_ties_duplicates_and_a_small_scope(db: MemoryDb) -> None:
    scores = [row[0] for row in db.conn.execute(
        "SELECT bm25(source_fts) FROM source_fts WHERE source_fts MATCH '\"kiwi\"'"
    )]  # fmt: skip
    assert len(scores) - len(set(scores)) > 100
    people = dict(db.conn.execute("SELECT person_id, count(*) FROM sources GROUP BY person_id"))
    assert people["me"] * 4 < people["other"]
    duplicates = db.conn.execute(
        "SELECT count(*) - count(DISTINCT source_id) FROM source_fts"
    ).fetchone()[0]
    assert duplicates > 50


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_paging_setting_gives_the_literal_rows(
    db: MemoryDb, setting: tuple[int, int, int, int, float]
) -> None:
    page, growth, chunk, after, below = setting
    paging = Paging(
        min_page=page,
        rows_per_wanted=0 if page < 64 else 8,
        first_block=1 if page < 64 else 16,
        page_growth=growth,
        id_chunk=chunk,
        scoped_after=after,
        scoped_below=below,
    )
    matches = ['"kiwi"', '"plum"', '"fig" OR "lime"', '"pear"', '"kiwi plum"', '"nothing"']
    checked = 0
    for match in matches:
        for person in ("me", "other", "nobody"):
            for limit in (1, 2, 3, 5, 8, 13, 40, 120, 1000):
                expected = literal(db, match, person, limit)
                got = targets(db, match, person, None, limit, paging)
                assert got == expected, (match, person, limit)
                checked += bool(expected)
    assert checked > 80


@pytest.mark.parametrize("setting", SETTINGS[1:])
def test_as_of_pages_agree_with_the_default_setting(
    db: MemoryDb, setting: tuple[int, int, int, int, float]
) -> None:
    cases = [
        (match, person, m.AsOf(valid_at=valid, recorded_at=recorded), limit)
        for match in ('"kiwi"', '"fig" OR "lime"')
        for person in ("me", "other")
        for valid, recorded in ((100, 100), (400, 300), (1000, 1000))
        for limit in (1, 3, 13, 200)
    ]
    expected = [targets(db, *case) for case in cases]
    page, growth, chunk, after, below = setting
    paging = Paging(
        min_page=page,
        rows_per_wanted=0,
        page_growth=growth,
        first_block=1,
        id_chunk=chunk,
        scoped_after=after,
        scoped_below=below,
    )
    assert [targets(db, *case, paging) for case in cases] == expected
    assert sum(map(bool, expected)) > 20
