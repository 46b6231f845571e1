"""What the store does to zkr's memory: an overwrite is a correction (both versions in ``history``),
a delete a tombstone (or, with ``on_delete="forget"``, an erasure), values kept exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr import MemoryDb
from zkr_langgraph import ZkrStore

from .conftest import TENANT, Clock

NS = ("ana", "memories")
SCOPE = {"tenant_id": TENANT, "person_id": "ana"}


def _history(db: MemoryDb, claim_id: str) -> Any:
    return db.run("history", {**SCOPE, "claim_id": claim_id})


def test_overwriting_a_key_shows_both_versions_in_history(
    store: ZkrStore, memory_db: MemoryDb
) -> None:
    store.put(NS, "lunch", {"likes": "ramen"})
    store.put(NS, "lunch", {"likes": "udon"})
    item = store.get(NS, "lunch")
    assert item is not None
    chain = _history(memory_db, item.citation.claim_id)
    assert [v.claim.value for v in chain.versions] == ['{"likes":"ramen"}', '{"likes":"udon"}']
    assert [v.claim.status for v in chain.versions] == ["superseded", "accepted"]
    assert chain.current_claim_id == item.citation.claim_id
    assert [e.event for e in chain.events].count("corrected") == 1
    first, second = chain.versions
    # Bitemporal: the old version was true and believed until the new one.
    assert first.claim.valid_time.until == second.claim.valid_time.from_
    assert first.claim.recorded_time.until == second.claim.recorded_time.from_
    # The old value is history, never a current item: a search by it finds at most the key's
    # current version (recall lets a corrected claim's old words find what it became).
    found = store.search(("ana",), query="ramen")
    assert [(i.key, i.value) for i in found] in ([], [("lunch", {"likes": "udon"})])


def test_delete_tombstones_every_version_and_keeps_the_history(
    store: ZkrStore, memory_db: MemoryDb
) -> None:
    store.put(NS, "lunch", {"likes": "ramen"})
    store.put(NS, "lunch", {"likes": "udon"})
    store.put(NS, "lunch", {"likes": "soba"})
    item = store.get(NS, "lunch")
    assert item is not None
    store.delete(NS, "lunch")
    chain = _history(memory_db, item.citation.claim_id)
    assert chain.current_claim_id is None
    assert len(chain.versions) == 3
    assert "retracted" in {e.event for e in chain.events}
    assert all(e.deleted_at is not None for v in chain.versions for e in v.evidence)
    # Nothing of it is found any more, even by zkr's own search of raw captures.
    for word in ("ramen", "udon", "soba"):
        found = memory_db.run("search", {**SCOPE, "query": word, "ranking": "recall"})
        assert found.items == [], word


def test_on_delete_forget_erases_the_text_everywhere(memory_db: MemoryDb, clock: Clock) -> None:
    store = ZkrStore(memory_db, tenant_id=TENANT, on_delete="forget", clock=clock)
    store.put(NS, "secret", {"pin": "4711 tangerine"})
    store.put(NS, "secret", {"pin": "0815 kumquat"})
    item = store.get(NS, "secret")
    assert item is not None
    store.delete(NS, "secret")
    assert store.get(NS, "secret") is None
    chain = _history(memory_db, item.citation.claim_id)
    assert {e.event for e in chain.events} >= {"erased"}
    assert all(v.erased_at is not None for v in chain.versions)
    assert all(v.claim.value == "" for v in chain.versions)
    page = memory_db.run("export", {**SCOPE, "export_format": 1, "limit": 100})
    assert "tangerine" not in str(page) and "kumquat" not in str(page)


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    values=st.lists(st.dictionaries(st.text(max_size=8), _json, max_size=5), min_size=1, max_size=3)
)
def test_any_json_value_reads_back_exactly_after_every_put(
    store: ZkrStore, values: list[dict[str, Any]]
) -> None:
    for value in values:
        store.put(NS, "roundtrip", value)
        item = store.get(NS, "roundtrip")
        assert item is not None
        assert item.value == value
        assert repr(item.value) == repr(value)  # same key order, same float spelling, -0.0 kept
        (listed,) = [h for h in store.search(NS) if h.key == "roundtrip"]
        assert repr(listed.value) == repr(value)


def test_puts_within_one_second_still_record_every_version_in_order(memory_db: MemoryDb) -> None:
    store = ZkrStore(memory_db, tenant_id=TENANT, clock=lambda: 1_800_000_000)
    for value in ("one", "two", "three"):
        store.put(NS, "k", {"v": value})
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "three"}
    chain = _history(memory_db, item.citation.claim_id)
    assert [v.claim.value for v in chain.versions] == [
        '{"v":"one"}',
        '{"v":"two"}',
        '{"v":"three"}',
    ]
    recorded = [v.claim.recorded_time.from_ for v in chain.versions]
    assert recorded == [1_800_000_000, 1_800_000_001, 1_800_000_002]


def test_a_person_correcting_an_item_in_zkr_is_what_the_graph_reads_next(
    store: ZkrStore, memory_db: MemoryDb, clock: Clock
) -> None:
    store.put(("ana", "profile"), "city", {"lives_in": "Lisbon"})
    item = store.get(("ana", "profile"), "city")
    assert item is not None
    # The person fixes it on their page (zkr-web) or with `zkr correct`, typing plain text.
    memory_db.run(
        "correct",
        {
            **SCOPE,
            "claim_id": item.citation.claim_id,
            "text": "No, I moved to Porto",
            "value": "Porto",
            "valid_at": clock(),
            "recorded_at": clock(),
        },
    )
    corrected = store.get(("ana", "profile"), "city")
    assert corrected is not None and corrected.value == {"text": "Porto"}
    assert [hit.value for hit in store.search(("ana",), query="Porto")] == [{"text": "Porto"}]
    assert [hit.value for hit in store.search(("ana",))] == [{"text": "Porto"}]
    store.put(("ana", "profile"), "city", {"lives_in": "Porto"})  # the graph writes it its way
    chain = _history(memory_db, item.citation.claim_id)
    assert [v.claim.value for v in chain.versions] == [
        '{"lives_in":"Lisbon"}',
        "Porto",
        '{"lives_in":"Porto"}',
    ]
