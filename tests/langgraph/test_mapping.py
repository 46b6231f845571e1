"""The namespace <-> subject mapping is exact both ways, and only the store's subjects are items."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zkr_langgraph import ZkrStore, mapping

_labels = st.text(alphabet=st.sampled_from('a/%2F5 é_-:#"[]'), min_size=1, max_size=6)


@given(path=st.lists(_labels, max_size=4).map(tuple), key=st.text(min_size=1, max_size=5))
def test_a_path_reads_back_from_its_subject_and_keys_never_share_a_prefix(
    path: tuple[str, ...], key: str
) -> None:
    subject = mapping.subject_of(path)
    assert mapping.path_of(subject) == path
    assert mapping.ingestion_key(path, key, 3).startswith(mapping.key_prefix(path, key))
    # Another item's keys never start with this item's prefix (the JSON array closes first).
    for other in [(*path, key), path[:-1]]:
        assert not mapping.ingestion_key(other, key + "x", 1).startswith(
            mapping.key_prefix(path, key)
        )


def test_subjects_the_store_did_not_write_are_not_items() -> None:
    for subject in ["Sam", "langgraph", "langgraph:a//b", "langgraph:a/", "langgraph:%2f", "x:a"]:
        assert mapping.path_of(subject) is None, subject
    assert mapping.path_of("langgraph:") == ()
    assert mapping.path_of("langgraph:a%2Fb/c") == ("a/b", "c")


def test_labels_with_slashes_and_percents_round_trip_through_the_store(store: ZkrStore) -> None:
    namespace = ("ana", "a/b", "100%", "%2F")
    store.put(namespace, "k", {"v": 1})
    store.put(("ana", "a"), "k", {"v": 2})
    assert store.get(namespace, "k") is not None
    assert store.get(("ana", "a", "b"), "k") is None
    assert store.list_namespaces(prefix=("ana",)) == [("ana", "a"), namespace]
    assert [item.namespace for item in store.search(("ana", "a/b"))] == [namespace]
