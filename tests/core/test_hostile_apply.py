"""``apply`` from a hostile peer (issue 18, defects 1, 3, 4 and 9).

A page may come from any replica, so nothing in it may exhaust the local commit numbering, reach
another scope's rows, reveal whether an id exists elsewhere, or slip through with loose types.
Every test here failed before the fix it guards.
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import table_snapshot
from zkr import operations
from zkr.db import MemoryDb
from zkr.errors import ZkrError

I64_MAX = 2**63 - 1


def run(db: MemoryDb, command: str, tenant: str, person: str, **payload: Any) -> Any:
    return operations.run(db, command, {"tenant_id": tenant, "person_id": person, **payload})


def remember(db: MemoryDb, tenant: str, person: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = run(
        db, "remember", tenant, person, kind="conversation", text=text, captured_at=1,
        recorded_at=1,
    )  # fmt: skip
    return result


def first_page(db: MemoryDb, tenant: str, person: str) -> dict[str, Any]:
    page: dict[str, Any] = run(db, "export", tenant, person, export_format=1, limit=100)
    return page


def apply(db: MemoryDb, tenant: str, person: str, page: dict[str, Any]) -> Any:
    return run(
        db, "apply", tenant, person, upstream="peer", after_commit=0, after_event_index=-1,
        page=page,
    )  # fmt: skip


@pytest.fixture
def replica(tmp_path: Path) -> Any:
    with MemoryDb(tmp_path / "replica.db") as db:
        yield db


@pytest.fixture
def peer(tmp_path: Path) -> Any:
    with MemoryDb(tmp_path / "peer.db") as db:
        remember(db, "mallory", "m", "a page from a hostile peer")
        yield db


# ----------------------------------------------------------------------------------------------
# Defect 1: the local commit counter
# ----------------------------------------------------------------------------------------------


def test_a_huge_upstream_sequence_never_reaches_the_local_counter(
    replica: MemoryDb, peer: MemoryDb
) -> None:
    page = first_page(peer, "mallory", "m")
    page["commits"][0]["sequence"] = I64_MAX
    page["high_water_mark"] = page["next_after_commit"] = I64_MAX
    result = apply(replica, "mallory", "m", page)
    assert result["applied_commits"] == 1 and result["applied_commit"] == I64_MAX
    # Every write of every scope still works, and the local numbering stayed local.
    for tenant in ("acme", "mallory"):
        remember(replica, tenant, "sam", f"{tenant} still writes")
    (top,) = replica.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()
    assert top == 3
    (counter,) = replica.conn.execute(
        "SELECT seq FROM sqlite_sequence WHERE name = 'memory_commits'"
    ).fetchone()
    assert counter == 3


@pytest.mark.parametrize("sequence", [2**63, 2**64, 0, -1])
def test_an_out_of_range_sequence_is_refused_cleanly(
    replica: MemoryDb, peer: MemoryDb, sequence: int
) -> None:
    page = first_page(peer, "mallory", "m")
    page["commits"][0]["sequence"] = sequence
    before = table_snapshot(replica)
    with pytest.raises(ZkrError, match=r"page\.commits\.0\.sequence"):
        apply(replica, "mallory", "m", page)
    assert table_snapshot(replica) == before


def test_a_failed_statement_reports_its_real_cause(replica: MemoryDb) -> None:
    # A file whose counter is at its limit (as a zkr before this fix could leave it): the error
    # must be SQLite's "full", not the "cannot rollback" of a transaction SQLite already ended.
    remember(replica, "acme", "sam", "first")
    replica.conn.execute(
        "UPDATE sqlite_sequence SET seq = ? WHERE name = 'memory_commits'", (I64_MAX,)
    )
    with pytest.raises(sqlite3.OperationalError, match="full"):
        remember(replica, "acme", "sam", "second")
    assert not replica.conn.in_transaction
    assert replica.conn.execute("SELECT count(*) FROM sources").fetchone() == (1,)


# ----------------------------------------------------------------------------------------------
# Defect 3: embeddings of another scope
# ----------------------------------------------------------------------------------------------


def test_a_deletion_record_never_removes_another_scopes_embeddings(replica: MemoryDb) -> None:
    victim = remember(replica, "victim", "v", "the victim's own memory")
    run(
        replica, "embed", "victim", "v", target={"kind": "source", "id": victim["source_id"]},
        embedding={"vector": [1.0, 0.0], "model": "m", "version": "1",
                   "input_hash": _hash("the victim's own memory"), "normalization": "none",
                   "distance": "cosine"},
    )  # fmt: skip
    page = {
        "export_format": 1, "database_schema_version": 8, "high_water_mark": 1,
        "next_after_commit": 1, "next_after_event_index": 0, "complete": True,
        "commits": [{"sequence": 1, "recorded_at": 5, "event_count": 1, "first_event_index": 0,
                     "records": [{"kind": "deletion", "record": {
                         "tenant_id": "mallory", "person_id": "m",
                         "target": {"kind": "source", "id": victim["source_id"]},
                         "deleted_at": 5}}]}],
    }  # fmt: skip
    apply(replica, "mallory", "m", page)
    assert replica.conn.execute("SELECT count(*) FROM embeddings").fetchone() == (1,)


def _hash(text: str) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------------------------
# Defect 4: an id of another scope looks like any record that cannot be applied
# ----------------------------------------------------------------------------------------------


def test_an_id_of_another_scope_is_not_revealed(replica: MemoryDb, peer: MemoryDb) -> None:
    victim = remember(replica, "victim", "v", "the victim's own memory")
    page = first_page(peer, "mallory", "m")
    taken = copy.deepcopy(page)
    taken["commits"][0]["records"][0]["record"]["source"]["id"] = victim["source_id"]
    with pytest.raises(ZkrError) as taken_error:
        apply(replica, "mallory", "m", taken)
    assert "scope" not in str(taken_error.value) and "victim" not in str(taken_error.value)
    # Evidence that points at a source the page never brought (missing here) gets the same answer
    # as evidence that points at the victim's source.
    dangling = copy.deepcopy(page)
    records = dangling["commits"][0]["records"]
    evidence = next(r for r in records if r["kind"] == "evidence")
    for source_id in ("0" * 32, victim["source_id"]):
        evidence["record"]["evidence"]["source_id"] = source_id
        with pytest.raises(ZkrError) as error:
            apply(replica, "mallory", "m", dangling)
        assert "another scope" not in str(error.value)
        assert str(error.value) == str(taken_error.value).replace(
            victim["source_id"], evidence["record"]["evidence"]["id"]
        )


# ----------------------------------------------------------------------------------------------
# Defect 9: strict types, as every other command
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("commits", 0, "sequence"), "1"),
        (("commits", 0, "sequence"), 1.0),
        (("commits", 0, "event_count"), True),
        (("complete",), "yes"),
        (("export_format",), 1.0),
        (("commits", 0, "records", 0, "record", "source", "captured_at"), "1"),
        (("commits", 0, "records", 0, "record", "source", "revision"), 8.0),
        (("commits", 0, "records", 0, "record", "source", "content"), 7),
        (("commits", 0, "records", 0, "record", "source", "deleted_at"), 2**63),
    ],
)
def test_loose_types_in_a_page_are_refused(
    replica: MemoryDb, peer: MemoryDb, path: tuple[Any, ...], value: Any
) -> None:
    page = first_page(peer, "mallory", "m")
    target: Any = page
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    before = table_snapshot(replica)
    with pytest.raises(ZkrError):
        apply(replica, "mallory", "m", page)
    assert table_snapshot(replica) == before
