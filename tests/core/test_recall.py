"""The recall ranking and its index (issue 13): what it finds that the contract ranking does not,
and that the pack keeps the contract's rules (scope, claims replace captures, as_of, deletion)."""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins import Embedder, hookimpl
from zkr.retrieval._recall import fuse_weighted, recall_match
from zkr.store import schema
from zkr.store.recall_index import SESSION_GAP_SECONDS, build_recall_index
from zkr.testing import EmbedderContract

SCOPE = {"tenant_id": "a", "person_id": "sam"}
# The module (zkr.feed's ``apply`` attribute is the operation).
replicate = importlib.import_module("zkr.feed.apply")


def remember(
    db: MemoryDb,
    text: str,
    at: int = 100,
    *,
    kind: str = "conversation",
    claim: dict[str, Any] | None = None,
    scope: dict[str, str] = SCOPE,
) -> m.RememberResult:
    payload: dict[str, Any] = {
        **scope,
        "kind": kind,
        "text": text,
        "captured_at": at,
        "recorded_at": at,
    }
    if claim is not None:
        payload["claim"] = {"kind": "fact", "valid_from": at, **claim}
    return db.remember(m.RememberRequest.model_validate(payload))


def search(db: MemoryDb, query: str, ranking: str = "recall", **extra: Any) -> m.RetrievalPack:
    request = {**SCOPE, "query": query, "ranking": ranking, **extra}
    return db.search(m.SearchRequest.model_validate(request))


def excerpts(pack: m.RetrievalPack) -> list[str]:
    return [item.excerpt for item in pack.items]


def recall_rows(db: MemoryDb) -> list[tuple[Any, ...]]:
    db.apply_recall_backlog()  # remember defers its rows (zkr.store.recall_backlog)
    return db.conn.execute(
        "SELECT rowid, content, statement, context FROM recall_fts ORDER BY rowid"
    ).fetchall()


def test_default_ranking_is_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZKR_RANKING", raising=False)
    request = m.SearchRequest.model_validate({**SCOPE, "query": "x"})
    assert request.ranking == m.Ranking.recall  # more in tests/core/test_ranking_default.py


def test_unknown_ranking_is_refused(db: MemoryDb) -> None:
    from zkr.errors import RequestParseError
    from zkr.operations import run

    with pytest.raises(RequestParseError, match="unknown variant `best`"):
        run(db, "search", {**SCOPE, "query": "x", "ranking": "best"})


def test_a_stemmed_word_is_found_only_by_recall(db: MemoryDb) -> None:
    remember(db, "Caroline works as a nurse")
    assert excerpts(search(db, "nurses", "contract")) == []
    assert excerpts(search(db, "nurses")) == ["Caroline works as a nurse"]


def test_stop_words_are_dropped_but_a_query_of_stop_words_still_searches() -> None:
    assert recall_match("What did Caroline paint?") == '"Caroline"* OR "paint"*'
    assert recall_match("what is it") == '"what"* OR "is" OR "it"'
    assert recall_match("?!") is None
    # FTS5 operators in user text are plain (quoted) words.
    assert recall_match('a "quoted" NEAR 42') == '"quoted"* OR "NEAR"* OR "42"'


def test_a_claim_is_found_by_its_statement_and_replaces_its_capture(db: MemoryDb) -> None:
    remember(
        db,
        "I moved last spring",
        claim={"subject": "alice", "predicate": "lives_in", "value": "Lisbon"},
    )
    assert search(db, "where does alice live", "contract").items == []
    (item,) = search(db, "where does alice live").items
    assert item.memory.kind == m.MemoryKind.claim
    assert item.excerpt == "alice lives_in Lisbon"


def test_a_superseded_claim_is_not_returned_and_as_of_sees_it(db: MemoryDb) -> None:
    stored = remember(
        db, "Sam works at Acme", claim={"subject": "Sam", "predicate": "employer", "value": "Acme"}
    )
    assert stored.claim_id is not None
    db.correct(
        m.CorrectRequest(
            **SCOPE,
            claim_id=stored.claim_id,
            text="Sam now works at Globex",
            value="Globex",
            valid_at=200,
            recorded_at=200,
        )
    )
    now = search(db, "employer Sam works")
    assert [i.excerpt for i in now.items] == ["Sam employer Globex"]
    then = search(db, "employer Sam works", as_of={"valid_at": 150, "recorded_at": 150})
    assert [i.excerpt for i in then.items] == ["Sam employer Acme"]


def test_as_of_never_returns_a_later_capture(db: MemoryDb) -> None:
    remember(db, "painting lessons started", at=100)
    remember(db, "painting exhibition opened", at=500)
    pack = search(db, "painting", as_of={"valid_at": 200, "recorded_at": 200})
    assert excerpts(pack) == ["painting lessons started"]


def test_another_scope_is_never_returned(db: MemoryDb) -> None:
    remember(db, "the secret garden", scope={"tenant_id": "b", "person_id": "sam"})
    remember(db, "my garden", scope=SCOPE)
    assert excerpts(search(db, "secret garden")) == ["my garden"]


def test_neighbours_lend_their_words_at_a_lower_weight(db: MemoryDb) -> None:
    remember(db, "Mel: what did you do at the weekend?", at=1000)
    remember(db, "Caroline: we went to the lake", at=1000)
    remember(db, "Caroline: camping with the kids", at=1000)
    # A day later: another session, not a neighbour.
    remember(db, "Mel: the lake was frozen", at=1000 + SESSION_GAP_SECONDS + 1)
    # Same time, another kind: not a neighbour either.
    remember(db, "weekend plans document", at=1000, kind="document")
    found = excerpts(search(db, "weekend"))
    assert set(found[:2]) == {"Mel: what did you do at the weekend?", "weekend plans document"}
    # Found through the context column only, after the own-text hits.
    assert set(found[2:]) == {"Caroline: we went to the lake", "Caroline: camping with the kids"}
    assert "Mel: the lake was frozen" not in found


def test_a_deleted_capture_leaves_its_neighbours_context(db: MemoryDb) -> None:
    first = remember(db, "talking about tulips", at=10)
    gone = remember(db, "zanzibar holiday memories", at=11)
    remember(db, "and about roses", at=12)
    assert len(search(db, "zanzibar").items) == 3
    db.delete(m.DeleteRequest(**SCOPE, source_id=gone.source_id, deleted_at=20))
    assert search(db, "zanzibar").items == []
    assert search(db, "zanzibar", "contract").items == []
    assert not any("zanzibar" in str(row) for row in recall_rows(db))
    # The neighbours now see each other.
    context = db.conn.execute(
        "SELECT context FROM recall_fts WHERE rowid = (SELECT rowid FROM sources WHERE id = ?)",
        (first.source_id,),
    ).fetchone()[0]
    assert context == "and about roses"


def test_a_supports_link_adds_the_claim_statement_to_the_linked_capture(db: MemoryDb) -> None:
    claimed = remember(
        db, "Sam works at Acme", claim={"subject": "Sam", "predicate": "employer", "value": "Acme"}
    )
    other = remember(db, "badge photo from the office", at=5000)
    assert claimed.claim_id is not None
    db.link(
        m.LinkRequest(
            **SCOPE,
            claim_id=claimed.claim_id,
            evidence_id=other.evidence_id,
            relation=m.EvidenceRelation.supports,
            confidence_basis_points=9000,
        )
    )
    rows = {row[1]: row[2] for row in recall_rows(db)}
    assert rows["badge photo from the office"] == "Sam employer Acme"


def test_the_index_equals_a_rebuild_from_scratch(db: MemoryDb) -> None:
    for index in range(12):
        remember(db, f"turn {index} about topic{index % 3}", at=100 + index // 5)
    stored = remember(db, "late turn", at=103)
    db.delete(m.DeleteRequest(**SCOPE, source_id=stored.source_id, deleted_at=300))
    incremental = recall_rows(db)
    with db.atomic() as conn:
        build_recall_index(conn)
    assert recall_rows(db) == incremental


def as_older_schema(path: Path, version: int, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Rewrite the file at *path* as schema *version* wrote it: *statements*, then the version."""
    conn = sqlite3.connect(path)
    for sql, params in statements:
        conn.execute(sql, params)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def test_a_version_10_file_gets_its_recall_index_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v10.db"
    with MemoryDb(path) as db:
        remember(db, "Caroline works as a nurse")
        remember(db, "she likes night shifts", at=101)
        expected = recall_rows(db)
    as_older_schema(path, 10, ("DROP TABLE recall_fts", ()), ("DROP INDEX sources_timeline", ()))
    with MemoryDb(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert recall_rows(db) == expected
        assert excerpts(search(db, "nurses"))[0] == "Caroline works as a nurse"


def test_a_version_12_file_gets_the_new_neighbour_window_on_open(tmp_path: Path) -> None:
    """Schema 13 changed the window (two before, one after): a schema-12 file's rows, which held
    two after, are rebuilt when it is opened, so a later delete finds every row holding a word."""
    path = tmp_path / "v12.db"
    with MemoryDb(path) as db:
        for index, word in enumerate(["alpha", "beta", "gamma"]):
            remember(db, word, at=100 + index)
        expected = recall_rows(db)
        assert [row[3] for row in expected] == ["beta", "alpha\ngamma", "alpha\nbeta"]
    # The first row as schema 12 wrote it: two after.
    stale = ("UPDATE recall_fts SET context = 'beta\ngamma' WHERE rowid = ?", (expected[0][0],))
    as_older_schema(path, 12, stale)
    with MemoryDb(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert recall_rows(db) == expected
        assert (
            db.conn.execute(
                "INSERT INTO recall_fts(recall_fts, rank) VALUES ('integrity-check', 1)"
            ).fetchall()
            == []
        )


def test_apply_keeps_the_replica_recall_index(db: MemoryDb, tmp_path: Path) -> None:
    remember(db, "tulips in spring", at=10)
    gone = remember(db, "zanzibar trip", at=11)
    remember(
        db, "roses in summer", at=12, claim={"subject": "I", "predicate": "like", "value": "roses"}
    )
    db.delete(m.DeleteRequest(**SCOPE, source_id=gone.source_id, deleted_at=20))
    with MemoryDb(tmp_path / "replica.db") as replica:
        replicate.sync(db, replica, "a", "sam", limit=2)
        assert [row[1:] for row in recall_rows(replica)] == [row[1:] for row in recall_rows(db)]


# ----------------------------------------------------------------------------------------------
# Fusion
# ----------------------------------------------------------------------------------------------


def test_weighted_fusion_lets_a_strong_dense_only_memory_reach_the_top() -> None:
    lexical = [("source", f"l{i}") for i in range(40)]
    dense = [("source", f"d{i}") for i in range(40)]
    # Equal weights: the dense list's best memory (found by it alone) ties the lexical best.
    fused = fuse_weighted([(lexical, 1.0), (dense, 1.0)], 10, k=10)
    assert fused[:2] == [(("source", "d0"), 10_000), (("source", "l0"), 10_000)]
    # Weighted: it ranks by its weight, here between the lexical 2nd and 3rd.
    fused = fuse_weighted([(lexical, 1.0), (dense, 0.9)], 10, k=10)
    assert [target for target, _ in fused].index(("source", "d0")) == 2
    # A memory both lists found beats either list's best alone.
    both = [("source", "x"), *lexical]
    fused = fuse_weighted([(both, 1.0), ([*dense[:5], ("source", "x")], 0.3)], 3)
    assert fused[0][0] == ("source", "x")


def test_fusion_of_one_list_keeps_its_order() -> None:
    ranking = [("claim", "z"), ("source", "a"), ("source", "b")]
    fused = fuse_weighted([(ranking, 1.0)], 10)
    assert [target for target, _ in fused] == ranking
    assert fused[0][1] == 10_000
    assert fused[1][1] > fused[2][1]


# ----------------------------------------------------------------------------------------------
# Dense: roles and one entry per memory
# ----------------------------------------------------------------------------------------------


class LetterEmbedder(Embedder):
    """Letter counts (a-z), L2-normalised; records the role of every call."""

    model: ClassVar[str] = "test/letters"
    version: ClassVar[str] = "1"
    dimension: ClassVar[int] = 26
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")
    calls: ClassVar[list[str | None]] = []

    def embed_batch(self, texts: Sequence[str], role: str | None = None) -> list[list[float]]:
        LetterEmbedder.calls.append(role)
        rows = []
        for text in texts:
            counts = [float(text.lower().count(chr(97 + i))) + 0.01 for i in range(26)]
            norm = sum(v * v for v in counts) ** 0.5
            rows.append([v / norm for v in counts])
        return rows


class LetterPlugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
        register(LetterEmbedder())


def test_roles_are_passed_and_dense_lists_one_entry_per_memory(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    registered_plugin(LetterPlugin(), name="letters")
    LetterEmbedder.calls.clear()
    for index, text in enumerate(["aaaa bbbb", "zzzz yyyy", "aaab"]):
        remember(db, text, at=index * 100_000)
    db.rebuild(m.RebuildRequest(**SCOPE, model="test/letters", version="1"))
    assert set(LetterEmbedder.calls) == {"passage"}
    LetterEmbedder.calls.clear()
    lane = {"model": "test/letters", "version": "1"}
    pack = search(db, "qqqq", query_embedding=lane)
    assert LetterEmbedder.calls == ["query"]
    # No word matches: the dense list alone, each capture once (not as source and as evidence,
    # which the contract ranking lists separately).
    assert len(pack.items) == 3
    assert len(set(excerpts(pack))) == 3
    contract = search(db, "qqqq", "contract", query_embedding=lane)
    assert len(contract.items) == 6
    assert len(set(excerpts(contract))) == 3


def test_a_turn_next_to_a_similar_turn_ranks_higher_until_that_turn_is_deleted(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    """Dense neighbour propagation: two captures with one text, one of them next to a capture
    that resembles the query; no query word matches anything, so only the dense side speaks."""
    registered_plugin(LetterPlugin(), name="letters")
    day = 86_400
    remember(db, "zzzz", at=0)
    near = remember(db, "mmmm", at=10)
    similar = remember(db, "qqqq qqqq", at=20)
    remember(db, "zzzz", at=10 * day)
    far = remember(db, "mmmm", at=10 * day + 10)
    db.rebuild(m.RebuildRequest(**SCOPE, model="test/letters", version="1"))
    vector = LetterEmbedder().embed_batch(["qqqq"], role="query")[0]
    lane = {"model": "test/letters", "version": "1", "vector": vector}

    def relevance() -> dict[str, int]:
        pack = search(db, "nothing", query_embedding=lane)
        return {item.evidence_ids[0]: item.relevance_basis_points for item in pack.items}

    before = relevance()
    assert before[near.evidence_id] > before[far.evidence_id]
    db.delete(m.DeleteRequest(**SCOPE, source_id=similar.source_id, deleted_at=30))
    after = relevance()
    assert similar.evidence_id not in after
    assert after[near.evidence_id] == after[far.evidence_id]


def test_an_embedder_without_roles_is_called_without_role(
    db: MemoryDb, registered_plugin: Callable[..., str]
) -> None:
    class Plain(LetterEmbedder):
        model: ClassVar[str] = "test/plain"
        roles: ClassVar[tuple[str, ...]] = ()

        def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:  # type: ignore[override]
            return super().embed_batch(texts, None)

    class PlainPlugin:
        @hookimpl
        def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
            register(Plain())

    registered_plugin(PlainPlugin(), name="plain")
    remember(db, "aaaa")
    db.rebuild(m.RebuildRequest(**SCOPE, model="test/plain", version="1"))
    pack = search(db, "aaaa", query_embedding={"model": "test/plain", "version": "1"})
    assert excerpts(pack) == ["aaaa"]


class TestLetterEmbedderContract(EmbedderContract):
    """The contract, with roles declared, on the tests' role-aware embedder."""

    def make_embedder(self) -> Any:
        return LetterEmbedder()


class TestRolesThatDoNotWorkFailTheContract(EmbedderContract):
    """Declaring roles the embedder cannot take is caught."""

    class Liar(LetterEmbedder):
        def embed_batch(self, texts: Sequence[str], role: str | None = None) -> list[list[float]]:
            if role is not None:
                raise TypeError("no roles here")
            return super().embed_batch(texts)

    def make_embedder(self) -> Any:
        return self.Liar()

    @pytest.mark.xfail(raises=TypeError, strict=True)
    def test_declared_roles(self, embedder: Any) -> None:
        super().test_declared_roles(embedder)
