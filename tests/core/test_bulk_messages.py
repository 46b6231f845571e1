"""``remember_messages`` (``zkr import --from``, the framework adapters) writes in bulk (issue 27):
the database it leaves is byte for byte the one a ``remember`` per message leaves.

The reference is the loop as it was before the bulk path, written out here: a message whose key
is stored counts as replayed, any other is one ``remember``. Same id source (a counter), same
clocks, then every table compared as ``iterdump()`` text once FTS5's indexes are checked against
their contents and rebuilt from them (their segment layout depends on when they flushed).
"""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zkr.writes.bulk
import zkr.writes.capture
from zkr.db import MemoryDb
from zkr.writes.messages import Message, MessageCounts, remember_messages, to_remember_request

BASE = 1_700_000_000

messages = st.builds(
    Message,
    key=st.sampled_from([f"chat:c1:m{n}" for n in range(12)]),
    # Other languages too: the recall index stores each text as zkr.store.analysis prepares it
    # (Snowball stems, bigrams for scripts without spaces), in bulk as one by one.
    text=st.sampled_from(
        [
            "hello",
            "lunch at noon",
            "Lisbon trip",
            "日本 ok",
            'a\\b "q"',
            "Ich wohne jetzt in Berlin und arbeite gern",
            "我昨天在北京吃了烤鸭",
            "Мы переехали в Москву весной",
        ]
    ),
    at=st.integers(0, 10).map(lambda step: BASE + step * 3_000 + 0.25),
    source=st.just("chat"),
    conversation_id=st.sampled_from(["c1", "c2"]),
    message_id=st.sampled_from(["m1", "m2"]),
    author=st.sampled_from(["user", "assistant"]),
)


def one_by_one(db: MemoryDb, batch: list[Message], recorded_at: int) -> MessageCounts:
    counts = MessageCounts()
    with db.atomic() as conn:
        for message in batch:
            if zkr.writes.capture.is_stored(conn, "t", "p", message.key):
                counts.replayed += 1
            else:
                db.remember(to_remember_request("t", "p", message, recorded_at=recorded_at))
                counts.stored += 1
    return counts


def build(
    path: Path, batches: list[list[Message]], bulk: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[MessageCounts], list[str]]:
    counter = itertools.count(1)
    monkeypatch.setattr(zkr.writes.capture, "new_id", lambda: f"{next(counter):032x}")
    counts = []
    with MemoryDb(path) as db:
        for number, batch in enumerate(batches):
            recorded_at = BASE + 100_000 + number
            if bulk:
                counts.append(remember_messages(db, "t", "p", batch, recorded_at=recorded_at))
            else:
                counts.append(one_by_one(db, batch, recorded_at))
        # remember defers its recall rows: the databases are compared with them written.
        db.apply_recall_backlog()
    conn = sqlite3.connect(path)
    with conn:
        for table in ("source_fts", "recall_fts"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    dump = list(conn.iterdump())
    conn.close()
    return counts, dump


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(messages, max_size=12), min_size=1, max_size=3))
def test_remember_messages_leaves_the_database_one_remember_each_leaves(
    batches: list[list[Message]],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(zkr.writes.bulk, "FLUSH_AT", 4)  # flushes inside a transaction too
    folder = tmp_path_factory.mktemp("messages")
    expected_counts, expected = build(folder / "one.db", batches, False, monkeypatch)
    counts, got = build(folder / "bulk.db", batches, True, monkeypatch)
    assert counts == expected_counts
    assert got == expected


def test_journals_in_memory_restores_the_connections_setting(tmp_path: Path) -> None:
    """A bulk write keeps statement journals in memory for its block only, even when it fails."""
    db = MemoryDb(tmp_path / "m.db")
    try:
        conn = db.conn
        conn.execute("PRAGMA temp_store = FILE")
        with zkr.writes.bulk.journals_in_memory(conn):
            assert conn.execute("PRAGMA temp_store").fetchone() == (2,)  # MEMORY
        assert conn.execute("PRAGMA temp_store").fetchone() == (1,)  # FILE again
        with pytest.raises(RuntimeError), zkr.writes.bulk.journals_in_memory(conn):
            raise RuntimeError("boom")
        assert conn.execute("PRAGMA temp_store").fetchone() == (1,)
    finally:
        db.close()
