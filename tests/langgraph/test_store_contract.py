"""LangGraph's documented ``BaseStore`` contract, every method, sync and async.

langgraph 1.2 ships no conformance suite for stores (``langgraph.store`` holds only ``base`` and
``memory``), so these tests state the contract of ``langgraph.store.base.BaseStore``'s docstrings:
``get``/``put``/``delete``/``search``/``list_namespaces`` and their ``a``-prefixed coroutines, and
``batch``/``abatch`` answering each operation at its position.
"""

from __future__ import annotations

import asyncio
import math
from datetime import datetime
from typing import Any

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from zkr import MemoryDb
from zkr_langgraph import ZkrItem, ZkrSearchItem, ZkrStore

from .conftest import TENANT, Call, Clock

NS = ("ana", "memories")
VALUE: dict[str, Any] = {
    "text": "Ana likes ramen",
    "nested": {"list": [1, 2.5, -0.0, None, True, "é"], "empty": {}},
    "big": 2**70,
    "float": 0.1 + 0.2,
    "unicode": "日本語 \u0301 \U0001f600",
}


def _sequence(db: MemoryDb, person: str) -> int:
    return int(db.run("sequence", {"tenant_id": TENANT, "person_id": person}).sequence)


def test_put_then_get_gives_the_value_back_exactly(store: ZkrStore, call: Call) -> None:
    call(store, "put", NS, "lunch", VALUE)
    item = call(store, "get", NS, "lunch")
    assert isinstance(item, ZkrItem)
    assert item.value == VALUE
    assert math.copysign(1, item.value["nested"]["list"][2]) == -1  # -0.0 stays negative
    assert list(item.value) == list(VALUE)  # key order kept
    assert (item.namespace, item.key) == (NS, "lunch")
    assert isinstance(item.created_at, datetime) and item.created_at.tzinfo is not None
    assert item.created_at == item.updated_at


def test_get_of_a_missing_key_or_another_namespace_is_none(store: ZkrStore, call: Call) -> None:
    call(store, "put", NS, "lunch", {"a": 1})
    assert call(store, "get", NS, "dinner") is None
    assert call(store, "get", ("ana", "other"), "lunch") is None
    assert call(store, "get", ("ana",), "lunch") is None
    assert call(store, "get", ("bo", "memories"), "lunch") is None
    assert call(store, "get", ("ana", "memories", "deeper"), "lunch") is None


def test_another_tenants_store_never_sees_the_items(
    store: ZkrStore, memory_db: MemoryDb, clock: Clock, call: Call
) -> None:
    call(store, "put", NS, "lunch", {"a": 1})
    other = ZkrStore(memory_db, tenant_id="other", clock=clock)
    assert call(other, "get", NS, "lunch") is None
    assert call(other, "search", ("ana",)) == []
    assert call(other, "search", ("ana",), query="a") == []
    assert call(other, "list_namespaces") == []


def test_put_over_a_key_replaces_its_value_and_keeps_its_creation_time(
    store: ZkrStore, call: Call
) -> None:
    call(store, "put", NS, "lunch", {"likes": "ramen"})
    first = call(store, "get", NS, "lunch")
    call(store, "put", NS, "lunch", {"likes": "udon"})
    second = call(store, "get", NS, "lunch")
    assert second.value == {"likes": "udon"}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert second.citation.claim_id != first.citation.claim_id


def test_putting_the_same_value_again_changes_nothing(
    store: ZkrStore, memory_db: MemoryDb, call: Call
) -> None:
    call(store, "put", NS, "lunch", {"likes": "ramen"})
    before = _sequence(memory_db, "ana")
    call(store, "put", NS, "lunch", {"likes": "ramen"})
    assert _sequence(memory_db, "ana") == before


def test_delete_removes_the_item_and_a_new_put_starts_it_again(store: ZkrStore, call: Call) -> None:
    call(store, "put", NS, "lunch", {"likes": "ramen"})
    call(store, "put", NS, "lunch", {"likes": "udon"})
    first = call(store, "get", NS, "lunch")
    call(store, "delete", NS, "lunch")
    assert call(store, "get", NS, "lunch") is None
    assert call(store, "search", ("ana",)) == []
    assert call(store, "search", ("ana",), query="udon ramen") == []
    call(store, "delete", NS, "lunch")  # deleting what is gone is no error
    call(store, "put", NS, "lunch", {"likes": "soba"})
    again = call(store, "get", NS, "lunch")
    assert again.value == {"likes": "soba"}
    assert again.created_at > first.updated_at
    call(store, "delete", NS, "lunch")
    call(store, "put", NS, "lunch", {"likes": "pho"})  # a third incarnation
    assert call(store, "get", NS, "lunch").value == {"likes": "pho"}


def test_search_with_a_query_finds_the_relevant_item_with_its_citation(
    store: ZkrStore, memory_db: MemoryDb, call: Call
) -> None:
    call(store, "put", NS, "lunch", {"food": "Ana loves spicy ramen noodles"})
    call(store, "put", NS, "pet", {"animal": "Ana has a grey cat called Miso"})
    call(store, "put", ("ana", "work"), "job", {"employer": "Ana works at Acme as a baker"})
    hits = call(store, "search", ("ana",), query="which cat does Ana have?")
    assert hits and isinstance(hits[0], ZkrSearchItem)
    assert (hits[0].namespace, hits[0].key) == (NS, "pet")
    assert hits[0].value == {"animal": "Ana has a grey cat called Miso"}
    assert all(isinstance(hit.score, float) and 0 <= hit.score <= 1 for hit in hits)
    # The citation is live evidence quoting the stored value.
    (evidence_id,) = hits[0].citation.evidence_ids
    cited = memory_db.run(
        "get",
        {
            "tenant_id": TENANT,
            "person_id": "ana",
            "target": {"kind": "evidence", "id": evidence_id},
        },
    )
    assert "Miso" in cited.excerpt
    assert hits[0].dict()["citation"]["claim_id"] == hits[0].citation.claim_id
    # The prefix narrows the search; the person's other items stay out.
    work = call(store, "search", ("ana", "work"), query="Ana")
    assert [(h.namespace, h.key) for h in work] == [(("ana", "work"), "job")]
    assert call(store, "search", ("bo",), query="cat") == []


def test_search_without_a_query_lists_newest_first_with_filter_limit_offset(
    store: ZkrStore, call: Call
) -> None:
    for index in range(6):
        call(store, "put", NS, f"k{index}", {"index": index, "even": index % 2 == 0})
    call(store, "put", ("ana", "other"), "x", {"index": 99})
    call(store, "put", NS, "k0", {"index": 0, "even": True, "touched": True})  # now the newest
    listed = call(store, "search", NS)
    assert [h.key for h in listed] == ["k0", "k5", "k4", "k3", "k2", "k1"]
    assert all(h.score is None for h in listed)
    assert [h.key for h in call(store, "search", NS, limit=2, offset=1)] == ["k5", "k4"]
    assert [h.key for h in call(store, "search", NS, filter={"even": True})] == ["k0", "k4", "k2"]
    assert [h.key for h in call(store, "search", NS, filter={"index": {"$gte": 4}})] == [
        "k5",
        "k4",
    ]
    assert [h.key for h in call(store, "search", NS, filter={"index": {"$ne": 0, "$lt": 2}})] == [
        "k1"
    ]
    assert len(call(store, "search", ("ana",))) == 7
    with_query = call(store, "search", NS, query="index", filter={"even": False})
    assert {h.key for h in with_query} <= {"k1", "k3", "k5"}


def test_search_of_the_whole_store_is_refused_with_one_line(store: ZkrStore) -> None:
    with pytest.raises(ValueError, match="namespace prefix starts with the person"):
        store.search(())


def test_list_namespaces_with_prefix_suffix_depth_limit_offset(store: ZkrStore, call: Call) -> None:
    for namespace in [
        ("ana", "a", "b"),
        ("ana", "a", "c", "d"),
        ("ana", "x"),
        ("bo", "a", "b"),
        ("cy",),
    ]:
        call(store, "put", namespace, "k", {"v": 1})
    everything = [
        ("ana", "a", "b"),
        ("ana", "a", "c", "d"),
        ("ana", "x"),
        ("bo", "a", "b"),
        ("cy",),
    ]
    assert call(store, "list_namespaces") == everything
    assert call(store, "list_namespaces", prefix=("ana", "a")) == everything[:2]
    assert call(store, "list_namespaces", suffix=("b",)) == [("ana", "a", "b"), ("bo", "a", "b")]
    assert call(store, "list_namespaces", prefix=("*", "a")) == [
        ("ana", "a", "b"),
        ("ana", "a", "c", "d"),
        ("bo", "a", "b"),
    ]
    assert call(store, "list_namespaces", max_depth=2) == [
        ("ana", "a"),
        ("ana", "x"),
        ("bo", "a"),
        ("cy",),
    ]
    assert call(store, "list_namespaces", limit=2, offset=2) == everything[2:4]
    call(store, "delete", ("cy",), "k")
    assert ("cy",) not in call(store, "list_namespaces")


def test_batch_answers_each_operation_at_its_position(store: ZkrStore) -> None:
    ops = [
        PutOp(NS, "a", {"v": 1}),
        GetOp(NS, "a"),
        PutOp(NS, "a", {"v": 2}),
        GetOp(NS, "a"),
        SearchOp(NS, limit=5),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("ana",)),)),
        PutOp(NS, "a", None),
        GetOp(NS, "a"),
    ]
    for results in (store.batch(ops), asyncio.run(store.abatch(ops))):
        assert results[0] is None and results[2] is None and results[6] is None
        assert results[1].value == {"v": 1} and results[3].value == {"v": 2}
        assert [item.key for item in results[4]] == ["a"]
        assert results[5] == [NS]
        assert results[7] is None


@pytest.mark.parametrize(
    "namespace", [(), ("ana", ""), ("ana", "a.b"), ("langgraph", "x"), ("ana", "a\x00")]
)
def test_bad_namespaces_are_refused_and_change_nothing(
    store: ZkrStore, memory_db: MemoryDb, namespace: tuple[str, ...], call: Call
) -> None:
    with pytest.raises(InvalidNamespaceError):
        call(store, "put", namespace, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(namespace, "k", {"v": 1})]) if namespace else store.put(
            namespace, "k", {"v": 1}
        )
    assert memory_db.run("scopes", {"tenant_id": TENANT}).items == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"x": math.nan}, "which JSON cannot hold"),
        ({"x": {1: "a"}}, "not a string"),
        ({"x": object()}, "not JSON"),
        (["not", "an", "object"], "a value is a JSON object"),
    ],
)
def test_values_json_cannot_hold_are_refused_and_change_nothing(
    store: ZkrStore, memory_db: MemoryDb, value: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        store.put(NS, "k", value)
    assert memory_db.run("scopes", {"tenant_id": TENANT}).items == []


def test_expiring_items_are_not_offered(store: ZkrStore) -> None:
    assert store.supports_ttl is False
    with pytest.raises(NotImplementedError):
        store.put(NS, "k", {"v": 1}, ttl=5)
    with pytest.raises(NotImplementedError):
        store.batch([PutOp(NS, "k", {"v": 1}, ttl=5.0)])


def test_a_store_opened_on_a_path_owns_and_closes_its_database(tmp_path: Any) -> None:
    path = tmp_path / "m.db"
    store = ZkrStore(path, tenant_id=TENANT)
    store.put(NS, "k", {"v": 1})
    store.close()
    with MemoryDb(path) as db:
        assert db.run("scopes", {"tenant_id": TENANT}).items[0].person_id == "ana"
    with pytest.raises(ValueError, match="tenant_id must not be empty"):
        ZkrStore(path, tenant_id=" ")


def test_a_value_larger_than_a_listed_excerpt_reads_back_whole(store: ZkrStore, call: Call) -> None:
    value = {"notes": ["ünïcode line " * 40 for _ in range(30)], "n": 1}  # about 16 KB
    call(store, "put", NS, "long", value)
    assert call(store, "get", NS, "long").value == value
    (listed,) = call(store, "search", NS)
    assert listed.value == value
    (found,) = call(store, "search", NS, query="ünïcode line")
    assert found.value == value


def test_list_namespaces_pages_through_a_tenant_of_many_persons(store: ZkrStore) -> None:
    persons = [f"p{index:03d}" for index in range(130)]  # more than one page of zkr's scopes
    for person in reversed(persons):
        store.put((person, "notes"), "k", {"v": person})
    assert store.list_namespaces(limit=500) == [(person, "notes") for person in persons]
    assert store.list_namespaces(limit=3, offset=120) == [(p, "notes") for p in persons[120:123]]


def test_two_writers_of_one_new_key_make_one_item_and_a_correction(
    store: ZkrStore, memory_db: MemoryDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put(NS, "k", {"v": "first writer"})
    # The second writer read "no such key" just before the first one stored it.
    live = ZkrStore._live
    reads: list[str] = []

    def stale_once(self: ZkrStore, *args: Any) -> Any:
        reads.append("read")
        return None if len(reads) == 1 else live(self, *args)

    monkeypatch.setattr(ZkrStore, "_live", stale_once)
    store.put(NS, "k", {"v": "second writer"})
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "second writer"}
    chain = memory_db.run(
        "history", {"tenant_id": TENANT, "person_id": "ana", "claim_id": item.citation.claim_id}
    )
    assert [v.claim.value for v in chain.versions] == [
        '{"v":"first writer"}',
        '{"v":"second writer"}',
    ]


def test_items_survive_langgraphs_checkpoint_serializer(store: ZkrStore) -> None:
    # A node may put store hits into the graph's state; the checkpointer serializes them.
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    store.put(NS, "lunch", {"likes": "ramen"})
    serde = JsonPlusSerializer(
        allowed_msgpack_modules=[
            ("zkr_langgraph.items", "ZkrItem"),
            ("zkr_langgraph.items", "ZkrSearchItem"),
        ]
    )
    for item in [store.get(NS, "lunch"), *store.search(NS), *store.search(NS, query="ramen")]:
        back = serde.loads_typed(serde.dumps_typed(item))
        assert type(back) is type(item)
        assert back == item
        assert back.citation == item.citation
