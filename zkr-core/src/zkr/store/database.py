"""``Database``: one SQLite file of memory, opened, migrated, used one transaction at a time.

The operations receive a ``Database`` (they never import the :class:`zkr.db.MemoryDb` facade back).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from _thread import RLock
from collections.abc import Callable, Iterator
from types import TracebackType

from zkr.errors import IntegrityError, InvalidRequest
from zkr.store.migrations import migrate
from zkr.store.opening import LOCK_WAIT_SECONDS, begin_immediate, check_file, enable_wal
from zkr.store.schema import SCHEMA_VERSION

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self

__all__ = ["BUSY_TIMEOUT_SECONDS", "SEARCH_BUDGET_SECONDS", "WAL_CHECKPOINT_PAGES", "Database"]

#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_SECONDS = 5.0
#: Default time one search may take before it fails with LimitExceeded (zkr.store.budget).
SEARCH_BUDGET_SECONDS = 5.0
#: WAL pages at which a commit checkpoints (``PRAGMA wal_autocheckpoint``; SQLite's default 1,000).
WAL_CHECKPOINT_PAGES = 4000

# Trigger messages of the schema (contract §3.4): a RAISE(ABORT, msg) surfaces as IntegrityError.
_TRIGGER_MESSAGES = frozenset(
    {
        "evidence source scope mismatch",
        "evidence locator scope mismatch",
        "claim evidence scope mismatch",
        "embedding target scope mismatch",
        "daily review evidence scope mismatch",
        "profile entry claim scope mismatch",
        "source origin scope mismatch",
        "invalid claim half-open time interval",
        "correction scope mismatch",
    }
)


class Database:
    """A zkr memory database: the connection, its transactions and the projections' caches.

    ``Database(path)`` opens (creating if needed) the SQLite file at *path* and migrates it to the
    current schema. Every public method is one operation of the contract and runs in one
    transaction: either all of its rows (and its export-feed commit) are written, or none are.

    A ``MemoryDb`` may be shared between threads; operations on one instance are serialised. Several
    instances and processes may use the same file at once (WAL journal, busy timeout).

    :param path: the database file, or ``":memory:"`` for a throwaway database.
    :param prepare_connection: optional callable run on the new connection before migration
        (the ``zkr_prepare_connection`` hook is applied through it by the plugin layer).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prepare_connection: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            # The path created is the path opened: `~` expanded for both (issue 18, defect 10).
            self.path = os.path.expanduser(self.path)
            # os.makedirs, not pathlib: pathlib's import (urllib, ipaddress) slows start-up.
            os.makedirs(os.path.dirname(self.path.rstrip(os.sep)) or ".", exist_ok=True)
        # _thread's RLock is threading's (its C lock), without importing threading at start-up.
        self._lock = RLock()
        self._closed = False
        #: Caches owned by projections (e.g. dense lane matrices), dropped on every write.
        self.caches: dict[str, Any] = {}
        #: Time one search may take before it fails with LimitExceeded (None: unbounded).
        self.search_budget_seconds: float | None = SEARCH_BUDGET_SECONDS
        self.conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            self.conn.execute("PRAGMA foreign_keys = ON")
            # Look before writing: a file zkr refuses is never modified (zkr.store.opening).
            check_file(self.conn, SCHEMA_VERSION)
            # Freed and overwritten cells are zeroed, so text that `forget` erases (or that an
            # earlier delete or update left behind) does not survive in free space of the file.
            self.conn.execute("PRAGMA secure_delete = ON")
            # A 16 MiB page cache instead of SQLite's 2 MiB: a recall search over 100,000
            # memories reads megabytes of FTS5 doclists and b-tree pages. 64 MiB once saved 30 %
            # of its CPU, when the coverage factor re-read every doclist once per row; since it
            # matches a scratch copy of the page (issue 27.5), 64, 16, 4 and 2 MiB cost the same
            # CPU at 100k (recall lexical within 7 %, hybrid 64 vs 16 within 3 %), and the other
            # 48 MiB were resident memory in `serve` next to a 100k lane (300 MB budget). Pages
            # are held only once read: a small store or a one-shot process pays nothing.
            self.conn.execute("PRAGMA cache_size = -16384")
            if self.path != ":memory:":
                # WAL lets readers (a host's recall) run while a writer (a stored turn) commits.
                enable_wal(self.conn, LOCK_WAIT_SECONDS)
                # Checkpoint at 4,000 WAL pages (16 MiB) instead of SQLite's 1,000: a `remember`
                # writes ~35 pages, so the default checkpointed every ~28 of them and copied the
                # same hot pages (index tails, FTS5's structure) back each time. Through `serve`
                # at 100k: 6-8 % more remembers per second of wall, p95 1.6 ms instead of 2.2-3.5
                # (benchmarks/README, issue 27.2). `forget` still empties the WAL itself.
                self.conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            if prepare_connection is not None:
                prepare_connection(self.conn)
            migrate(self.conn)
        except BaseException:
            self.conn.close()
            raise

    # ------------------------------------------------------------------ lifecycle of the handle

    def close(self) -> None:
        """Close the connection; calling it twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                # A clean close leaves no backlog (zkr.store.recall_backlog): a reader that
                # cannot write (a read-only copy) then finds every capture. Best effort: a file
                # this process cannot write keeps it for the next writer.
                if not self.conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        if _has_backlog(self.conn):
                            self.apply_recall_backlog()
                self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions

    @contextlib.contextmanager
    def atomic(
        self, *, write: bool = True, defer_recall: bool = False, reads_recall: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """Run the block in one transaction (a savepoint when nested).

        Writers start with ``BEGIN IMMEDIATE`` so that two processes never deadlock upgrading a read
        lock; any exception rolls back everything, feed rows included. SQLite trigger aborts are
        turned into :class:`~zkr.errors.IntegrityError` with the trigger's message.

        A writer applies the recall index's backlog (:mod:`zkr.store.recall_backlog`) first, in
        the same transaction, so the block sees an exact index — unless *defer_recall*
        (``remember``, which adds to the backlog). A reader of the recall index (*reads_recall*)
        that finds a backlog becomes a writer for it: it applies the backlog and reads in one
        write transaction, so no capture committed in between is seen without its recall row.
        Other readers never write.
        """
        with self._lock:
            conn = self.conn
            nested = conn.in_transaction
            if nested:
                conn.execute("SAVEPOINT zkr_atomic")
                if reads_recall and _has_backlog(conn):
                    # A recall read inside a caller's transaction: the backlog is applied in it
                    # (a read transaction becomes a write one, or fails busy; never inexact).
                    _apply_backlog(conn)
            elif write:
                begin_immediate(conn)
                if not defer_recall and _has_backlog(conn):
                    _apply_backlog(conn)
            else:
                conn.execute("BEGIN")
                if reads_recall and _has_backlog(conn):
                    _apply_before_reading(conn)
            try:
                yield conn
            except BaseException as exc:
                _roll_back(conn, nested)
                translated = _translate_sqlite_error(exc)
                if translated is not None:
                    raise translated from exc
                raise
            else:
                if nested:
                    conn.execute("RELEASE zkr_atomic")
                else:
                    conn.execute("COMMIT")
                if write:
                    self.caches.clear()

    def apply_recall_backlog(self) -> None:
        """Write the recall rows ``remember`` deferred (:mod:`zkr.store.recall_backlog`) now, in
        one transaction. Every operation does this itself when it needs to; a caller that reads
        the recall index's table directly (a test, a dump) calls it first."""
        with self.atomic():
            pass

    def checkpoint(self) -> bool:
        """Copy the WAL into the database file and truncate it (``wal_checkpoint(TRUNCATE)``).

        Waits (busy timeout) for readers of older snapshots; returns whether the WAL was emptied.
        Outside a transaction only; a no-op answering ``True`` for ``:memory:``.
        """
        if self.path == ":memory:":
            return True
        with self._lock:
            busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy == 0)


def _has_backlog(conn: sqlite3.Connection) -> bool:
    """Whether some capture's recall rows wait in the backlog (:mod:`zkr.store.recall_backlog`).

    Asked here, with no import: the writer pulls in the text analysis and the recall index, which
    a one-shot command that finds no backlog never needs (issue 27.4's start-up)."""
    return conn.execute("SELECT 1 FROM recall_backlog LIMIT 1").fetchone() is not None


def _apply_backlog(conn: sqlite3.Connection) -> None:
    """:func:`zkr.store.recall_backlog.apply_backlog`, imported when there is a backlog."""
    from zkr.store.recall_backlog import apply_backlog

    apply_backlog(conn)


def _apply_before_reading(conn: sqlite3.Connection) -> None:
    """Turn the read transaction just begun into a write transaction that has applied the recall
    backlog. A file this process cannot write (read-only) is read as it is: the captures still in
    its backlog (left by a writer that stopped before closing) are found by the contract ranking
    only, until a writer opens the file."""
    conn.execute("ROLLBACK")
    try:
        begin_immediate(conn)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
        conn.execute("BEGIN")
        return
    try:
        _apply_backlog(conn)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            conn.execute("ROLLBACK")
            raise
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")


def _roll_back(conn: sqlite3.Connection, nested: bool) -> None:
    """Undo the block; never replace the error that got us here.

    Some failures (SQLITE_FULL, an I/O error, an interrupt) make SQLite end the transaction
    itself; a ROLLBACK then fails with "no transaction is active", which would mask the real cause.
    """
    if not conn.in_transaction:
        return
    with contextlib.suppress(sqlite3.Error):
        if nested:
            conn.execute("ROLLBACK TO zkr_atomic")
            conn.execute("RELEASE zkr_atomic")
        else:
            conn.execute("ROLLBACK")


def _translate_sqlite_error(exc: BaseException) -> Exception | None:
    if isinstance(exc, sqlite3.IntegrityError | sqlite3.OperationalError):
        message = str(exc)
        if message in _TRIGGER_MESSAGES:
            return IntegrityError(message)
    if isinstance(exc, sqlite3.DataError):
        return InvalidRequest(str(exc))
    return None
