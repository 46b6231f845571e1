"""Dense retrieval (contract §5.4) and its fusion with lexical ranks (§5.5)."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import pytest

from tests.conftest import CONTRACT_RANKING
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.dense import DenseScan, cached_lanes, dense_ranking
from zkr.errors import EmbeddingError, UnknownPluginError

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

NO_LEXICAL = "qqqq"  # matches no stored word: a dense-only search


def found(pack: m.RetrievalPack) -> list[tuple[str, str]]:
    return [(i.memory.kind.value, i.memory.id) for i in pack.items]


def ranking(db: MemoryDb, vector: list[float] | None, **query: Any) -> list[Any]:
    embedding = m.QueryEmbedding.model_validate({"model": "m", "version": "v", **query} | (
        {"vector": vector} if vector is not None else {}))  # fmt: skip
    with db.atomic(write=False) as conn:
        return dense_ranking(DenseScan(db, conn, "t", "p", embedding, text="query text"))


# ----------------------------------------------------------------------------------------------
# Issue 4, acceptance 4: deleted and corrected memories stop counting at once, before any rebuild
# ----------------------------------------------------------------------------------------------


def test_deleting_a_source_removes_its_vectors_influence_before_any_rebuild(mem: Any) -> None:
    gone, kept = mem.raw("holiday plans for Lisbon"), mem.raw("grocery list")
    for ids in (gone, kept):
        mem.embed("source", ids.source_id, [1.0, 0.0])
        mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    before = found(mem.search(NO_LEXICAL, [1.0, 0.0]))
    assert ("source", gone.source_id) in before and ("evidence", gone.evidence_id) in before
    mem.delete(gone.source_id)
    after = found(mem.search(NO_LEXICAL, [1.0, 0.0]))
    assert after == [("source", kept.source_id), ("evidence", kept.evidence_id)]
    assert all(gone.source_id != i and gone.evidence_id != i for _, i in after)


def test_a_deleted_source_missed_by_the_purge_still_cannot_count(mem: Any, db: MemoryDb) -> None:
    ids = mem.raw("a vector that survives the purge")
    mem.embed("source", ids.source_id, [1.0, 0.0])
    saved = db.conn.execute("SELECT * FROM embeddings").fetchall()
    mem.delete(ids.source_id)
    db.conn.executemany(f"INSERT INTO embeddings VALUES ({', '.join('?' * 13)})", saved)
    db.caches.clear()
    assert mem.search(NO_LEXICAL, [1.0, 0.0]).items == []


def test_correcting_a_claim_removes_its_vectors_influence_before_any_rebuild(mem: Any) -> None:
    ids = mem.claim("Acme")
    mem.embed("claim", ids.claim_id, [1.0, 0.0])
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    mem.embed("source", ids.source_id, [1.0, 0.0])
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("claim", ids.claim_id)]
    fixed = mem.correct(ids.claim_id, "Initech")
    # The old claim is superseded; its source and evidence support no current claim.
    assert mem.search(NO_LEXICAL, [1.0, 0.0]).items == []
    mem.embed("claim", fixed.claim_id, [0.0, 1.0])
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("claim", fixed.claim_id)]


# ----------------------------------------------------------------------------------------------
# Mapping vectors to retrieval targets (§5.4 step 3) and fusion (§9.2)
# ----------------------------------------------------------------------------------------------


def test_accepted_claim_replaces_its_source_in_retrieval(mem: Any) -> None:
    ids = mem.claim("Acme")
    mem.embed("source", ids.source_id, [1.0, 0.0])
    pack = mem.search("Acme", [1.0, 0.0])
    assert found(pack) == [("claim", ids.claim_id)]
    assert pack.items[0].relevance_basis_points == 10000


def test_dense_evidence_without_a_claim_is_retrievable(mem: Any) -> None:
    ids = mem.raw("the blue notebook is in the drawer")
    mem.embed("evidence", ids.evidence_id, [0.0, 1.0])
    pack = mem.search(NO_LEXICAL, [0.0, 1.0])
    assert found(pack) == [("evidence", ids.evidence_id)]
    assert pack.items[0].evidence_ids == [ids.evidence_id]
    mem.delete(ids.source_id)
    assert mem.search(NO_LEXICAL, [0.0, 1.0]).items == []


def test_expired_claims_do_not_fall_back_to_stale_raw_evidence(mem: Any, db: MemoryDb) -> None:
    ids = mem.claim("Acme")
    for kind, target_id in (("source", ids.source_id), ("evidence", ids.evidence_id)):
        mem.embed(kind, target_id, [1.0, 0.0])
    db.conn.execute(
        "UPDATE claims SET valid_until = 15, recorded_until = 15 WHERE id = ?", (ids.claim_id,)
    )
    db.caches.clear()
    assert mem.search("Acme", [1.0, 0.0]).items == []


def test_a_target_keeps_the_best_score_of_its_vectors(mem: Any, db: MemoryDb) -> None:
    ids = mem.claim("Acme")
    other = mem.raw("unrelated note")
    mem.embed("claim", ids.claim_id, [0.0, 1.0])  # poor
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])  # best: counts for the claim
    mem.embed("source", other.source_id, [0.8, 0.6])
    assert [target for target, _ in ranking(db, [1.0, 0.0])] == [
        ("claim", ids.claim_id),
        ("source", other.source_id),
    ]


def test_ties_break_by_target_order(mem: Any, db: MemoryDb) -> None:
    a, b = mem.raw("first"), mem.raw("second")
    claim = mem.claim("Acme")
    for ids in (a, b):
        mem.embed("source", ids.source_id, [1.0, 0.0])
        mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    mem.embed("claim", claim.claim_id, [1.0, 0.0])
    targets = [target for target, _ in ranking(db, [1.0, 0.0])]
    sources = sorted([("source", a.source_id), ("source", b.source_id)])
    evidence = sorted([("evidence", a.evidence_id), ("evidence", b.evidence_id)])
    assert targets == [*sources, *evidence, ("claim", claim.claim_id)]


@pytest.mark.parametrize(
    ("distance", "vectors", "query", "order"),
    [
        ("dot", [[3.0, 0.0], [1.0, 1.0], [-1.0, 0.0]], [1.0, 0.5], [0, 1, 2]),
        ("euclidean", [[3.0, 0.0], [1.0, 1.0], [-1.5, 0.0]], [1.0, 0.5], [1, 0, 2]),
        ("cosine", [[3.0, 0.0], [1.0, 1.0], [-1.0, 0.0]], [1.0, 0.9], [1, 0, 2]),
    ],
)
def test_each_distance_scores_in_float32(
    mem: Any, db: MemoryDb, distance: str, vectors: list[list[float]], query: list[float],
    order: list[int],
) -> None:  # fmt: skip
    ids = [mem.raw(f"memory {n}") for n in range(len(vectors))]
    for memory, vector in zip(ids, vectors, strict=True):
        mem.embed("evidence", memory.evidence_id, vector, distance=distance)
    result = ranking(db, query)
    assert [target[1] for target, _ in result] == [ids[i].evidence_id for i in order]
    q = np.asarray(query, np.float32)
    for (_, score), i in zip(result, order, strict=True):
        s = np.asarray(vectors[i], np.float32)
        if distance == "dot":
            expected = np.float32(q @ s)
        elif distance == "cosine":
            expected = np.float32(q @ s) / (np.sqrt(q @ q) * np.sqrt(s @ s))
        else:
            expected = -np.sqrt(np.sum((q - s) ** 2, dtype=np.float32))
        assert score == pytest.approx(float(expected), rel=1e-6)


# ----------------------------------------------------------------------------------------------
# Query validation and scoring errors (§2.5 "search (dense)")
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"model": " ", "vector": [1.0]}, "query embedding model must not be empty"),
        ({"version": "", "vector": [1.0]}, "query embedding version must not be empty"),
        ({"vector": []}, "query embedding vector must contain finite values"),
        ({"vector": [1e39]}, "query embedding vector must contain finite values"),
        ({"vector": [1.0, float("inf")]}, "query embedding vector must contain finite values"),
    ],
)
def test_query_embedding_is_validated_even_without_embeddings(
    mem: Any, query: dict[str, Any], message: str
) -> None:
    payload = mem.scope(query="anything", query_embedding={"model": "m", "version": "v", **query})
    with pytest.raises(EmbeddingError) as raised:
        mem.db.search(m.SearchRequest.model_validate(payload))
    assert str(raised.value) == message


def test_as_of_ignores_the_query_embedding(mem: Any) -> None:
    """The contract ranking (§5.1 step 5); the recall ranking uses it under as_of (issue 24)."""
    ids = mem.raw("history matters")
    payload = mem.scope(
        query="history",
        query_embedding={"model": " ", "version": "v", "vector": []},
        as_of={"valid_at": 50, "recorded_at": 50},
        ranking="contract",
    )
    pack = mem.db.search(m.SearchRequest.model_validate(payload))
    assert found(pack) == [("source", ids.source_id)]
    with pytest.raises(EmbeddingError, match="query embedding model must not be empty"):
        mem.db.search(m.SearchRequest.model_validate({**payload, "ranking": "recall"}))


def test_recall_as_of_maps_vectors_to_what_was_visible_then(mem: Any) -> None:
    early = mem.raw("no shared words here", at=10)
    late = mem.raw("nothing in common either", at=30)
    mem.embed("source", early.source_id, [1.0, 0.0])
    mem.embed("source", late.source_id, [0.9, 0.1])
    payload = mem.scope(
        query=NO_LEXICAL,
        query_embedding={"model": "m", "version": "v", "vector": [1.0, 0.0]},
        ranking="recall",
    )
    now = mem.db.search(m.SearchRequest.model_validate(payload))
    assert found(now) == [("source", early.source_id), ("source", late.source_id)]
    then = mem.db.search(
        m.SearchRequest.model_validate({**payload, "as_of": {"valid_at": 20, "recorded_at": 20}})
    )
    assert found(then) == [("source", early.source_id)]


def test_query_dimension_must_match_the_lane(mem: Any) -> None:
    ids = mem.raw("three dims")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0, 0.0])
    with pytest.raises(EmbeddingError) as raised:
        mem.search(NO_LEXICAL, [1.0, 0.0])
    assert str(raised.value) == "query embedding dimension 2 does not match stored dimension 3"


def test_unknown_model_contributes_nothing(mem: Any) -> None:
    ids = mem.raw("lexical only")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    assert found(mem.search("lexical", [1.0, 0.0, 0.0], model="other")) == [
        ("source", ids.source_id)
    ]


def test_cosine_needs_non_zero_magnitudes(mem: Any) -> None:
    ids = mem.raw("zero check")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    with pytest.raises(EmbeddingError, match=r"^cosine embeddings must have non-zero magnitude$"):
        mem.search(NO_LEXICAL, [0.0, 0.0])
    zero = mem.raw("stored zero")
    mem.embed("evidence", zero.evidence_id, [0.0, 0.0])
    with pytest.raises(EmbeddingError, match=r"^cosine embeddings must have non-zero magnitude$"):
        mem.search(NO_LEXICAL, [1.0, 0.0])


def test_a_non_finite_similarity_fails_the_search(mem: Any) -> None:
    ids = mem.raw("huge")
    mem.embed("evidence", ids.evidence_id, [3e38, 3e38], distance="dot")
    with pytest.raises(EmbeddingError, match=r"^embedding similarity is not finite$"):
        mem.search(NO_LEXICAL, [3e38, 3e38])


# ----------------------------------------------------------------------------------------------
# The cached lane matrix is never stale
# ----------------------------------------------------------------------------------------------


def test_cached_lane_sees_other_connections_writes(mem: Any, db: MemoryDb) -> None:
    ids = mem.raw("cached memory")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("evidence", ids.evidence_id)]
    assert cached_lanes(db)
    other = sqlite3.connect(db.path)
    other.execute("DELETE FROM embeddings")
    other.commit()
    other.close()
    assert mem.search(NO_LEXICAL, [1.0, 0.0]).items == []


def test_cached_lane_sees_raw_writes_on_the_same_connection(mem: Any, db: MemoryDb) -> None:
    ids = mem.raw("cached memory")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    assert mem.search(NO_LEXICAL, [1.0, 0.0]).items
    db.conn.execute("UPDATE evidence SET quote = 'edited' WHERE id = ?", (ids.evidence_id,))
    assert mem.search(NO_LEXICAL, [1.0, 0.0]).items == []


def test_cache_is_reused_between_searches(mem: Any, db: MemoryDb) -> None:
    ids = mem.raw("cached memory")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    mem.search(NO_LEXICAL, [1.0, 0.0])
    (lane,) = cached_lanes(db).values()
    mem.search(NO_LEXICAL, [0.0, 1.0])
    assert list(cached_lanes(db).values()) == [lane]


def test_writes_refresh_the_cached_lane_in_place(mem: Any, db: MemoryDb) -> None:
    first = mem.raw("cached memory")
    mem.embed("evidence", first.evidence_id, [1.0, 0.0])
    mem.search(NO_LEXICAL, [1.0, 0.0])
    (lane,) = cached_lanes(db).values()
    mem.raw("an unrelated capture")  # ticks nothing: it has no vector
    second = mem.raw("another memory")
    mem.embed("evidence", second.evidence_id, [0.0, 1.0])
    assert found(mem.search(NO_LEXICAL, [0.0, 1.0])) == [
        ("evidence", second.evidence_id),
        ("evidence", first.evidence_id),
    ]
    mem.delete(first.source_id)
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("evidence", second.evidence_id)]
    assert list(cached_lanes(db).values()) == [lane]  # the same lane, refreshed by its ticks


def test_a_search_inside_a_write_transaction_leaves_the_cache_alone(mem: Any, db: MemoryDb) -> None:
    ids = mem.raw("cached memory")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("evidence", ids.evidence_id)]
    other = mem.raw("rolled back")
    with pytest.raises(RuntimeError), db.atomic():
        mem.embed("evidence", other.evidence_id, [1.0, 0.0])
        assert len(found(mem.search(NO_LEXICAL, [1.0, 0.0]))) == 2  # sees its own write
        raise RuntimeError("roll back")
    assert found(mem.search(NO_LEXICAL, [1.0, 0.0])) == [("evidence", ids.evidence_id)]


# ----------------------------------------------------------------------------------------------
# Query embedding by an installed embedder
# ----------------------------------------------------------------------------------------------


def test_a_search_without_a_vector_uses_the_installed_embedder(
    mem: Any, db: MemoryDb, hash_embedder: Any
) -> None:
    ids = mem.raw("blue notebook drawer")
    vector = hash_embedder.vector("blue notebook drawer")
    mem.embed("evidence", ids.evidence_id, vector, normalization="l2", model="hash", version="1")
    pack = mem.search("blue notebook", model="hash", version="1")
    # lexical finds the source, the embedded query finds the evidence
    assert found(pack) == [("source", ids.source_id), ("evidence", ids.evidence_id)]
    assert hash_embedder.calls == [["blue notebook"]]


def test_a_search_without_a_vector_needs_an_installed_embedder(mem: Any) -> None:
    with pytest.raises(UnknownPluginError, match=r"no installed embedder"):
        mem.search("anything", model="nobody", version="1")


@pytest.mark.parametrize("inline_rows", [0, 20_000])  # on the worker, and on the caller's thread
def test_a_started_scan_answers_what_dense_ranks_answers(
    mem: Any, db: MemoryDb, monkeypatch: pytest.MonkeyPatch, inline_rows: int
) -> None:
    from zkr.embeddings import dense
    from zkr.embeddings.dense import dense_ranks, dense_ranks_started

    monkeypatch.setattr(dense, "INLINE_SCAN_ROWS", inline_rows)

    for text, vector in (("first", [1.0, 0.0]), ("second", [0.6, 0.8]), ("third", [0.0, 1.0])):
        ids = mem.raw(text)
        mem.embed("source", ids.source_id, vector)
    query = m.QueryEmbedding.model_validate({"model": "m", "version": "v", "vector": [0.8, 0.6]})
    with db.atomic(write=False) as conn:
        expected = dense_ranks(DenseScan(db, conn, "t", "p", query)).ranked()
        started = dense_ranks_started(DenseScan(db, conn, "t", "p", query))
        assert started().ranked() == expected
    assert len(expected) == 3


@pytest.mark.parametrize("inline_rows", [0, 20_000])
def test_a_started_scan_raises_its_refusal_only_when_asked(
    mem: Any, db: MemoryDb, monkeypatch: pytest.MonkeyPatch, inline_rows: int
) -> None:
    from zkr.embeddings import dense
    from zkr.embeddings.dense import dense_ranks_started

    monkeypatch.setattr(dense, "INLINE_SCAN_ROWS", inline_rows)

    ids = mem.raw("three dims")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0, 0.0])
    wrong = m.QueryEmbedding.model_validate({"model": "m", "version": "v", "vector": [1.0, 0.0]})
    blank = m.QueryEmbedding.model_validate({"model": " ", "version": "v", "vector": [1.0]})
    with db.atomic(write=False) as conn:
        mismatched = dense_ranks_started(DenseScan(db, conn, "t", "p", wrong))  # no raise yet
        unnamed = dense_ranks_started(DenseScan(db, conn, "t", "p", blank))
        with pytest.raises(EmbeddingError, match="does not match stored dimension 3"):
            mismatched()
        with pytest.raises(EmbeddingError, match="model must not be empty"):
            unnamed()


def test_the_worker_scans_on_one_blas_thread_and_restores_the_count(
    mem: Any, db: MemoryDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from zkr.embeddings import _blas, dense
    from zkr.embeddings.dense import dense_ranks_started

    blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
    if not blas.lib_controllers:
        pytest.skip("numpy's BLAS is not one threadpoolctl drives")
    before = [lib.num_threads for lib in blas.lib_controllers]
    seen: list[list[int]] = []
    rank = dense.DenseLane.rank

    def counting(lane: Any, vector: Any) -> Any:
        seen.append([lib.get_num_threads() for lib in blas.lib_controllers])
        return rank(lane, vector)

    monkeypatch.setattr(dense, "INLINE_SCAN_ROWS", 0)  # always on the worker
    monkeypatch.setattr(dense.DenseLane, "rank", counting)
    ids = mem.raw("one vector")
    mem.embed("source", ids.source_id, [1.0, 0.0])
    query = m.QueryEmbedding.model_validate({"model": "m", "version": "v", "vector": [1.0, 0.0]})
    with db.atomic(write=False) as conn:
        assert len(dense_ranks_started(DenseScan(db, conn, "t", "p", query))()) == 1
    assert seen == [[1] * len(before)]
    assert [lib.get_num_threads() for lib in blas.lib_controllers] == before
    assert _blas._blas() is not None


def test_one_blas_thread_gives_the_same_scores_bit_for_bit() -> None:
    from zkr.embeddings._blas import one_blas_thread

    # Big enough for OpenBLAS to split the product between its threads (when it has several).
    rows = np.random.default_rng(7).standard_normal((40_000, 384)).astype(np.float32)
    query = np.random.default_rng(8).standard_normal(384).astype(np.float32)
    default = rows @ query
    with one_blas_thread():
        single = rows @ query
    assert single.dtype == np.float32
    assert np.array_equal(single, default)


@pytest.mark.parametrize("worker_first", [True, False])
def test_a_started_scan_runs_once_on_whichever_thread_begins_it(
    mem: Any, db: MemoryDb, monkeypatch: pytest.MonkeyPatch, worker_first: bool
) -> None:
    import threading

    from zkr.embeddings import dense
    from zkr.embeddings.dense import dense_ranks, dense_ranks_started

    monkeypatch.setattr(dense, "INLINE_SCAN_ROWS", 0)  # always handed to the worker
    for text, vector in (("first", [1.0, 0.0]), ("second", [0.6, 0.8])):
        mem.embed("source", mem.raw(text).source_id, vector)
    query = m.QueryEmbedding.model_validate({"model": "m", "version": "v", "vector": [0.8, 0.6]})
    with db.atomic(write=False) as conn:
        expected = dense_ranks(DenseScan(db, conn, "t", "p", query)).ranked()
    began, release = threading.Event(), threading.Event()
    scanned_on: list[int] = []
    rank = dense.DenseLane.rank

    def recording(lane: Any, vector: Any) -> Any:
        scanned_on.append(threading.get_ident())
        began.set()
        return rank(lane, vector)

    monkeypatch.setattr(dense.DenseLane, "rank", recording)
    if not worker_first:  # the worker is busy: the scan waits in its queue
        dense._scanner().submit(release.wait, 10)
    try:
        with db.atomic(write=False) as conn:
            started = dense_ranks_started(DenseScan(db, conn, "t", "p", query))
            if worker_first:
                assert began.wait(10)
            assert started().ranked() == expected
    finally:
        release.set()
    dense._scanner().submit(lambda: None).result(10)  # the queue has drained
    assert len(scanned_on) == 1
    assert (scanned_on[0] == threading.get_ident()) is not worker_first
