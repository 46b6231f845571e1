"""The paged lexical search returns exactly what the contract's literal algorithm returns.

``zkr.retrieval._lexical`` reads the FTS index in pages and resolves sources set by set so that a
search does
work proportional to its results (issue 7). This file keeps a deliberately naive implementation of
contract §5.1-§5.6, written from the contract text: every FTS match of the scope is fetched, each
row of the contract's join (FTS row x live evidence x supports link x claim) is built and qualified
in Python, rows are sorted by (bm25, source id, claim id NULL first) and cut at ``candidate_limit``
*before* de-duplication, then fused and materialized with plain loops. Both must give identical
packs over a randomized store: claims, corrections (some chained), supporting and contradicting
links, deletions, hand-expired claims, duplicate texts (bm25 ties), three scopes, with and without
``as_of``, and with pages so small that every query crosses many page boundaries.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONTRACT_RANKING
from zkr import models as m
from zkr.db import MemoryDb
from zkr.retrieval._fts_query import build_queries
from zkr.retrieval._lexical import PAGING, lexical_ranking

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

# (tenant, person, sources, vocabulary size): the "dup" scope has few distinct words and most of
# its raw captures support one of two claims, so duplicate rows fill the row LIMIT before de-dup.
SCOPES = [
    ("a", "sam", 1300, 49),
    ("a", "max", 300, 49),
    ("b", "sam", 300, 49),
    ("c", "dup", 150, 4),
]
# Zipf-weighted vocabulary: the first words match most rows (the slow case of issue 7).
VOCABULARY = (  # noqa: SIM905 (a sentence is easier to read than 49 quoted words)
    "the sam plan project meeting notes acme apollo thursday coffee café cafe berlin munich "
    "budget launch review design garden sister piano deadline invoice travel zürich ticket "
    "dentist recipe almond oat milk running marathon kafka deploy worker billing glider "
    "lantern orbit quartz saffron tundra umbra velvet walnut xylem yonder zephyr"
).split()
WEIGHTS = [1.0 / (rank + 1) ** 0.9 for rank in range(len(VOCABULARY))]
PREDICATES = ["employer", "prefers", "city", "plans", "likes"]
CLAIM_KINDS = ["fact", "profile_fact", "preference", "task", "skill", "recommendation"]

# ----------------------------------------------------------------------------- the naive contract

SUPPORTS = '"supports"'
Target = tuple[str, str]


@dataclass
class Snapshot:
    """Every authoritative row, read once; the reference works on these dictionaries."""

    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence_of_source: dict[str, list[str]] = field(default_factory=dict)
    supports_of_evidence: dict[str, list[str]] = field(default_factory=dict)
    supports_of_claim: dict[str, list[str]] = field(default_factory=dict)
    #: claim id -> the recorded times of the corrections that superseded it
    corrected_at: dict[str, list[int]] = field(default_factory=dict)


def read_snapshot(db: MemoryDb) -> Snapshot:
    snap = Snapshot()
    conn = db.conn
    conn.row_factory = None
    columns = "id, tenant_id, person_id, content, captured_at, recorded_at, deleted_at"
    for row in conn.execute(f"SELECT {columns} FROM sources"):
        snap.sources[row[0]] = dict(zip(columns.split(", "), row, strict=True))
    columns = "id, tenant_id, person_id, source_id, quote, recorded_at, deleted_at"
    for row in conn.execute(f"SELECT {columns} FROM evidence"):
        snap.evidence[row[0]] = dict(zip(columns.split(", "), row, strict=True))
        snap.evidence_of_source.setdefault(row[3], []).append(row[0])
    columns = (
        "id, tenant_id, person_id, subject, predicate, value, valid_from, valid_until, "
        "recorded_from, recorded_until, status"
    )
    for row in conn.execute(f"SELECT {columns} FROM claims"):
        snap.claims[row[0]] = dict(zip(columns.split(", "), row, strict=True))
    for claim_id, evidence_id in conn.execute(
        "SELECT claim_id, evidence_id FROM claim_evidence WHERE relation = ?", (SUPPORTS,)
    ):
        snap.supports_of_evidence.setdefault(evidence_id, []).append(claim_id)
        snap.supports_of_claim.setdefault(claim_id, []).append(evidence_id)
    for claim_id, recorded_at in conn.execute(
        "SELECT superseded_claim_id, recorded_at FROM corrections"
    ):
        snap.corrected_at.setdefault(claim_id, []).append(recorded_at)
    return snap


def is_current(claim: dict[str, Any]) -> bool:
    return (
        claim["status"] == "accepted"
        and claim["valid_until"] is None
        and claim["recorded_until"] is None
    )


def source_exists_at(source: dict[str, Any], valid_at: int, recorded_at: int) -> bool:
    return (
        source["deleted_at"] is None
        and source["captured_at"] <= valid_at
        and source["recorded_at"] <= recorded_at
    )


def visible_evidence(snap: Snapshot, claim_id: str, as_of: tuple[int, int]) -> list[str]:
    valid_at, recorded_at = as_of
    return [
        evidence_id
        for evidence_id in snap.supports_of_claim.get(claim_id, [])
        if snap.evidence[evidence_id]["deleted_at"] is None
        and snap.evidence[evidence_id]["recorded_at"] <= recorded_at
        and source_exists_at(
            snap.sources[snap.evidence[evidence_id]["source_id"]], valid_at, recorded_at
        )
    ]


def is_visible(snap: Snapshot, claim: dict[str, Any], as_of: tuple[int, int]) -> bool:
    """Contract §4.11, with the valid time as believed at R (issue 24): a correction recorded
    after R had not closed it yet."""
    valid_at, recorded_at = as_of
    corrected_later = any(at > recorded_at for at in snap.corrected_at.get(claim["id"], []))
    return (
        claim["status"] in ("accepted", "superseded")
        and claim["valid_from"] <= valid_at
        and (claim["valid_until"] is None or valid_at < claim["valid_until"] or corrected_later)
        and claim["recorded_from"] <= recorded_at
        and (claim["recorded_until"] is None or recorded_at < claim["recorded_until"])
        and bool(visible_evidence(snap, claim["id"], as_of))
    )


def live_evidence(snap: Snapshot, source_id: str) -> list[str]:
    return [
        evidence_id
        for evidence_id in snap.evidence_of_source.get(source_id, [])
        if snap.evidence[evidence_id]["deleted_at"] is None
    ]


def contract_rows(
    db: MemoryDb,
    snap: Snapshot,
    match: str,
    scope: tuple[str, str],
    as_of: tuple[int, int] | None,
    limit: int,
) -> list[tuple[str, str]]:
    """§5.3 literally: all joined rows, qualified, sorted, then ``LIMIT`` (before de-dup)."""
    tenant, person = scope
    fts = db.conn.execute(
        "SELECT source_id, bm25(source_fts) FROM source_fts"
        " WHERE source_fts MATCH ? AND tenant_id = ? AND person_id = ?",
        (match, tenant, person),
    ).fetchall()
    rows: list[tuple[float, str, str | None]] = []
    for source_id, score in fts:
        source = snap.sources.get(source_id)
        if source is None or source["deleted_at"] is not None:
            continue
        if (source["tenant_id"], source["person_id"]) != scope:
            continue
        if as_of is not None and not source_exists_at(source, *as_of):
            continue

        def joinable(claim_id: str) -> bool:
            claim = snap.claims[claim_id]
            return is_visible(snap, claim, as_of) if as_of is not None else is_current(claim)

        # "no live evidence with a supports link" (to a claim visible at as_of, in as_of mode).
        fallback = not any(
            as_of is None or joinable(claim_id)
            for evidence_id in live_evidence(snap, source_id)
            for claim_id in snap.supports_of_evidence.get(evidence_id, [])
        )
        for evidence_id in live_evidence(snap, source_id):
            if as_of is not None and snap.evidence[evidence_id]["recorded_at"] > as_of[1]:
                continue
            links = snap.supports_of_evidence.get(evidence_id, [])
            joined = [claim_id if joinable(claim_id) else None for claim_id in links] or [None]
            for claim_id in joined:
                if claim_id is not None or fallback:
                    rows.append((score, source_id, claim_id))
    rows.sort(key=lambda row: (row[0], row[1], row[2] is not None, row[2] or ""))
    return [
        ("source", source_id) if claim_id is None else ("claim", claim_id)
        for _, source_id, claim_id in rows[:limit]
    ]


def contract_ranking(db: MemoryDb, snap: Snapshot, request: m.SearchRequest) -> list[Target]:
    """§5.1 steps 2-4: phrase rows, then token rows filling up to ``candidate_limit`` targets."""
    candidate_limit = 4 * (10 if request.limit == 0 else min(request.limit, 100))
    scope = (request.tenant_id, request.person_id)
    as_of = None if request.as_of is None else (request.as_of.valid_at, request.as_of.recorded_at)
    queries = build_queries(request.query)
    ranking: list[Target] = []
    for target in contract_rows(db, snap, queries.phrase, scope, as_of, candidate_limit):
        if target not in ranking:
            ranking.append(target)
    if len(ranking) < candidate_limit and queries.tokens is not None:
        for target in contract_rows(db, snap, queries.tokens, scope, as_of, candidate_limit):
            if len(ranking) == candidate_limit:
                break
            if target not in ranking:
                ranking.append(target)
    return ranking


def contract_search(db: MemoryDb, snap: Snapshot, request: m.SearchRequest) -> dict[str, Any]:
    """§5.1: the lexical list of :func:`contract_ranking`, the dense list (only without
    ``as_of``; its exact scan belongs to ``zkr.embeddings.dense`` and has its own tests), integer
    RRF."""
    limit = 10 if request.limit == 0 else min(request.limit, 100)
    as_of = None if request.as_of is None else (request.as_of.valid_at, request.as_of.recorded_at)
    lists = [contract_ranking(db, snap, request)]
    if request.query_embedding is not None and as_of is None:
        from zkr.embeddings.dense import DenseScan, dense_ranking

        dense = dense_ranking(
            DenseScan(db, db.conn, request.tenant_id, request.person_id, request.query_embedding)
        )
        lists.append([target for target, _ in dense])
    scores: dict[Target, int] = {}
    for ranking in lists:
        for position, target in enumerate(ranking):
            scores[target] = scores.get(target, 0) + 1_000_000 // (61 + position)
    best = max(scores.values(), default=1)
    kind_rank = {"source": 0, "evidence": 1, "claim": 2}
    fused = sorted(
        ((target, score * 10_000 // best) for target, score in scores.items()),
        key=lambda pair: (-pair[1], kind_rank[pair[0][0]], pair[0][1]),
    )[:limit]
    items = [materialize(snap, target, points, as_of) for target, points in fused]
    return {
        "query": request.query,
        "items": items,
        "gaps": [] if items else ["no cited memory matched"],
    }


def materialize(
    snap: Snapshot, target: tuple[str, str], points: int, as_of: tuple[int, int] | None
) -> dict[str, Any]:
    """§5.6, current mode or ``as_of``."""
    kind, target_id = target
    if kind == "claim":
        claim = snap.claims[target_id]
        if as_of is None:
            assert is_current(claim)
            candidates = [
                evidence_id
                for evidence_id in snap.supports_of_claim.get(target_id, [])
                if snap.evidence[evidence_id]["deleted_at"] is None
                and snap.sources[snap.evidence[evidence_id]["source_id"]]["deleted_at"] is None
            ]
        else:
            assert is_visible(snap, claim, as_of)
            candidates = visible_evidence(snap, target_id, as_of)
        text = f"{claim['subject']} {claim['predicate']} {claim['value']}"
    elif kind == "evidence":
        evidence = snap.evidence[target_id]
        assert evidence["deleted_at"] is None
        assert snap.sources[evidence["source_id"]]["deleted_at"] is None
        text, candidates = evidence["quote"], [target_id]
    else:
        text = snap.sources[target_id]["content"]
        candidates = live_evidence(snap, target_id)
    encoded = text.encode()
    if len(encoded) > 4096:
        text = encoded[:4096].decode(errors="ignore")
    return {
        "memory": {"kind": kind, "id": target_id},
        "excerpt": text,
        "relevance_basis_points": points,
        "evidence_ids": [min(candidates)],
    }


# ----------------------------------------------------------------------------- the random store


def words(rng: random.Random, low: int, high: int, vocabulary: int = len(VOCABULARY)) -> str:
    chosen = rng.choices(VOCABULARY[:vocabulary], WEIGHTS[:vocabulary], k=rng.randint(low, high))
    return " ".join(chosen)


def build_store(db: MemoryDb, rng: random.Random) -> None:
    claims: list[tuple[str, str, str, int, int]] = []  # scope, claim id, valid/recorded from
    raw: list[tuple[str, str, str, int]] = []  # (tenant, person, evidence id, recorded_at)
    sources: list[tuple[str, str, str]] = []
    texts: list[str] = []
    for tenant, person, count, vocabulary in SCOPES:
        for _ in range(count):
            at = rng.randint(10, 100)
            if texts and rng.random() < 0.05:
                text = rng.choice(texts)  # identical texts tie on bm25
            else:
                text = words(rng, 2, 12, vocabulary)
                if rng.random() < 0.1:
                    text = text.replace(" ", "'s ", 1) + "?"
            texts.append(text)
            payload: dict[str, Any] = {
                "tenant_id": tenant,
                "person_id": person,
                "kind": "conversation",
                "text": text,
                "captured_at": at + rng.randint(-5, 0),
                "recorded_at": at,
            }
            with_claim = rng.random() < 0.3
            if with_claim:
                payload["claim"] = {
                    "subject": rng.choice(["Sam", "Max", "Zoë"]),
                    "predicate": rng.choice(PREDICATES),
                    "value": words(rng, 1, 3),
                    "kind": rng.choice(CLAIM_KINDS),
                    "valid_from": at + rng.randint(-10, 20),
                }
            stored = db.remember(m.RememberRequest.model_validate(payload))
            sources.append((tenant, person, stored.source_id))
            if stored.claim_id is not None:
                valid_from = payload["claim"]["valid_from"]
                claims.append((tenant, person, stored.claim_id, valid_from, at))
                if rng.random() < 0.15:  # this capture will support a second claim too
                    raw.append((tenant, person, stored.evidence_id, at))
            else:
                raw.append((tenant, person, stored.evidence_id, at))
    # Corrections, some of them chained (a correction of a correction).
    for index in rng.sample(range(len(claims)), len(claims) // 5):
        tenant, person, claim_id, valid_from, recorded_from = claims[index]
        for _ in range(rng.choice([1, 1, 2])):
            valid_at = valid_from + rng.randint(1, 60)
            recorded_at = recorded_from + rng.randint(1, 60)
            fixed = db.correct(
                m.CorrectRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "claim_id": claim_id,
                        "text": "correction " + words(rng, 1, 6),
                        "value": words(rng, 1, 2),
                        "valid_at": valid_at,
                        "recorded_at": recorded_at,
                    }
                )
            )
            claim_id, valid_from, recorded_from = fixed.claim_id, valid_at, recorded_at
    accepted = [
        row
        for row in db.conn.execute(
            "SELECT tenant_id, person_id, id FROM claims WHERE status = 'accepted'"
        )
    ]
    # Extra supporting and contradicting links from raw captures to claims of the same scope; a
    # few popular claims collect many supports, so duplicate rows compete for the LIMIT slots.
    popular = {
        (tenant, person): rng.sample(
            [claim for claim in accepted if claim[:2] == (tenant, person)], 2
        )
        for tenant, person, _, _ in SCOPES
    }
    for tenant, person, evidence_id, _ in raw:
        crowded = tenant == "c"
        if rng.random() > (0.9 if crowded else 0.3):
            continue
        if crowded or rng.random() < 0.5:
            claim_id = rng.choice(popular[(tenant, person)])[2]
        else:
            claim_id = rng.choice([c for c in accepted if c[:2] == (tenant, person)])[2]
        exists = db.conn.execute(
            "SELECT 1 FROM claim_evidence WHERE claim_id = ? AND evidence_id = ?",
            (claim_id, evidence_id),
        ).fetchone()
        if exists:
            continue
        db.link(
            m.LinkRequest.model_validate(
                {
                    "tenant_id": tenant,
                    "person_id": person,
                    "claim_id": claim_id,
                    "evidence_id": evidence_id,
                    "relation": "supports" if crowded or rng.random() < 0.75 else "contradicts",
                    "confidence_basis_points": rng.randint(0, 10000),
                }
            )
        )
    embed_some(db, rng)
    # Deletions (retracting what loses its last support and purging its vectors) and
    # hand-expired accepted claims (whose vectors stay but no longer map to anything).
    for tenant, person, source_id in rng.sample(sources, len(sources) // 20):
        db.delete(
            m.DeleteRequest.model_validate(
                {
                    "tenant_id": tenant,
                    "person_id": person,
                    "source_id": source_id,
                    "deleted_at": 500,
                }
            )
        )
    with db.atomic() as conn:
        conn.execute(
            "UPDATE claims SET valid_until = valid_from + 1 WHERE status = 'accepted'"
            " AND id IN (SELECT id FROM claims WHERE status = 'accepted' ORDER BY id LIMIT 25)"
        )


def embed_some(db: MemoryDb, rng: random.Random) -> None:
    """Vectors in lane ``mini``/``1`` (4 dimensions, cosine) for a sample of live targets."""
    texts = {
        "source": "SELECT tenant_id, person_id, id, content FROM sources",
        "evidence": "SELECT tenant_id, person_id, id, quote FROM evidence",
        "claim": "SELECT tenant_id, person_id, id, subject || ' ' || predicate || ' ' || value"
        " FROM claims WHERE status = 'accepted'",
    }
    for kind, sql in texts.items():
        for tenant, person, target_id, text in db.conn.execute(sql).fetchall():
            if rng.random() > 0.2:
                continue
            db.embed(
                m.EmbedRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "target": {"kind": kind, "id": target_id},
                        "embedding": {
                            # Few distinct values, so equal scores (ties) are common.
                            "vector": [rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0]) for _ in range(3)]
                            + [1.0],
                            "model": "mini",
                            "version": "1",
                            "input_hash": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                            "normalization": "none",
                            "distance": "cosine",
                        },
                    }
                )
            )


def random_queries(rng: random.Random, snap: Snapshot, count: int) -> Iterator[m.SearchRequest]:
    contents = [source["content"] for source in snap.sources.values()]
    for index in range(count):
        tenant, person, _, _ = rng.choice([*SCOPES, ("c", "dup", 0, 0), ("nobody", "none", 0, 0)])
        shape = index % 6
        if shape == 0:
            query = rng.choice(VOCABULARY[:8])  # common word: matches most rows
        elif shape == 1:
            query = rng.choice(VOCABULARY)
        elif shape == 2:  # an exact phrase out of a stored text, then token recall
            parts = rng.choice(contents).split()
            start = rng.randrange(len(parts))
            query = " ".join(parts[start : start + rng.randint(1, 3)])
        elif shape == 3:
            query = words(rng, 2, 6) + rng.choice(["?", "!", "", "'s"])
        elif shape == 4:
            query = f"What's {rng.choice(VOCABULARY)}'s {rng.choice(VOCABULARY)}?"
        else:
            query = rng.choice(["???", "zzz", "café", "CAFE", "Zurich", '"quoted" plan'])
        payload: dict[str, Any] = {
            "tenant_id": tenant,
            "person_id": person,
            "query": query,
            "limit": rng.choice([0, 1, 1, 2, 2, 3, 5, 10, 25, 100, 500]),
        }
        if rng.random() < 0.3:
            payload["query_embedding"] = {
                "vector": [rng.choice([-1.0, 0.0, 1.0]) for _ in range(3)] + [1.0],
                "model": rng.choice(["mini", "mini", "other"]),
                "version": "1",
            }
        if rng.random() < 0.4:
            payload["as_of"] = {
                "valid_at": rng.randint(0, 250),
                "recorded_at": rng.randint(0, 250),
            }
        yield m.SearchRequest.model_validate(payload)


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryDb, Snapshot]]:
    path: Path = tmp_path_factory.mktemp("equivalence") / "memory.db"
    db = MemoryDb(path)
    db.conn.execute("PRAGMA synchronous = OFF")  # a throwaway file: skip the per-commit fsync
    build_store(db, random.Random(20260501))
    try:
        yield db, read_snapshot(db)
    finally:
        db.close()


def test_store_covers_the_interesting_cases(store: tuple[MemoryDb, Snapshot]) -> None:
    db, snap = store
    statuses = {claim["status"] for claim in snap.claims.values()}
    assert statuses == {"accepted", "superseded", "retracted"}
    assert sum(source["deleted_at"] is not None for source in snap.sources.values()) >= 50
    expired = [c for c in snap.claims.values() if c["status"] == "accepted" and not is_current(c)]
    assert len(expired) == 25
    relations = {row[0] for row in db.conn.execute("SELECT relation FROM claim_evidence")}
    assert relations == {'"supports"', '"contradicts"'}
    assert len(snap.sources) > 2000


def test_paged_search_equals_the_contract_query(store: tuple[MemoryDb, Snapshot]) -> None:
    db, snap = store
    rng = random.Random(7)
    matched = dense_items = 0
    for request in random_queries(rng, snap, 400):
        # The whole candidate list, not only the fused top items, must be the contract's.
        with db.atomic(write=False) as conn:
            ranking = lexical_ranking(
                conn,
                request.tenant_id,
                request.person_id,
                request.query,
                request.as_of,
                4 * m.bounded_limit(request.limit),
            )
        assert ranking == contract_ranking(db, snap, request), request
        got = db.search(request).model_dump(mode="json")
        assert got == contract_search(db, snap, request), request
        matched += bool(got["items"])
        lexical = set(ranking)
        dense_items += sum(
            (item["memory"]["kind"], item["memory"]["id"]) not in lexical for item in got["items"]
        )
    assert matched > 250  # most queries find something, so the comparison is not vacuous
    assert dense_items > 30  # and the dense list contributed items of its own


def test_tiny_pages_cross_every_boundary_and_give_the_same_packs(
    store: tuple[MemoryDb, Snapshot],
) -> None:
    db, snap = store
    tiny = PAGING._replace(min_page=1, rows_per_wanted=0, page_growth=2, id_chunk=3)
    rng = random.Random(11)
    for request in random_queries(rng, snap, 120):
        limit = m.bounded_limit(request.limit)
        scope = (request.tenant_id, request.person_id)
        expected = contract_ranking(db, snap, request)
        with db.atomic(write=False) as conn:
            ranking = lexical_ranking(
                conn, *scope, request.query, request.as_of, 4 * limit, paging=tiny
            )
            # What a search without a dense list reads: only the first ``limit`` targets.
            first = lexical_ranking(
                conn, *scope, request.query, request.as_of, 4 * limit, wanted=limit, paging=tiny
            )
        assert ranking == expected, request
        assert first == expected[:limit], request


def test_duplicate_fts_rows_sort_as_one_group_across_pages(tmp_path: Path) -> None:
    # Legacy stores may index one source twice; the contract's sort then interleaves the two
    # copies' claim rows by claim id, which decides what the row LIMIT cuts off.
    db = MemoryDb(tmp_path / "dup.db")
    stored = []
    for index in range(6):
        stored.append(
            db.remember(
                m.RememberRequest.model_validate(
                    {
                        "tenant_id": "a",
                        "person_id": "sam",
                        "kind": "conversation",
                        "text": "kiwi",
                        "captured_at": 1,
                        "recorded_at": 1,
                        "claim": {
                            "subject": "Sam",
                            "predicate": "likes",
                            "value": f"kiwi {index}",
                            "kind": "fact",
                            "valid_from": 1,
                        },
                    }
                )
            )
        )
    # A second claim supported by the first capture, and a second FTS row for that capture.
    extra = stored[1]
    db.link(
        m.LinkRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "claim_id": extra.claim_id,
                "evidence_id": stored[0].evidence_id,
                "relation": "supports",
                "confidence_basis_points": 10000,
            }
        )
    )
    with db.atomic() as conn:
        conn.execute(
            "INSERT INTO source_fts(source_id, tenant_id, person_id, content)"
            " VALUES (?, 'a', 'sam', 'kiwi')",
            (stored[0].source_id,),
        )
    snap = read_snapshot(db)
    for limit in (1, 2, 3):
        request = m.SearchRequest(tenant_id="a", person_id="sam", query="kiwi", limit=limit)
        assert db.search(request).model_dump(mode="json") == contract_search(db, snap, request)
        expected = contract_ranking(db, snap, request)
        for page, growth, chunk in ((1, 2, 1), (2, 2, 500), (3, 1, 2), (64, 4, 1), (64, 4, 500)):
            paging = PAGING._replace(
                min_page=page, rows_per_wanted=0, page_growth=growth, id_chunk=chunk
            )
            with db.atomic(write=False) as conn:
                got = lexical_ranking(conn, "a", "sam", "kiwi", None, 4 * limit, paging=paging)
                first = lexical_ranking(
                    conn, "a", "sam", "kiwi", None, 4 * limit, wanted=limit, paging=paging
                )
            assert got == expected, (limit, page, growth, chunk)
            assert first == expected[:limit], (limit, page, growth, chunk)
    db.close()
