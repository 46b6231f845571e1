"""Opening a database file: look before writing, then switch to WAL patiently (issue 18, 6 and 7).

The order matters:

1. :func:`check_file` reads the header (``user_version``, ``application_id``) **read-only** and
   refuses a file written by a newer zkr or by another application *before anything is written*:
   a refused file is left byte for byte as it was.
2. :func:`enable_wal` switches the journal to WAL. Changing the journal mode of a new or
   rollback-journal file needs an exclusive lock, and SQLite answers "database is locked" at once
   instead of calling the busy handler, so several processes opening one file at the same moment
   failed; here the switch is retried until the busy timeout, like any other lock wait. A file that
   cannot be written (read-only file or directory) keeps its rollback journal and stays readable.
"""

from __future__ import annotations

import sqlite3
import time

from zkr.errors import ForeignDatabaseError, SchemaVersionError

__all__ = ["LOCK_WAIT_SECONDS", "begin_immediate", "check_file", "enable_wal", "is_busy"]

#: How long a writer waits in all for the write lock (SQLite's busy handler waits up to the busy
#: timeout each time; its lock is not fair, so under many writers one can lose several rounds).
LOCK_WAIT_SECONDS = 30.0

#: First pause between two attempts at the WAL switch; it doubles up to :data:`_MAX_PAUSE`.
_FIRST_PAUSE = 0.001
_MAX_PAUSE = 0.05


def check_file(conn: sqlite3.Connection, supported_version: int) -> None:
    """Refuse, without writing, a file zkr must not touch.

    :raises SchemaVersionError: ``user_version`` is negative or above *supported_version*.
    :raises ForeignDatabaseError: the file carries another application's ``application_id``
        (zkr never sets one).
    :raises sqlite3.DatabaseError: the file is not a database at all (SQLite's own message).
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version < 0 or version > supported_version:
        raise SchemaVersionError(
            f"database schema version {version} is newer than supported version {supported_version}"
        )
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id != 0:
        raise ForeignDatabaseError(
            f"database application id {application_id} is not zkr's; refusing to open it"
        )


def enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put the file in WAL mode, waiting up to *timeout* seconds for the lock it needs.

    A read-only file keeps its journal mode (reads work in either).

    :raises sqlite3.OperationalError: still locked after *timeout* (SQLite's message).
    """
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            message = str(exc)
            if "readonly" in message or "read-only" in message:
                return
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        else:
            if str(mode).lower() == "wal" or _read_only(conn):
                return
            if time.monotonic() >= deadline:
                raise sqlite3.OperationalError("database is locked")
        time.sleep(pause)
        pause = min(2 * pause, _MAX_PAUSE)


def is_busy(exc: BaseException) -> bool:
    """Whether *exc* is SQLite saying another connection holds the lock ("database is locked",
    "database table is locked", ``SQLITE_BUSY``): a wait, not a fault. The one test of it that the
    store's retries and every host (a busy answer, a retry later) share."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def begin_immediate(conn: sqlite3.Connection, wait: float = LOCK_WAIT_SECONDS) -> None:
    """``BEGIN IMMEDIATE``, retried while the file stays locked, up to *wait* seconds in all.

    Each attempt already waits the busy timeout; with many processes writing at once (issue 18:
    16 on 2 cores) one writer can lose that race repeatedly and fail with "database is locked"
    although the database is merely busy. Retrying keeps every writer in line.

    :raises sqlite3.OperationalError: still locked after *wait* seconds.
    """
    deadline = time.monotonic() + wait
    pause = _FIRST_PAUSE
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, _MAX_PAUSE)


def _read_only(conn: sqlite3.Connection) -> bool:
    """Whether SQLite opened the main database read-only (then no journal change is possible)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return "readonly" in str(exc) or "read-only" in str(exc)
    conn.execute("ROLLBACK")
    return False
