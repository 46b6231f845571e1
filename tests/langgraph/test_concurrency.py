"""Many writers of one key at once (threads, each with its own connection to the same file, as
separate processes would be): no put fails, no write is lost, one item remains."""

from __future__ import annotations

import threading
from pathlib import Path

from zkr import MemoryDb
from zkr_langgraph import ZkrStore

from .conftest import TENANT

NS = ("ana", "shared")
WRITERS = 6


def test_concurrent_puts_of_one_key_each_become_a_version_of_one_item(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    MemoryDb(path).close()
    barrier = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        store = ZkrStore(path, tenant_id=TENANT)
        try:
            barrier.wait()
            store.put(NS, "k", {"writer": index})
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(index,)) for index in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    with MemoryDb(path) as db:
        store = ZkrStore(db, tenant_id=TENANT)
        item = store.get(NS, "k")
        assert item is not None
        assert [hit.key for hit in store.search(NS)] == ["k"]  # one item, not one per writer
        chain = db.run(
            "history", {"tenant_id": TENANT, "person_id": "ana", "claim_id": item.citation.claim_id}
        )
        written = sorted(v.claim.value for v in chain.versions)
        assert written == sorted(f'{{"writer":{index}}}' for index in range(WRITERS))
        assert chain.versions[-1].claim.value == f'{{"writer":{item.value["writer"]}}}'
