"""``embed`` and ``projections`` (contract §6): each line of §9.3, the embedding errors of §2.5."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from tests.conftest import CONTRACT_RANKING
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.backlog import MAX_PROJECTION_PAGE_BYTES
from zkr.embeddings.projections import input_hash
from zkr.embeddings.vectors import encode, to_float32
from zkr.errors import EmbeddingError, InvalidRequest, LimitExceeded, NotFound
from zkr.jsonio import canonical_dumps

# zkr 0.2.3's answers: searches that name no ranking use the contract's.
pytestmark = CONTRACT_RANKING

UNIT = [0.6, 0.8]


def states(issues: list[m.ProjectionIssue]) -> dict[tuple[str, str], str]:
    return {(i.input.target.kind.value, i.input.target.id): i.state.value for i in issues}


def embed_request(target: tuple[str, str], text: str, **embedding: Any) -> m.EmbedRequest:
    body: dict[str, Any] = {
        "vector": UNIT,
        "model": "m",
        "version": "v",
        "input_hash": input_hash(text),
        "normalization": "l2",
        "distance": "cosine",
    }
    body.update(embedding)
    ref = {"kind": target[0], "id": target[1]}
    return m.EmbedRequest.model_validate(
        {"tenant_id": "t", "person_id": "p", "target": ref, "embedding": body}
    )


def corrupt(db: MemoryDb, sql: str, *params: Any) -> None:
    """Change stored rows behind zkr's back, from another connection (like a hand edit)."""
    other = sqlite3.connect(db.path)
    try:
        other.execute(sql, params)
        other.commit()
    finally:
        other.close()


# ----------------------------------------------------------------------------------------------
# §9.3, one test per line
# ----------------------------------------------------------------------------------------------


def test_l2_embeddings_require_unit_magnitude(mem: Any) -> None:
    ids = mem.raw("unit please")
    with pytest.raises(EmbeddingError, match=r"^l2-normalized embedding vector must have unit"):
        mem.embed("evidence", ids.evidence_id, [0.1, 0.2], normalization="l2")
    assert mem.db.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0


def test_malformed_l2_projection_is_stale_for_rebuild(mem: Any) -> None:
    ids = mem.raw("Sam works at Acme")
    mem.embed("evidence", ids.evidence_id, UNIT, normalization="l2")
    assert ("evidence", ids.evidence_id) not in states(mem.projections())
    corrupt(mem.db, "UPDATE embeddings SET vector = ?", encode(to_float32([0.5, 0.5])))
    issue = next(i for i in mem.projections() if i.input.target.id == ids.evidence_id)
    assert issue.state is m.ProjectionState.stale
    assert issue.stored_input_hash == input_hash("Sam works at Acme")
    assert issue.stored_target_revision == 1


def test_embedding_lanes_reject_mixed_configuration_and_surface_corruption(mem: Any) -> None:
    first, second = mem.raw("first memory"), mem.raw("second memory")
    mem.embed("evidence", first.evidence_id, [1.0])
    with pytest.raises(EmbeddingError) as caught:
        mem.embed("evidence", second.evidence_id, [1.0, 0.0])
    assert (
        str(caught.value)
        == "embedding configuration conflicts with the existing model/version lane"
    )
    corrupt(mem.db, "UPDATE embeddings SET dimension = 2, distance = '\"manhattan\"'")
    assert states(mem.projections())[("evidence", first.evidence_id)] == "stale"
    pack = mem.search("nothing matches this", [1.0, 0.0])
    assert pack.items == [] and pack.gaps == ["no cited memory matched"]


def test_mixed_legacy_embedding_lane_can_be_repaired(mem: Any) -> None:
    one, two = mem.raw("one dimension"), mem.raw("two dimensions")
    # zkr 0.2.x wrote such lanes before lanes were enforced: insert them as it did (no certificate).
    for ids, text, vector in ((one, "one dimension", [1.0]), (two, "two dimensions", UNIT)):
        mem.db.conn.execute(
            "INSERT INTO embeddings VALUES ('t', 'p', 'evidence', ?, 'm', 'v', ?, ?, '\"none\"',"
            " '\"cosine\"', ?, 1, 5)",
            (ids.evidence_id, len(vector), input_hash(text), encode(to_float32(vector))),
        )
    listed = states(mem.projections(limit=100))
    assert listed[("evidence", two.evidence_id)] == "stale"  # off the lane's minimum (dim 1)
    assert ("evidence", one.evidence_id) not in listed
    mem.embed("evidence", two.evidence_id, [0.5])
    listed = states(mem.projections(limit=100))
    assert ("evidence", two.evidence_id) not in listed
    assert ("evidence", one.evidence_id) not in listed


def test_embedding_projection_is_validated_and_scoped(mem: Any) -> None:
    ids = mem.raw("Sam works at Acme")
    stored = mem.embed("evidence", ids.evidence_id, UNIT, normalization="l2")
    assert stored.dimension == 2
    assert stored.target_revision == 1
    assert stored.input_hash == input_hash("Sam works at Acme")
    assert stored.target.kind is m.MemoryKind.evidence and stored.target.id == ids.evidence_id
    assert stored.created_at > 1_600_000_000  # unixepoch() at write
    with pytest.raises(NotFound, match=r"^record not found$"):
        mem.embed("evidence", ids.evidence_id, UNIT, normalization="l2", tenant="other")


def test_search_fuses_lexical_and_real_dense_ranks_deterministically(mem: Any) -> None:
    claim = mem.claim("Acme")
    raw = mem.raw("a walk in the park")
    mem.embed("source", raw.source_id, [1.0, 0.0])  # dense best, no lexical match
    mem.embed("claim", claim.claim_id, [0.8, 0.6])  # lexical best, dense second
    expected = [("claim", claim.claim_id, 10000), ("source", raw.source_id, 5040)]
    for _ in range(3):
        pack = mem.search("Acme", [1.0, 0.0])
        assert [(i.memory.kind.value, i.memory.id, i.relevance_basis_points) for i in pack.items] \
            == expected  # fmt: skip
        assert pack.items[0].evidence_ids == [claim.evidence_id]
        assert pack.items[1].evidence_ids == [raw.evidence_id]


def test_stale_projections_are_excluded_and_reported_with_current_inputs(mem: Any) -> None:
    ids = mem.claim("Acme")
    other = type(mem)(mem.db, tenant="other")
    theirs = other.claim("Acme")
    for helper, result in ((mem, ids), (other, theirs)):
        for kind, target_id in (
            ("claim", result.claim_id),
            ("evidence", result.evidence_id),
            ("source", result.source_id),
        ):
            helper.embed(kind, target_id, [1.0, 0.0])
    assert mem.projections() == []
    corrupt(
        mem.db, "UPDATE sources SET content = 'Sam moved to Initech', revision = revision + 1"
        " WHERE id = ?", ids.source_id,
    )  # fmt: skip
    corrupt(
        mem.db, "UPDATE evidence SET quote = 'Sam joined Initech' WHERE id = ?", ids.evidence_id
    )
    corrupt(mem.db, "UPDATE claims SET value = 'Initech' WHERE id = ?", ids.claim_id)
    assert mem.search("zzz", [1.0, 0.0]).items == []
    issues = mem.projections()
    assert states(issues) == {
        ("claim", ids.claim_id): "stale",
        ("evidence", ids.evidence_id): "stale",
        ("source", ids.source_id): "stale",
    }
    assert [i.input.target.kind.value for i in issues] == ["claim", "evidence", "source"]
    current = {i.input.target.kind.value: i.input for i in issues}
    assert current["claim"].text == "Sam employer Initech"
    assert current["claim"].input_hash == input_hash("Sam employer Initech")
    assert current["evidence"].text == "Sam joined Initech"
    assert (current["source"].text, current["source"].target_revision) == (
        "Sam moved to Initech",
        2,
    )
    assert all(i.stored_input_hash is not None for i in issues)
    assert len(mem.projections(limit=2)) == 2
    assert other.projections() == []


def test_projection_issues_stay_within_the_page_byte_limit(mem: Any) -> None:
    mem.raw("a" * 600_000)
    mem.raw("b" * 600_000)
    issues = mem.projections(limit=100)
    assert len(issues) == 1  # evidence of the first source; the second would overflow the page
    page = canonical_dumps([i.model_dump(mode="json") for i in issues])
    assert len(page.encode()) <= MAX_PROJECTION_PAGE_BYTES


def test_projection_issues_reject_an_individually_oversized_issue(mem: Any) -> None:
    mem.raw("x" * 1_000_000)
    with pytest.raises(
        LimitExceeded, match=r"^projection issue exceeds the 1000000-byte page limit$"
    ):
        mem.projections()


def test_embedding_rejects_input_hash_for_different_text(mem: Any) -> None:
    ids = mem.raw("Sam works at Acme")
    with pytest.raises(EmbeddingError) as raised:
        mem.embed("evidence", ids.evidence_id, UNIT, text="Sam works at Initech")
    assert str(raised.value) == (
        "embedding input_hash does not match current target input; expected "
        + input_hash("Sam works at Acme")
    )


# ----------------------------------------------------------------------------------------------
# Error strings of §2.5 (embed and projections)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"model": " \t"}, "embedding model must not be empty"),
        ({"version": "\u3000"}, "embedding version must not be empty"),
        ({"input_hash": " "}, "embedding input_hash must not be empty"),
        ({"vector": []}, "embedding vector must contain finite values"),
        ({"vector": [1e39, 0.0]}, "embedding vector must contain finite values"),
        ({"vector": [float("nan"), 1.0]}, "embedding vector must contain finite values"),
        ({"vector": [0.1, 0.2]}, "l2-normalized embedding vector must have unit magnitude"),
    ],
)
def test_embed_refuses_with_the_contract_message(
    db: MemoryDb, mem: Any, override: dict[str, Any], message: str
) -> None:
    ids = mem.raw("text")
    with pytest.raises(EmbeddingError) as raised:
        db.embed(embed_request(("evidence", ids.evidence_id), "text", **override))
    assert str(raised.value) == message
    assert db.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0


def test_embed_checks_the_scope_first(db: MemoryDb) -> None:
    request = embed_request(("evidence", "x"), "text", model=" ")
    blank = request.model_copy(update={"tenant_id": " "})
    with pytest.raises(InvalidRequest, match=r"^tenant_id must not be empty$"):
        db.embed(blank)
    with pytest.raises(InvalidRequest, match=r"^person_id must not be empty$"):
        db.embed(request.model_copy(update={"person_id": ""}))


def test_embed_of_a_missing_or_dead_target_is_not_found(mem: Any) -> None:
    ids = mem.claim("Acme")
    with pytest.raises(NotFound):
        mem.embed("source", "0" * 32, UNIT, text="anything")
    mem.correct(ids.claim_id, "Initech")
    with pytest.raises(NotFound):  # superseded: not current any more
        mem.embed("claim", ids.claim_id, UNIT, text="Sam employer Acme")
    mem.delete(ids.source_id)
    with pytest.raises(NotFound):
        mem.embed("evidence", ids.evidence_id, UNIT, text="Sam works at Acme")


@pytest.mark.parametrize(
    ("model", "version", "message"),
    [
        (" ", "v", "embedding model must not be empty"),
        ("m", "\n", "embedding version must not be empty"),
    ],
)
def test_projections_refuse_blank_names(mem: Any, model: str, version: str, message: str) -> None:
    with pytest.raises(EmbeddingError) as raised:
        mem.projections(model=model, version=version)
    assert str(raised.value) == message


def test_projections_list_missing_work_with_exact_inputs_in_kind_order(mem: Any) -> None:
    ids = mem.claim("Acme")
    issues = mem.projections()
    assert [(i.state.value, i.input.target.kind.value) for i in issues] == [
        ("missing", "claim"),
        ("missing", "evidence"),
        ("missing", "source"),
    ]
    claim = issues[0]
    assert claim.input.text == "Sam employer Acme"
    assert claim.input.target_revision == 10  # a claim's revision is its recorded_from
    assert claim.input.input_hash == input_hash("Sam employer Acme")
    assert (claim.stored_target_revision, claim.stored_input_hash, claim.stored_created_at) == (
        None,
        None,
        None,
    )
    assert json.loads(claim.model_dump_json())["input"]["target"] == {
        "kind": "claim",
        "id": ids.claim_id,
    }


def test_projections_never_list_deleted_or_closed_targets(mem: Any) -> None:
    ids = mem.claim("Acme")
    kept = mem.raw("kept note")
    fixed = mem.correct(ids.claim_id, "Initech")
    mem.delete(kept.source_id)
    listed = states(mem.projections(limit=100))
    assert ("claim", ids.claim_id) not in listed
    assert ("claim", fixed.claim_id) in listed
    assert not any(target_id in (kept.source_id, kept.evidence_id) for _, target_id in listed)


def test_a_lone_target_may_change_its_configuration(mem: Any) -> None:
    ids = mem.raw("alone")
    mem.embed("evidence", ids.evidence_id, [1.0])
    stored = mem.embed("evidence", ids.evidence_id, [1.0, 0.0, 0.0], distance="dot")
    assert stored.dimension == 3
    other = mem.raw("company")
    with pytest.raises(EmbeddingError, match=r"conflicts"):
        mem.embed("evidence", other.evidence_id, [1.0])
    mem.embed("evidence", other.evidence_id, [0.0, 1.0, 0.0], distance="dot")


def test_a_lane_ignores_rows_that_no_longer_count(mem: Any) -> None:
    old = mem.claim("Acme")
    mem.embed("claim", old.claim_id, [1.0])
    mem.correct(old.claim_id, "Initech")  # the old claim's vector no longer counts
    fresh = mem.raw("unrelated")
    mem.embed("evidence", fresh.evidence_id, [1.0, 0.0])  # so a new configuration is allowed


def test_embed_is_an_upsert_without_feed_events(mem: Any) -> None:
    ids = mem.raw("upsert me")
    commits = mem.db.conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0]
    mem.embed("evidence", ids.evidence_id, UNIT, normalization="l2")
    mem.embed("evidence", ids.evidence_id, [0.8, 0.6], normalization="l2")
    rows = mem.db.conn.execute("SELECT vector, normalization, distance FROM embeddings").fetchall()
    assert rows == [(encode(to_float32([0.8, 0.6])), '"l2"', '"cosine"')]
    assert mem.db.conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0] == commits


def test_vectors_are_float32_little_endian_blobs(mem: Any) -> None:
    ids = mem.raw("bytes")
    mem.embed("evidence", ids.evidence_id, [0.1, -2.5, 3.0])
    (blob,) = mem.db.conn.execute("SELECT vector FROM embeddings").fetchone()
    assert blob == b"".join(
        int.to_bytes(bits, 4, "little") for bits in (0x3DCCCCCD, 0xC0200000, 0x40400000)
    )


def test_uncertified_rows_are_checked_in_full(mem: Any) -> None:
    """A row written outside ``embed`` (zkr 0.2.x, raw SQL) counts only if it really is valid."""
    good, bad = mem.raw("good row"), mem.raw("bad row")
    for ids, text, vector in ((good, "good row", [1.0, 0.0]), (bad, "bad row", [float("inf"), 0])):
        mem.db.conn.execute(
            "INSERT INTO embeddings VALUES ('t', 'p', 'evidence', ?, 'm', 'v', 2, ?, '\"none\"',"
            " '\"dot\"', ?, 1, 5)",
            (ids.evidence_id, input_hash(text), encode(to_float32(vector))),
        )
    listed = states(mem.projections(limit=100))
    assert ("evidence", good.evidence_id) not in listed
    assert listed[("evidence", bad.evidence_id)] == "stale"
    pack = mem.search("zzz", [1.0, 0.0])
    assert [i.memory.id for i in pack.items] == [good.evidence_id]


def test_rows_with_an_invalid_target_kind_are_ignored(mem: Any) -> None:
    ids = mem.raw("kind check")
    mem.embed("evidence", ids.evidence_id, [1.0, 0.0])
    conn = mem.db.conn
    conn.execute("DROP TRIGGER embedding_scope_insert")
    conn.execute(
        "INSERT INTO embeddings SELECT tenant_id, person_id, 'review', target_id, model, version,"
        " dimension, input_hash, normalization, distance, vector, target_revision, created_at"
        " FROM embeddings"
    )
    assert mem.projections() == [
        i for i in mem.projections() if i.input.target.kind.value == "source"
    ]
    assert [i.memory.id for i in mem.search("zzz", [1.0, 0.0]).items] == [ids.evidence_id]
