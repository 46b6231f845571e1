"""The recall index's backlog (schema 15, issue 27.2): ``remember`` defers its recall rows, and
every reader and every other writer finds the index exact all the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zkr.store.recall_backlog
from zkr import models as m
from zkr.db import MemoryDb
from zkr.store import schema
from zkr.store.recall_index import build_recall_index

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def remember(db: MemoryDb, text: str, at: int = 100) -> m.RememberResult:
    payload = {**SCOPE, "kind": "conversation", "text": text, "captured_at": at, "recorded_at": at}
    return db.remember(m.RememberRequest.model_validate(payload))


def search(db: MemoryDb, query: str, **extra: Any) -> list[str]:
    request = {**SCOPE, "query": query, "ranking": "recall", **extra}
    return [item.excerpt for item in db.search(m.SearchRequest.model_validate(request)).items]


def backlog(db: MemoryDb) -> list[int]:
    return [row[0] for row in db.conn.execute("SELECT source_rowid FROM recall_backlog")]


def indexed(db: MemoryDb) -> list[tuple[Any, ...]]:
    return db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall()


def test_remember_defers_and_the_next_search_finds_it() -> None:
    with MemoryDb(":memory:") as db:
        remember(db, "Caroline works as a nurse")
        # Deferred: no recall row yet, the capture waits in the backlog.
        assert indexed(db) == []
        assert len(backlog(db)) == 1
        # A recall search (stemmed: "nurses") applies the backlog first.
        assert search(db, "nurses") == ["Caroline works as a nurse"]
        assert backlog(db) == []
        assert [row[1] for row in indexed(db)] == ["Caroline works as a nurse"]


def test_an_as_of_search_applies_the_backlog_too() -> None:
    with MemoryDb(":memory:") as db:
        remember(db, "the nurse shift starts at nine", at=100)
        assert search(db, "nurses", as_of={"valid_at": 150, "recorded_at": 150}) == [
            "the nurse shift starts at nine"
        ]
        assert backlog(db) == []


def test_the_backlog_is_applied_every_flush_at_remembers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zkr.store.recall_backlog, "FLUSH_AT", 3)
    with MemoryDb(":memory:") as db:
        for index in range(5):
            remember(db, f"turn {index}", at=100 + index)
            # Never more than FLUSH_AT - 1 captures wait.
            assert len(backlog(db)) == (index + 1) % 3
        assert len(indexed(db)) == 3


def test_another_connection_reads_an_exact_index(tmp_path: Path) -> None:
    """A second process (here a second handle) searching the file applies what the first one's
    remembers deferred."""
    path = tmp_path / "shared.db"
    with MemoryDb(path) as writer, MemoryDb(path) as reader:
        remember(writer, "we adopted a greyhound called Pixel")
        assert search(reader, "greyhounds") == ["we adopted a greyhound called Pixel"]
        assert backlog(writer) == []


@pytest.mark.parametrize("operation", ["delete", "forget"])
def test_a_capture_removed_while_waiting_leaves_no_word_behind(operation: str) -> None:
    """Deleting or forgetting a capture still in the backlog: the mutation applies the backlog
    first, then removes the capture's row and its words from its neighbours' context."""
    with MemoryDb(":memory:") as db:
        remember(db, "alpha turn", at=100)
        secret = remember(db, "zebracorn secret", at=101)
        remember(db, "gamma turn", at=102)
        assert len(backlog(db)) == 3
        target = {**SCOPE, "source_id": secret.source_id}
        if operation == "delete":
            db.run("delete", {**target, "deleted_at": 200})
        else:
            db.run("forget", {**target, "erased_at": 200})
        assert backlog(db) == []
        rows = indexed(db)
        assert len(rows) == 2
        assert not [row for row in rows if "zebracorn" in " ".join(row[1:])]
        assert search(db, "zebracorn") == []


def test_a_version_14_file_gets_the_backlog_table_on_open(tmp_path: Path) -> None:
    """Schema 15 adds only ``recall_backlog``: a schema-14 file (every capture indexed as it was
    stored) opens with an empty backlog and its recall rows unchanged, and then defers."""
    path = tmp_path / "v14.db"
    with MemoryDb(path) as db:
        remember(db, "Caroline works as a nurse")
        db.apply_recall_backlog()
        expected = indexed(db)
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE recall_backlog")
    conn.execute("PRAGMA user_version = 14")
    conn.commit()
    conn.close()
    with MemoryDb(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 16
        assert indexed(db) == expected
        assert backlog(db) == []
        remember(db, "she likes night shifts", at=101)
        assert len(backlog(db)) == 1
        # The new capture first; the old one after it through its context (its new neighbour).
        assert search(db, "shift") == ["she likes night shifts", "Caroline works as a nurse"]


_step = st.one_of(
    st.tuples(st.just("remember"), st.integers(-3, 5)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("search"), st.just(0)),
)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_step, min_size=1, max_size=30), flush_at=st.sampled_from([1, 2, 5, 64]))
def test_the_index_after_any_steps_equals_a_rebuild(
    steps: list[tuple[str, int]], flush_at: int
) -> None:
    """Remembers (some back in time), deletes and searches in any order, the backlog applied
    every *flush_at* remembers: once applied, the index is the one a full rebuild writes."""
    saved = zkr.store.recall_backlog.FLUSH_AT
    zkr.store.recall_backlog.FLUSH_AT = flush_at
    try:
        with MemoryDb(":memory:") as db:
            live: list[str] = []
            at = 10_000
            for index, (step, value) in enumerate(steps):
                if step == "remember":
                    at += value * 600
                    live.append(remember(db, f"turn w{index}x", at=at).source_id)
                elif step == "delete" and live:
                    source_id = live.pop(value % len(live))
                    db.run("delete", {**SCOPE, "source_id": source_id, "deleted_at": 99_999})
                elif step == "search":
                    search(db, "turn")
                    assert backlog(db) == []
            db.apply_recall_backlog()
            kept = indexed(db)
            with db.atomic() as conn:
                build_recall_index(conn)
            assert indexed(db) == kept
    finally:
        zkr.store.recall_backlog.FLUSH_AT = saved


def test_a_handle_that_cannot_write_searches_without_the_backlog(tmp_path: Path) -> None:
    """A file this process cannot write (here: ``query_only``) is searched as it is, instead of
    failing: the deferred capture waits for a writer, which then finds it."""
    with MemoryDb(tmp_path / "ro.db") as db:
        remember(db, "alpha turn", at=100)
        db.apply_recall_backlog()
        remember(db, "bravo turn", at=100_000)
        db.conn.execute("PRAGMA query_only = ON")
        assert search(db, "turn") == ["alpha turn"]
        assert len(backlog(db)) == 1
        db.conn.execute("PRAGMA query_only = OFF")
        assert sorted(search(db, "turn")) == ["alpha turn", "bravo turn"]


def test_closing_applies_the_backlog(tmp_path: Path) -> None:
    path = tmp_path / "closed.db"
    with MemoryDb(path) as db:
        remember(db, "alpha turn")
        assert len(backlog(db)) == 1
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM recall_backlog").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM recall_fts").fetchone() == (1,)
    conn.close()


def test_a_recall_search_inside_a_callers_read_transaction_applies_the_backlog() -> None:
    with MemoryDb(":memory:") as db:
        remember(db, "Caroline works as a nurse")
        with db.atomic(write=False):
            assert search(db, "nurses") == ["Caroline works as a nurse"]
        assert backlog(db) == []
