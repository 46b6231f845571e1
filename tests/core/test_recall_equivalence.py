"""The recall lexical list that ``recall_lexical`` builds from pages equals the literal query.

``zkr.retrieval._recall`` reads the recall index in pages (issue 13.3: a page's settled rows are all
used before anything is ranked again, and frequent phrases are pruned from the scoring when a bound
proves they cannot reach the page). The definition it must keep is the unpaged one written here:
every ``recall_fts`` row that matches the recall expression, joined to the scope's live sources,
ordered by (matches by its own words first, bm25 with the column weights — without ``as_of``
times the coverage factor of the share of the query's words the row holds —, source id; with
``as_of`` only the capture's own content and statement columns, as they read then, are matched),
each source resolved to its targets (claims in id order after the source itself; without ``as_of``
a capture whose claims were all corrected to the current versions of them, found here by walking
the corrections one step at a time), de-duplicated, cut at *wanted*. Both are compared over the
randomized store of ``test_search_equivalence`` (claims, corrections, deletions, bm25 ties, three
scopes, ``as_of``), for the lexical lists themselves and for the packs ``search`` returns.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import zkr.retrieval._recall as recall
import zkr.retrieval._recall_query as recall_query
import zkr.retrieval._recall_tuning as recall_tuning
from tests.core.test_search_equivalence import Snapshot, build_store, random_queries, read_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval._fusion import Target
from zkr.retrieval._lexical import _resolve
from zkr.store.analysis import RECALL_TOKENIZER, index_text
from zkr.store.recall_index import SESSION_GAP_SECONDS

LITERAL = """
SELECT s.id, bm25(recall_fts, 1.0, :statement, :context),
  bm25(recall_fts, 1.0, :statement, 0.0) < 0, bm25(recall_fts, 0.0, 1.0, 0.0) < 0
FROM recall_fts CROSS JOIN sources AS s ON s.rowid = recall_fts.rowid
WHERE recall_fts MATCH :match AND s.tenant_id = :tenant AND s.person_id = :person
  AND s.deleted_at IS NULL
ORDER BY bm25(recall_fts, 1.0, :statement, 0.0) < 0 DESC,
  bm25(recall_fts, 1.0, :statement, :context), s.id
"""

# The current version of every claim, by following the corrections table one step at a time.
CORRECTED = "SELECT superseded_claim_id, claim_id FROM corrections"
CURRENT = (
    "SELECT id FROM claims WHERE status = 'accepted' AND valid_until IS NULL"
    " AND recorded_until IS NULL"
)
LINKED = (
    "SELECT e.source_id, ce.claim_id FROM evidence e JOIN claim_evidence ce"
    " ON ce.evidence_id = e.id AND ce.relation = '\"supports\"' WHERE e.deleted_at IS NULL"
)


def current_versions(conn: sqlite3.Connection, source_id: str) -> list[str]:
    """The current versions of the claims the source supports, each found by walking its
    corrections (a plain loop, unlike the recursive query under test)."""
    successor = dict(conn.execute(CORRECTED).fetchall())
    current = {row[0] for row in conn.execute(CURRENT)}
    found = set()
    for linked_source, claim in conn.execute(LINKED):
        if linked_source != source_id:
            continue
        seen = set()
        while claim in successor and claim not in seen:
            seen.add(claim)
            claim = successor[claim]
        if claim in current:
            found.add(claim)
    return sorted(found)


def literal_lexical(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    query: str,
    as_of: m.AsOf | None,
    wanted: int,
    tuning: recall.RecallTuning = recall_tuning.DEFAULT_TUNING,
    scored: dict[Target, tuple[float, str]] | None = None,
    context_only: set[Target] | None = None,
    stated: set[Target] | None = None,
) -> list[Target]:
    match = recall.recall_match(query, tuning.prefix_from)
    if match is None or wanted <= 0:
        return []
    if as_of is not None:  # no context (see recall_lexical); later statements checked below
        match = f"{{content statement}} : ({match})"
    params: dict[str, object] = {"tenant": tenant_id, "person": person_id}
    if as_of is not None:
        params["valid_at"] = as_of.valid_at
        params["recorded_at"] = as_of.recorded_at
    weights = {"context": tuning.context_weight, "statement": tuning.statement_weight}
    rows = conn.execute(LITERAL, {**params, **weights, "match": match}).fetchall()
    if as_of is None:
        rows = covered_first(conn, query, rows, tuning)
    bm25 = {source_id: score for source_id, score, _, _ in rows}
    sources = list(bm25)
    if as_of is not None:
        sources = [s for s in sources if matches_then(conn, s, match, as_of.recorded_at)]
    resolved = _resolve(conn, sources, params, as_of is not None)
    if as_of is None:
        for source_id in sources:
            if resolved.get(source_id) == []:
                resolved[source_id] = list(current_versions(conn, source_id))
    kept = set(sources)
    ranking: dict[Target, None] = {}  # insertion-ordered: the first place of a target counts
    for source_id, _, own, statement in rows:
        if source_id not in kept:
            continue
        claims = sorted(set(resolved.get(source_id, [])), key=lambda c: (c is not None, c or ""))
        for claim_id in claims:
            target = ("source", source_id) if claim_id is None else ("claim", claim_id)
            if target in ranking:
                continue
            ranking.setdefault(target)
            if scored is not None:
                scored[target] = (-bm25[source_id], source_id)
            if context_only is not None and not own:
                context_only.add(target)
            if stated is not None and statement and claim_id is not None:
                stated.add(target)
    return list(ranking)[:wanted]


def covered_first(
    conn: sqlite3.Connection,
    query: str,
    rows: list[tuple[str, float, int, int]],
    tuning: recall.RecallTuning,
) -> list[tuple[str, float, int, int]]:
    """Every row's bm25 times ``floor + (1 - floor) * share`` of the query's words its row
    matches (each word tested alone over the whole index), ordered again (own matches first,
    scaled bm25, source id); unchanged for a query of fewer than two words."""
    concepts = recall_query.recall_concepts(query, tuning.prefix_from)
    if len(concepts) < 2:
        return rows
    held = dict.fromkeys((row[0] for row in rows), 0)
    for concept in concepts:
        for (source_id,) in conn.execute(
            "SELECT s.id FROM recall_fts JOIN sources s ON s.rowid = recall_fts.rowid"
            " WHERE recall_fts MATCH ?",
            (concept,),
        ):
            if source_id in held:
                held[source_id] += 1
    floor = tuning.coverage_floor
    scaled = [
        (source_id, score * (floor + (1.0 - floor) * held[source_id] / len(concepts)), own, st)
        for source_id, score, own, st in rows
    ]
    return sorted(scaled, key=lambda row: (-row[2], row[1], row[0]))


def matches_then(conn: sqlite3.Connection, source_id: str, match: str, recorded_at: int) -> bool:
    """Whether the capture's row as it read at *recorded_at* (its text and the statements of the
    non-retracted claims its live evidence supported, recorded by then) matches, literally: one
    scratch FTS5 row with the recall index's tokenizer."""
    content = conn.execute("SELECT content FROM sources WHERE id = ?", (source_id,)).fetchone()[0]
    statements = [
        f"{subject} {predicate.replace('_', ' ')} {value}"
        for subject, predicate, value in conn.execute(
            "SELECT DISTINCT c.subject, c.predicate, c.value FROM evidence e"
            " JOIN claim_evidence ce ON ce.evidence_id = e.id JOIN claims c ON c.id = ce.claim_id"
            " WHERE e.source_id = ? AND e.deleted_at IS NULL AND ce.relation = '\"supports\"'"
            " AND c.status != 'retracted' AND c.recorded_from <= ?",
            (source_id, recorded_at),
        )
    ]
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(
            f'CREATE VIRTUAL TABLE t USING fts5(content, statement, tokenize="{RECALL_TOKENIZER}")'
        )
        scratch.execute(
            "INSERT INTO t VALUES (?, ?)", (index_text(content), index_text(" ".join(statements)))
        )
        return scratch.execute("SELECT 1 FROM t WHERE t MATCH ?", (match,)).fetchone() is not None
    finally:
        scratch.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryDb, Snapshot]]:
    path: Path = tmp_path_factory.mktemp("recall-equivalence") / "memory.db"
    db = MemoryDb(path)
    db.conn.execute("PRAGMA synchronous = OFF")  # a throwaway file: skip the per-commit fsync
    build_store(db, random.Random(20261201))
    add_tied_captures(db, random.Random(5))
    try:
        yield db, read_snapshot(db)
    finally:
        db.close()


TIED_TEXT = "glider lantern orbit"


def add_tied_captures(db: MemoryDb, rng: random.Random) -> None:
    """Captures with one text, each alone in its session (no neighbours, so no context): their
    rows are identical and tie on bm25 in groups larger than a page, in two scopes, some with a
    claim, some deleted."""
    for index in range(260):
        tenant, person = ("a", "sam") if index % 4 else ("b", "sam")
        at = 10**6 + index * (SESSION_GAP_SECONDS + 60)
        payload: dict[str, object] = {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "document",
            "text": TIED_TEXT,
            "captured_at": at,
            "recorded_at": at,
        }
        if index % 5 == 0:
            payload["claim"] = {
                "subject": "sam",
                "predicate": "likes",
                "value": f"gliders {index % 3}",
                "kind": "preference",
                "valid_from": at,
            }
        stored = db.remember(m.RememberRequest.model_validate(payload))
        if rng.random() < 0.1:
            db.delete(
                m.DeleteRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "source_id": stored.source_id,
                        "deleted_at": at + 1,
                    }
                )
            )


def recall_requests(snap: Snapshot, seed: int, count: int) -> Iterator[m.SearchRequest]:
    for request in random_queries(random.Random(seed), snap, count):
        yield request.model_copy(update={"ranking": m.Ranking.recall})
    for query in ("glider", "lantern orbit", "what about the glider?", "glider sam plan"):
        for limit in (1, 10, 25, 100):
            yield m.SearchRequest.model_validate(
                {"tenant_id": "a", "person_id": "sam", "query": query, "limit": limit}
            ).model_copy(update={"ranking": m.Ranking.recall})


def test_recall_lexical_equals_the_literal_query(store: tuple[MemoryDb, Snapshot]) -> None:
    db, snap = store
    compared = deep = 0
    for request in recall_requests(snap, 13, 200):
        limit = m.bounded_limit(request.limit)
        for wanted in (limit, max(4 * limit, recall.MIN_CANDIDATES)):
            with db.atomic(write=False) as conn:
                args = (request.tenant_id, request.person_id, request.query, request.as_of)
                got = recall.recall_lexical(conn, *args, wanted)
                assert got == literal_lexical(conn, *args, wanted), (request, wanted)
            compared += bool(got)
            deep += len(got) > 64  # lists that reach past the first page
    assert compared > 200  # most lists are not empty, so the comparison is not vacuous
    assert deep > 20


def test_recall_packs_equal_the_literal_query(
    store: tuple[MemoryDb, Snapshot], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, snap = store
    requests = list(recall_requests(snap, 17, 100))
    got = [db.search(request).model_dump(mode="json") for request in requests]
    monkeypatch.setattr(recall, "recall_lexical", literal_lexical)
    expected = [db.search(request).model_dump(mode="json") for request in requests]
    assert got == expected
    assert sum(bool(pack["items"]) for pack in got) > 60
