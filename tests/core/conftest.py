"""Shared fixtures of the zkr-core tests.

The helpers mirror the contract's store-test fixtures (§9): ``remember(db, t, p, v)`` stores the
conversation capture ``"Sam works at <v>"`` at captured/recorded 10 with the claim
(Sam, employer, v, fact, valid_from 10); ``remember_raw(db, t, p, text)`` stores a capture without a
claim. ``table_snapshot(db)`` reads every table so a test can assert that nothing changed.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from tests.conftest import remember_payload
from zkr import models as m
from zkr.db import MemoryDb

__all__ = ["feed", "feed_records", "remember", "remember_raw", "table_snapshot"]


def remember(
    db: MemoryDb, tenant: str, person: str, value: str, /, **overrides: Any
) -> m.RememberResult:
    """``Sam works at <value>`` with the claim (Sam, employer, value, fact, valid_from 10)."""
    payload = remember_payload(value, tenant_id=tenant, person_id=person)
    payload.update(overrides)
    return db.remember(m.RememberRequest.model_validate(payload))


def remember_raw(
    db: MemoryDb, tenant: str, person: str, text: str, /, **overrides: Any
) -> m.RememberResult:
    """A conversation capture of *text* at captured/recorded 10, without a claim."""
    payload: dict[str, Any] = {
        "tenant_id": tenant,
        "person_id": person,
        "kind": "conversation",
        "text": text,
        "captured_at": 10,
        "recorded_at": 10,
    }
    payload.update(overrides)
    return db.remember(m.RememberRequest.model_validate(payload))


def table_snapshot(db: MemoryDb | sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables included), sorted, keyed by table name.

    Covers ``memory_commits`` and ``memory_export_events`` too, plus ``sqlite_sequence`` so that an
    AUTOINCREMENT counter bumped by a rolled-back commit would show. Takes a plain connection
    too (a reader of a file that another process writes).

    With a ``MemoryDb``, the recall backlog (:mod:`zkr.store.recall_backlog`) is applied first.
    """
    if not isinstance(db, sqlite3.Connection):
        # The recall rows remember deferred are written first: a snapshot compares what the
        # database holds, not when a projection's deferred rows were written.
        db.apply_recall_backlog()
    conn = db if isinstance(db, sqlite3.Connection) else db.conn
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
    ]
    snapshot: dict[str, list[tuple[Any, ...]]] = {}
    for name in names:
        if name == "source_fts":
            # The virtual table itself; its rows are covered by its shadow tables and this read.
            rows = conn.execute(
                "SELECT rowid, source_id, tenant_id, person_id, content FROM source_fts"
            ).fetchall()
        else:
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
        snapshot[name] = sorted(rows, key=repr)
    return snapshot


def feed(db: MemoryDb, tenant: str, person: str) -> list[tuple[int, list[str]]]:
    """The scope's commits, oldest first, as ``(recorded_at, [record kind of each event])``."""
    commits = db.conn.execute(
        "SELECT sequence, recorded_at FROM memory_commits WHERE tenant_id = ? AND person_id = ?"
        " ORDER BY sequence",
        (tenant, person),
    ).fetchall()
    result: list[tuple[int, list[str]]] = []
    for sequence, recorded_at in commits:
        payloads = db.conn.execute(
            "SELECT payload FROM memory_export_events WHERE commit_sequence = ?"
            " ORDER BY event_index",
            (sequence,),
        ).fetchall()
        result.append((recorded_at, [json.loads(row[0])["kind"] for row in payloads]))
    return result


def feed_records(db: MemoryDb, tenant: str, person: str) -> list[list[dict[str, Any]]]:
    """The scope's commits, oldest first, each as its list of decoded event payloads."""
    commits = db.conn.execute(
        "SELECT sequence FROM memory_commits WHERE tenant_id = ? AND person_id = ?"
        " ORDER BY sequence",
        (tenant, person),
    ).fetchall()
    return [
        [
            json.loads(row[0])
            for row in db.conn.execute(
                "SELECT payload FROM memory_export_events WHERE commit_sequence = ?"
                " ORDER BY event_index",
                (sequence,),
            )
        ]
        for (sequence,) in commits
    ]
