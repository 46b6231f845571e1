"""The write-behind queue: completed turns, durable on disk before ``sync_turn`` returns.

A small SQLite file next to the memory database (``<db>.queue``), opened with the rollback journal
and ``synchronous = FULL`` so that every committed row has been fsync'd. A row holds one
``remember`` request, ingestion key included, exactly as it will be applied: a row applied twice
(a crash between applying and deleting it, or two processes racing) stores one memory.

Rows that must never reach the database move to ``failed_turns`` with the reason (the quarantine).
The table layout is the original zkr provider's, so its queue files are read as they are; columns
added since (``attempts``, ``last_error``, ``origin``) are added in place.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FailedTurn", "PendingTurn", "TurnQueue"]

_BUSY_TIMEOUT_SECONDS = 5.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pending_turns("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL, "
    "attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, origin TEXT)",
    "CREATE TABLE IF NOT EXISTS failed_turns("
    "id INTEGER PRIMARY KEY, payload TEXT NOT NULL, attempts INTEGER NOT NULL, "
    "last_error TEXT NOT NULL, failed_at INTEGER NOT NULL)",
)


@dataclass(frozen=True)
class PendingTurn:
    id: int
    payload: str
    attempts: int
    last_error: str | None
    #: Who queued it (``config.ORIGIN_PINNED`` / ``ORIGIN_GATEWAY``); None for older rows.
    origin: str | None = None


@dataclass(frozen=True)
class FailedTurn:
    id: int
    payload: str
    attempts: int
    last_error: str
    failed_at: int


class TurnQueue:
    """One queue file. Safe to use from any thread and any process: each call opens its own
    short-lived connection (a ``sqlite3.Connection`` must not cross Hermes' threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(pending_turns)")}
            # Queues written by the first zkr provider lack these columns; add them in place.
            if "attempts" not in columns:
                conn.execute(
                    "ALTER TABLE pending_turns ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0"
                )
            if "last_error" not in columns:
                conn.execute("ALTER TABLE pending_turns ADD COLUMN last_error TEXT")
            if "origin" not in columns:
                conn.execute("ALTER TABLE pending_turns ADD COLUMN origin TEXT")
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_SECONDS, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous = FULL")
            yield conn
        finally:
            conn.close()

    # ------------------------------------------------------------------ writers

    def enqueue(self, payload: str, origin: str | None = None) -> int:
        """Append one serialized request; returns only once the row is on disk."""
        with self._connect() as conn:
            cursor = conn.execute(
                "INSERT INTO pending_turns(payload, origin) VALUES (?, ?)", (payload, origin)
            )
            return int(cursor.lastrowid or 0)

    def remove(self, turn_id: int) -> None:
        """Forget a row that has been applied (a row already gone is fine)."""
        with self._connect() as conn:
            conn.execute("DELETE FROM pending_turns WHERE id = ?", (turn_id,))

    def record_failure(self, turn_id: int, attempts: int, error: str) -> None:
        with self._connect() as conn:
            conn.execute(
                "UPDATE pending_turns SET attempts = ?, last_error = ? WHERE id = ?",
                (attempts, error, turn_id),
            )

    def quarantine(self, turn_id: int, reason: str, attempts: int | None = None) -> bool:
        """Move a pending row to ``failed_turns`` in one transaction; False if it was gone."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute(
                "SELECT payload, attempts FROM pending_turns WHERE id = ?", (turn_id,)
            ).fetchone()
            if row is None:
                conn.execute("ROLLBACK")
                return False
            conn.execute(
                "INSERT INTO failed_turns(payload, attempts, last_error, failed_at) "
                "VALUES (?, ?, ?, ?)",
                (row[0], max(1, attempts if attempts is not None else row[1]), reason, _now()),
            )
            conn.execute("DELETE FROM pending_turns WHERE id = ?", (turn_id,))
            conn.execute("COMMIT")
            return True

    def reject(self, payload: str, reason: str) -> None:
        """Put a turn straight into quarantine (it could never be applied)."""
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO failed_turns(payload, attempts, last_error, failed_at) "
                "VALUES (?, 0, ?, ?)",
                (payload, reason, _now()),
            )

    # ------------------------------------------------------------------ readers

    def pending(self, limit: int = 50, after_id: int = 0) -> list[PendingTurn]:
        """The oldest pending rows after *after_id*, in the order they were enqueued."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT id, payload, attempts, last_error, origin FROM pending_turns "
                "WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, limit),
            ).fetchall()
        return [PendingTurn(int(r[0]), str(r[1]), int(r[2]), r[3], r[4]) for r in rows]

    def count_pending(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM pending_turns").fetchone()[0])

    def failed(self) -> list[FailedTurn]:
        """The quarantine, oldest first."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT id, payload, attempts, last_error, failed_at FROM failed_turns ORDER BY id"
            ).fetchall()
        return [FailedTurn(int(r[0]), str(r[1]), int(r[2]), str(r[3]), int(r[4])) for r in rows]


def _now() -> int:
    return int(time.time())
