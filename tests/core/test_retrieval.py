"""search and get (contract §5, §9.2 retrieval checklist, §10 pitfalls 5-8 and 16-17)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import CONTRACT_RANKING
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import InvalidRequest, NotFound
from zkr.retrieval._fusion import fuse, rank_contribution
from zkr.retrieval._lexical import lexical_ranking
from zkr.retrieval._materialize import MAX_EXCERPT_BYTES, cap_excerpt

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

# ----------------------------------------------------------------------------- helpers


def remember(
    db: MemoryDb,
    text: str,
    *,
    tenant: str = "a",
    person: str = "sam",
    claim: tuple[str, str, str] | None = None,
    kind: str = "fact",
    at: int = 10,
    valid_from: int | None = None,
) -> m.RememberResult:
    """A conversation capture at captured/recorded *at*, with an optional (s, p, v) claim."""
    payload: dict[str, Any] = {
        "tenant_id": tenant,
        "person_id": person,
        "kind": "conversation",
        "text": text,
        "captured_at": at,
        "recorded_at": at,
    }
    if claim is not None:
        subject, predicate, value = claim
        payload["claim"] = {
            "subject": subject,
            "predicate": predicate,
            "value": value,
            "kind": kind,
            "valid_from": at if valid_from is None else valid_from,
        }
    return db.remember(m.RememberRequest.model_validate(payload))


def employer(
    db: MemoryDb, value: str, *, tenant: str = "a", person: str = "sam"
) -> m.RememberResult:
    """The contract's fixture: ``Sam works at <value>`` with claim (Sam, employer, value)."""
    return remember(
        db, f"Sam works at {value}", tenant=tenant, person=person, claim=("Sam", "employer", value)
    )


def search(db: MemoryDb, query: str, *, tenant: str = "a", **extra: Any) -> m.RetrievalPack:
    payload = {"tenant_id": tenant, "person_id": "sam", "query": query, **extra}
    return db.search(m.SearchRequest.model_validate(payload))


def get(db: MemoryDb, kind: str, target_id: str, *, tenant: str = "a") -> m.RetrievalItem:
    payload = {"tenant_id": tenant, "person_id": "sam", "target": {"kind": kind, "id": target_id}}
    return db.get(m.GetRequest.model_validate(payload))


def memories(pack: m.RetrievalPack) -> list[tuple[str, str]]:
    return [(item.memory.kind.value, item.memory.id) for item in pack.items]


def delete(db: MemoryDb, source_id: str, at: int = 30, *, tenant: str = "a") -> m.DeleteResult:
    return db.delete(
        m.DeleteRequest.model_validate(
            {"tenant_id": tenant, "person_id": "sam", "source_id": source_id, "deleted_at": at}
        )
    )


def link(db: MemoryDb, claim_id: str, evidence_id: str, relation: str = "supports") -> None:
    db.link(
        m.LinkRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "claim_id": claim_id,
                "evidence_id": evidence_id,
                "relation": relation,
                "confidence_basis_points": 9000,
            }
        )
    )


def correct(db: MemoryDb, claim_id: str, value: str, valid_at: int, recorded_at: int) -> Any:
    return db.correct(
        m.CorrectRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "claim_id": claim_id,
                "text": f"Actually Sam works at {value}",
                "value": value,
                "valid_at": valid_at,
                "recorded_at": recorded_at,
            }
        )
    )


def embed(db: MemoryDb, kind: str, target_id: str, text: str, vector: list[float]) -> None:
    db.embed(
        m.EmbedRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "target": {"kind": kind, "id": target_id},
                "embedding": {
                    "vector": vector,
                    "model": "mini",
                    "version": "1",
                    "input_hash": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                    "normalization": "none",
                    "distance": "cosine",
                },
            }
        )
    )


def dense_query(vector: list[float]) -> dict[str, Any]:
    return {"vector": vector, "model": "mini", "version": "1"}


# ----------------------------------------------------------------------------- contract §9.2


def test_raw_sources_are_scoped_cited_and_deleted_from_retrieval(db: MemoryDb) -> None:
    raw = remember(db, "Sam saw the Apollo rocket launch")
    remember(db, "Apollo rocket for tenant b", tenant="b")
    pack = search(db, "Apollo")
    assert memories(pack) == [("source", raw.source_id)]
    assert pack.items[0].evidence_ids == [raw.evidence_id]
    assert pack.items[0].excerpt == "Sam saw the Apollo rocket launch"
    assert pack.gaps == []
    assert memories(search(db, "Apollo", tenant="b")) != memories(pack)

    delete(db, raw.source_id)
    with pytest.raises(NotFound, match=r"^record not found$"):
        get(db, "source", raw.source_id)
    with pytest.raises(NotFound):
        get(db, "evidence", raw.evidence_id)
    empty = search(db, "Apollo")
    assert empty.items == []
    assert empty.gaps == ["no cited memory matched"]


def test_lexical_search_prefers_phrases_then_recalls_natural_language_tokens(
    db: MemoryDb,
) -> None:
    phrase = remember(db, "Alice works on project Apollo at Acme")
    words = remember(db, "Acme hired Alice; her project there is secret")
    remember(db, "Alice works on project Apollo at Acme", tenant="other")

    exact = search(db, "project Apollo")
    assert memories(exact)[0] == ("source", phrase.source_id)

    question = "Where does Alice work at Acme?"
    first = search(db, question)
    assert sorted(memories(first)) == sorted(
        [("source", phrase.source_id), ("source", words.source_id)]
    )
    assert all(search(db, question) == first for _ in range(3))


def test_lexical_token_fallback_is_bounded_and_handles_fts_punctuation(db: MemoryDb) -> None:
    for index in range(8):
        remember(db, f"Alice's project number {index} is on track")
    pack = search(db, "What's Alice's project?", limit=3)
    assert len(pack.items) == 3
    assert [item.relevance_basis_points for item in pack.items] == [10000, 9838, 9682]


def test_lexical_token_fallback_bounds_the_query_expression(db: MemoryDb) -> None:
    target = remember(db, "term0 is the only stored memory")
    query = " ".join(f"term{index}" for index in range(1000))
    pack = search(db, query)
    assert memories(pack) == [("source", target.source_id)]
    # term40 is beyond the first 32 unique terms, so it is never asked for.
    remember(db, "term40 alone")
    assert memories(search(db, query)) == [("source", target.source_id)]


def test_retrieval_excerpts_are_utf8_safe_and_byte_bounded(db: MemoryDb) -> None:
    text = "Zoë " + "é☃𝄞" * 2000  # 2-, 3- and 4-byte characters: the cut falls mid-character
    stored = remember(db, text)
    for item in (search(db, "Zoë").items[0], get(db, "source", stored.source_id)):
        encoded = item.excerpt.encode("utf-8")
        assert len(encoded) <= MAX_EXCERPT_BYTES
        assert text.startswith(item.excerpt)
        # The longest prefix that fits: one more character would overflow.
        assert len(text[: len(item.excerpt) + 1].encode("utf-8")) > MAX_EXCERPT_BYTES


def test_accepted_claim_replaces_its_source_in_retrieval(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    embed(db, "source", memory.source_id, "Sam works at Acme", [1.0, 0.0])
    pack = search(db, "Acme", query_embedding=dense_query([1.0, 0.0]))
    assert memories(pack) == [("claim", memory.claim_id)]
    assert pack.items[0].evidence_ids == [memory.evidence_id]


def test_dense_evidence_without_a_claim_is_retrievable(db: MemoryDb) -> None:
    raw = remember(db, "the blue notebook is in the drawer")
    embed(db, "evidence", raw.evidence_id, "the blue notebook is in the drawer", [0.0, 1.0])
    pack = search(db, "zebra", query_embedding=dense_query([0.0, 1.0]))
    assert memories(pack) == [("evidence", raw.evidence_id)]
    assert pack.items[0].evidence_ids == [raw.evidence_id]
    delete(db, raw.source_id)
    assert search(db, "zebra", query_embedding=dense_query([0.0, 1.0])).items == []


def test_expired_claims_do_not_fall_back_to_stale_raw_evidence(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    db.conn.execute(
        "UPDATE claims SET valid_until = 20, recorded_until = 20 WHERE id = ?", (memory.claim_id,)
    )
    assert search(db, "Acme").items == []
    with pytest.raises(NotFound):
        get(db, "claim", memory.claim_id or "")
    embed(db, "source", memory.source_id, "Sam works at Acme", [1.0, 0.0])
    embed(db, "evidence", memory.evidence_id, "Sam works at Acme", [1.0, 0.0])
    assert search(db, "Acme", query_embedding=dense_query([1.0, 0.0])).items == []


# ----------------------------------------------------------------------------- README example


def test_readme_example_returns_the_cited_preference(db: MemoryDb) -> None:
    stored = db.remember(
        m.RememberRequest.model_validate(
            {
                "tenant_id": "me",
                "person_id": "me",
                "kind": "conversation",
                "text": "I prefer short plans.",
                "captured_at": 1700000000,
                "recorded_at": 1700000000,
                "claim": {
                    "subject": "me",
                    "predicate": "prefers",
                    "value": "short plans",
                    "kind": "preference",
                    "valid_from": 1700000000,
                },
            }
        )
    )
    pack = db.search(
        m.SearchRequest.model_validate({"tenant_id": "me", "person_id": "me", "query": "plans"})
    )
    assert pack.model_dump(mode="json") == {
        "query": "plans",
        "items": [
            {
                "memory": {"kind": "claim", "id": stored.claim_id},
                "excerpt": "me prefers short plans",
                "relevance_basis_points": 10000,
                "evidence_ids": [stored.evidence_id],
            }
        ],
        "gaps": [],
    }


# ----------------------------------------------------------------------------- fusion (§5.5)


def test_rrf_reference_values_for_a_lexical_list() -> None:
    assert [rank_contribution(p) for p in range(10)] == [
        16393, 16129, 15873, 15625, 15384, 15151, 14925, 14705, 14492, 14285,
    ]  # fmt: skip
    targets = [("source", f"{index:02d}") for index in range(10)]
    fused = fuse([targets], 10)
    assert [target for target, _ in fused] == targets
    assert [relevance for _, relevance in fused] == [
        10000, 9838, 9682, 9531, 9384, 9242, 9104, 8970, 8840, 8714,
    ]  # fmt: skip


def test_rrf_hybrid_reference_values() -> None:
    a, b = ("claim", "a"), ("evidence", "b")
    assert fuse([[a], [b, a]], 10) == [(a, 10000), (b, 5040)]


def test_rrf_ties_use_truncated_points_then_kind_then_id() -> None:
    # Same score: source < evidence < claim regardless of id, then id.
    lexical = [("claim", "0"), ("evidence", "z")]
    dense = [("evidence", "z"), ("claim", "0")]
    assert [t for t, _ in fuse([lexical, dense], 10)] == [("evidence", "z"), ("claim", "0")]
    assert fuse([[("claim", "b")], [("claim", "a")]], 10) == [
        (("claim", "a"), 10000),
        (("claim", "b"), 10000),
    ]
    # Different raw scores that truncate to the same basis points tie: find two (lexical, dense)
    # position pairs whose scores differ but whose points are equal, with a best target at (0, 0).
    top = rank_contribution(0) * 2
    pairs = [(p, q) for p in range(1, 40) for q in range(1, 40)]
    points = {pair: (rank_contribution(pair[0]) + rank_contribution(pair[1])) * 10000 // top
              for pair in pairs}  # fmt: skip
    higher, lower = next(
        (x, y)
        for x in pairs
        for y in pairs
        if len({x[0], y[0]}) == 2 and len({x[1], y[1]}) == 2 and points[x] == points[y]
        and sum(map(rank_contribution, x)) > sum(map(rank_contribution, y))
    )  # fmt: skip
    lexical_list: list[tuple[str, str]] = [("claim", f"l{i:02d}") for i in range(40)]
    dense_list: list[tuple[str, str]] = [("claim", f"d{i:02d}") for i in range(40)]
    lexical_list[0] = dense_list[0] = ("claim", "top")
    # The higher raw score goes to the id that sorts last.
    lexical_list[higher[0]] = dense_list[higher[1]] = ("claim", "z")
    lexical_list[lower[0]] = dense_list[lower[1]] = ("claim", "a")
    fused = fuse([lexical_list, dense_list], 200)
    order = [target for target, _ in fused]
    assert dict(fused)[("claim", "a")] == dict(fused)[("claim", "z")]
    assert order.index(("claim", "a")) < order.index(("claim", "z"))


def test_rrf_truncates_to_limit_and_handles_no_candidates() -> None:
    assert fuse([[], []], 10) == []
    assert len(fuse([[("source", str(i)) for i in range(50)]], 10)) == 10


# ----------------------------------------------------------------------------- excerpts


def test_excerpt_cut_keeps_whole_code_points() -> None:
    assert cap_excerpt("short") == "short"
    exact = "a" * 4096
    assert cap_excerpt(exact) == exact
    assert cap_excerpt("a" * 4095 + "é") == "a" * 4095  # é would end at byte 4097
    assert cap_excerpt("a" * 4094 + "é") == "a" * 4094 + "é"  # ends exactly at 4096
    assert cap_excerpt("a" * 4093 + "𝄞") == "a" * 4093  # 4-byte char straddles the cut
    # Code points, not graphemes: a base letter may lose its combining accent.
    assert cap_excerpt("a" * 4095 + "e\u0301") == "a" * 4095 + "e"


# ----------------------------------------------------------------------------- lexical rules


def test_blank_scope_and_query_are_refused_in_order(db: MemoryDb) -> None:
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        db.search(m.SearchRequest(tenant_id=" ", person_id="", query=""))
    with pytest.raises(InvalidRequest, match=r"^person_id must not be empty$"):
        db.search(m.SearchRequest(tenant_id="a", person_id="\u3000", query=""))
    with pytest.raises(InvalidRequest, match=r"^query must not be empty$"):
        search(db, " \t\n\u00a0")
    # U+001F is not Unicode White_Space: the query is not blank (and simply matches nothing).
    assert search(db, "\x1f").gaps == ["no cited memory matched"]


def test_query_is_echoed_verbatim(db: MemoryDb) -> None:
    remember(db, "Acme")
    assert search(db, "  Acme?! ").query == "  Acme?! "


def test_limit_zero_means_ten_and_large_limits_clamp_to_a_hundred(db: MemoryDb) -> None:
    for index in range(105):
        remember(db, f"note {index}")
    assert len(search(db, "note", limit=0).items) == 10
    assert len(search(db, "note").items) == 10
    assert len(search(db, "note", limit=7).items) == 7
    assert len(search(db, "note", limit=1000).items) == 100


def test_matching_is_case_and_diacritic_insensitive_without_prefixes(db: MemoryDb) -> None:
    stored = remember(db, "Zoë likes café crème")
    assert memories(search(db, "CAFE")) == [("source", stored.source_id)]
    assert memories(search(db, "zoe")) == [("source", stored.source_id)]
    assert search(db, "caf").items == []


def test_phrase_matches_rank_before_token_matches(db: MemoryDb) -> None:
    # The token-only match is shorter (better bm25) but phrase matches come first.
    token_only = remember(db, "Apollo project")
    phrase = remember(db, "the Apollo project team met on Thursday")
    other = remember(db, "project Apollo sync moved to Friday afternoon")
    pack = search(db, "project Apollo")
    assert memories(pack)[0] == ("source", other.source_id)
    assert set(memories(pack)) == {
        ("source", other.source_id),
        ("source", phrase.source_id),
        ("source", token_only.source_id),
    }


def test_linked_supporting_capture_is_returned_as_the_claim(db: MemoryDb) -> None:
    claim = employer(db, "Acme")
    raw = remember(db, "Badge photo from the Zeppelin office", at=5)
    link(db, claim.claim_id or "", raw.evidence_id)
    pack = search(db, "Zeppelin")
    assert memories(pack) == [("claim", claim.claim_id)]
    # The citation is the smallest live supporting evidence id, not the matching one.
    assert pack.items[0].evidence_ids == [min(claim.evidence_id, raw.evidence_id)]
    assert pack.items[0].excerpt == "Sam employer Acme"
    # Both captures match "Sam"... only via the claim, never twice.
    both = search(db, "works Zeppelin")
    assert memories(both) == [("claim", claim.claim_id)]


def test_contradicting_capture_stays_retrievable_as_raw(db: MemoryDb) -> None:
    claim = employer(db, "Acme")
    raw = remember(db, "Sam's contract lists Initech as the employer", at=20)
    link(db, claim.claim_id or "", raw.evidence_id, "contradicts")
    assert memories(search(db, "Initech")) == [("source", raw.source_id)]
    assert memories(search(db, "Acme")) == [("claim", claim.claim_id)]


def test_duplicate_rows_consume_candidate_slots_before_deduplication(db: MemoryDb) -> None:
    # limit 1 -> candidate_limit 4: four short captures supporting one claim fill every slot
    # of the phrase query, so the longer raw capture is never a candidate.
    claim = remember(db, "alpha", claim=("Sam", "likes", "alpha"))
    for _ in range(4):
        link(db, claim.claim_id or "", remember(db, "alpha").evidence_id)
    raw = remember(db, "alpha beta gamma delta epsilon zeta eta theta")
    with db.atomic(write=False) as conn:
        assert lexical_ranking(conn, "a", "sam", "alpha", None, 4) == [("claim", claim.claim_id)]
        assert lexical_ranking(conn, "a", "sam", "alpha", None, 24) == [
            ("claim", claim.claim_id),
            ("source", raw.source_id),
        ]
    assert memories(search(db, "alpha", limit=1)) == [("claim", claim.claim_id)]


def test_correction_hides_the_old_capture_and_as_of_shows_the_old_claim(db: MemoryDb) -> None:
    old = employer(db, "Acme")
    fixed = correct(db, old.claim_id or "", "Beta", valid_at=15, recorded_at=20)
    assert search(db, "Acme").items == []
    current = search(db, "Beta")
    assert memories(current) == [("claim", fixed.claim_id)]
    assert current.items[0].evidence_ids == [fixed.evidence_id]

    before = search(db, "Acme", as_of={"valid_at": 12, "recorded_at": 15})
    assert memories(before) == [("claim", old.claim_id)]
    assert before.items[0].excerpt == "Sam employer Acme"
    assert before.items[0].evidence_ids == [old.evidence_id]
    # At that time the correction did not exist yet.
    assert search(db, "Beta", as_of={"valid_at": 12, "recorded_at": 15}).items == []
    # A correction closes both intervals of the old claim: once recorded time passes 20 it is
    # no longer believed for any valid time, so its capture falls back to a raw source.
    assert memories(search(db, "Acme", as_of={"valid_at": 12, "recorded_at": 25})) == [
        ("source", old.source_id)
    ]
    assert memories(search(db, "Beta", as_of={"valid_at": 16, "recorded_at": 25})) == [
        ("claim", fixed.claim_id)
    ]
    with pytest.raises(NotFound):
        get(db, "claim", old.claim_id or "")
    # get never substitutes: the old capture is still a live source.
    assert get(db, "source", old.source_id).excerpt == "Sam works at Acme"


def test_as_of_returns_a_raw_source_whose_claim_is_not_yet_valid(db: MemoryDb) -> None:
    memory = remember(
        db, "Sam starts at Globex", claim=("Sam", "employer", "Globex"), valid_from=50
    )
    assert memories(search(db, "Globex", as_of={"valid_at": 20, "recorded_at": 20})) == [
        ("source", memory.source_id)
    ]
    assert memories(search(db, "Globex", as_of={"valid_at": 60, "recorded_at": 20})) == [
        ("claim", memory.claim_id)
    ]
    # Not captured or recorded yet: invisible.
    assert search(db, "Globex", as_of={"valid_at": 5, "recorded_at": 20}).items == []
    assert search(db, "Globex", as_of={"valid_at": 60, "recorded_at": 9}).items == []


def test_as_of_never_shows_deleted_or_retracted_memory(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    raw = remember(db, "Acme badge photo")
    delete(db, memory.source_id, at=30)
    delete(db, raw.source_id, at=30)
    status = db.conn.execute("SELECT status FROM claims WHERE id = ?", (memory.claim_id,))
    assert status.fetchone() == ("retracted",)
    assert search(db, "Acme", as_of={"valid_at": 20, "recorded_at": 20}).items == []


def test_as_of_ignores_the_query_embedding_entirely(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    invalid = {"vector": [float("nan")], "model": " ", "version": ""}
    pack = search(db, "Acme", as_of={"valid_at": 10, "recorded_at": 10}, query_embedding=invalid)
    assert memories(pack) == [("claim", memory.claim_id)]


def test_query_embedding_is_validated_without_as_of(db: MemoryDb) -> None:
    employer(db, "Acme")
    with pytest.raises(InvalidRequest, match=r"^query embedding model must not be empty$"):
        search(db, "Acme", query_embedding={"vector": [1.0], "model": " ", "version": "1"})


def test_lexical_search_does_not_import_numpy(tmp_path: Any) -> None:
    script = f"""
import sys
from zkr import models as m
from zkr.db import MemoryDb
db = MemoryDb({str(tmp_path / "n.db")!r})
db.remember(m.RememberRequest.model_validate({{"tenant_id": "a", "person_id": "p",
    "kind": "conversation", "text": "Acme", "captured_at": 1, "recorded_at": 1}}))
pack = db.search(m.SearchRequest(tenant_id="a", person_id="p", query="Acme"))
assert len(pack.items) == 1
print("numpy" in sys.modules)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# ----------------------------------------------------------------------------- get (§5.6)


def test_get_returns_live_targets_with_full_relevance(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    claim = get(db, "claim", memory.claim_id or "")
    assert claim.model_dump(mode="json") == {
        "memory": {"kind": "claim", "id": memory.claim_id},
        "excerpt": "Sam employer Acme",
        "relevance_basis_points": 10000,
        "evidence_ids": [memory.evidence_id],
    }
    source = get(db, "source", memory.source_id)
    assert (source.excerpt, source.evidence_ids) == ("Sam works at Acme", [memory.evidence_id])
    assert source.memory.kind == m.MemoryKind.source
    evidence = get(db, "evidence", memory.evidence_id)
    assert (evidence.excerpt, evidence.evidence_ids) == ("Sam works at Acme", [memory.evidence_id])
    assert evidence.relevance_basis_points == 10000


def test_get_is_scoped_and_not_found_for_unknown_ids(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    for kind, target_id in (
        ("claim", memory.claim_id or ""),
        ("source", memory.source_id),
        ("evidence", memory.evidence_id),
    ):
        with pytest.raises(NotFound, match=r"^record not found$"):
            get(db, kind, target_id, tenant="b")
        with pytest.raises(NotFound):
            get(db, kind, "0" * 32)
    # A source id is not an evidence id.
    with pytest.raises(NotFound):
        get(db, "evidence", memory.source_id)
    with pytest.raises(InvalidRequest, match=r"^person_id must not be empty$"):
        db.get(
            m.GetRequest.model_validate(
                {"tenant_id": "a", "person_id": "", "target": {"kind": "claim", "id": "x"}}
            )
        )


def test_get_claim_cites_the_smallest_live_supporting_evidence(db: MemoryDb) -> None:
    memory = employer(db, "Acme")
    extra = [remember(db, f"extra support {index}") for index in range(3)]
    for stored in extra:
        link(db, memory.claim_id or "", stored.evidence_id)
    live = sorted([memory.evidence_id] + [stored.evidence_id for stored in extra])
    assert get(db, "claim", memory.claim_id or "").evidence_ids == [live[0]]
    # Deleting the smallest one moves the citation to the next live one.
    smallest = next(s for s in [memory, *extra] if s.evidence_id == live[0])
    delete(db, smallest.source_id)
    assert get(db, "claim", memory.claim_id or "").evidence_ids == [live[1]]
    with pytest.raises(NotFound):
        get(db, "evidence", live[0])
