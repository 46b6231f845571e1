"""The background worker that applies queued turns to the memory database.

One worker thread per queue file and process, shared by every provider instance using that file
(a gateway runs one ``AIAgent``, hence one provider, per chat session). Each row is applied with
its own ingestion key, so a retry, a crash between applying and forgetting a row, or another
process applying the same row concurrently never stores a turn twice.

Failure policy:

- a row that can never be applied (not JSON, outside every attached provider's scope, refused by
  zkr's validation) is quarantined at once, with the reason;
- a busy or locked database, or a database that needs a newer zkr, is transient: the row stays
  pending (order kept) and is retried with back-off, for as long as it takes;
- any other error is retried; after ``MAX_ATTEMPTS`` the row is quarantined.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from enum import Enum
from pathlib import Path
from typing import Any

from zkr import operations
from zkr.db import MemoryDb
from zkr.errors import (
    ConflictError,
    MigrationError,
    NotFound,
    SchemaVersionError,
    ZkrError,
)
from zkr.plugins import open_db
from zkr_hermes.config import ScopePolicy
from zkr_hermes.queue import PendingTurn, TurnQueue

__all__ = ["MAX_ATTEMPTS", "QueueWorker", "acquire_worker", "release_worker"]

log = logging.getLogger("zkr_hermes")

MAX_ATTEMPTS = 3
#: Longest pause between retries of a transient failure, and between idle polls of the queue
#: (another process may have enqueued rows we were not woken for).
MAX_BACKOFF_SECONDS = 2.0
IDLE_POLL_SECONDS = 1.0
_RESULTS_KEPT = 512

REASON_INVALID = "invalid queued payload"
REASON_SCOPE = "queued payload outside provider scope"


class _Outcome(Enum):
    DONE = "done"  # applied (or already applied): the row is gone
    QUARANTINED = "quarantined"
    RETRY = "retry"  # counted failure, may be retried right away
    TRANSIENT = "transient"  # wait and retry the same row


class QueueWorker:
    """Applies the rows of one queue file to one database, in order, on a daemon thread."""

    def __init__(self, db_path: Path, queue: TurnQueue) -> None:
        self.db_path = db_path
        self.queue = queue
        self._policies: list[ScopePolicy] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._progress = threading.Condition()
        self._stop_deadline: float | None = None
        self._thread: threading.Thread | None = None
        self._local = threading.local()  # the thread's own MemoryDb handle
        self._warned: set[str] = set()
        #: ingestion_key -> remember result, for turns applied by this worker (bounded).
        self.results: OrderedDict[str, dict[str, Any]] = OrderedDict()

    # ------------------------------------------------------------------ providers

    def attach(self, policy: ScopePolicy) -> None:
        with self._lock:
            self._policies.append(policy)
            self._stop_deadline = None
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="zkr-hermes-store", daemon=True
                )
                self._thread.start()
        self.wake()

    def detach(self, policy: ScopePolicy, timeout: float) -> bool:
        """Flush for at most *timeout* seconds; the last provider out stops the thread.

        :returns: True when the queue was empty at the end.
        """
        deadline = time.monotonic() + timeout
        flushed = self.flush(timeout)
        with self._lock:
            if policy in self._policies:
                self._policies.remove(policy)
            last = not self._policies
            thread = self._thread
            if last:
                self._stop_deadline = deadline
        if last and thread is not None:
            self.wake()
            thread.join(max(0.0, deadline - time.monotonic()))
        return flushed

    @property
    def alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def wake(self) -> None:
        self._wake.set()

    def flush(self, timeout: float) -> bool:
        """Wait (at most *timeout* seconds) until no row is pending; True if none is."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.queue.count_pending() == 0:
                    return True
            except sqlite3.Error:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.alive:
                return False
            self.wake()
            with self._progress:
                self._progress.wait(min(remaining, 0.05))

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        backoff = 0.1
        try:
            while True:
                idle = False
                try:
                    state = self._drain()
                except Exception as exc:  # never let the thread die on an unexpected error
                    self._warn_once("drain", f"zkr: queue worker error ({type(exc).__name__})")
                    state = _Outcome.TRANSIENT
                if state is _Outcome.TRANSIENT:
                    pause = backoff
                    backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                else:
                    backoff = 0.1
                    idle = True
                    pause = IDLE_POLL_SECONDS
                with self._progress:
                    self._progress.notify_all()
                with self._lock:
                    deadline = self._stop_deadline
                    if deadline is not None and (idle or time.monotonic() >= deadline):
                        # Decided under the lock, so a provider attaching now starts a new thread.
                        self._thread = None
                        return
                if deadline is not None:
                    pause = min(pause, max(0.0, deadline - time.monotonic()))
                self._wake.wait(pause)
                self._wake.clear()
        finally:
            self._close_db()
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None
            with self._progress:
                self._progress.notify_all()

    def _drain(self) -> _Outcome:
        """Apply rows until the queue is empty (DONE) or one must wait (TRANSIENT)."""
        while True:
            rows = self.queue.pending(limit=50)
            if not rows:
                return _Outcome.DONE
            for row in rows:
                deadline = self._stop_deadline
                if deadline is not None and time.monotonic() >= deadline:
                    return _Outcome.TRANSIENT
                if self._apply(row) is _Outcome.TRANSIENT:
                    return _Outcome.TRANSIENT
                with self._progress:
                    self._progress.notify_all()

    def _apply(self, row: PendingTurn) -> _Outcome:
        try:
            payload = json.loads(row.payload)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            self._quarantine(row, REASON_INVALID)
            return _Outcome.QUARANTINED
        with self._lock:
            policies = list(self._policies)
        tenant, person = payload.get("tenant_id"), payload.get("person_id")
        if not any(policy.allows(tenant, person) for policy in policies):
            self._quarantine(row, REASON_SCOPE)
            return _Outcome.QUARANTINED
        try:
            db = self._open_db()
            result = operations.run(db, "remember", payload)
        except NotFound:
            # Replaying a key whose memory was deleted: the turn was applied before (a crash came
            # between applying and forgetting the row) and the user has since deleted it.
            self.queue.remove(row.id)
            return _Outcome.DONE
        except ConflictError as exc:
            self._quarantine(row, str(exc))
            return _Outcome.QUARANTINED
        except (SchemaVersionError, MigrationError) as exc:
            self._warn_once("schema", f"zkr: cannot open the memory database: {exc}")
            self._record(row, row.attempts, str(exc))
            return _Outcome.TRANSIENT
        except ZkrError as exc:
            self._quarantine(row, f"rejected by zkr: {exc}")
            return _Outcome.QUARANTINED
        except sqlite3.OperationalError as exc:
            # "database is locked" after the busy timeout, or a transient I/O problem.
            self._record(row, row.attempts, f"database unavailable: {exc}")
            return _Outcome.TRANSIENT
        except Exception as exc:
            attempts = row.attempts + 1
            reason = f"zkr operation failed ({type(exc).__name__})"
            log.warning("zkr: applying queued turn %s failed: %s", row.id, type(exc).__name__)
            if attempts >= MAX_ATTEMPTS:
                self._quarantine(row, reason, attempts)
                return _Outcome.QUARANTINED
            self._record(row, attempts, reason)
            return _Outcome.RETRY
        self.queue.remove(row.id)
        key = payload.get("ingestion_key")
        if isinstance(key, str) and isinstance(result, dict):
            self.results[key] = result
            while len(self.results) > _RESULTS_KEPT:
                self.results.popitem(last=False)
        return _Outcome.DONE

    def _quarantine(self, row: PendingTurn, reason: str, attempts: int | None = None) -> None:
        log.warning("zkr: queued turn %s quarantined: %s", row.id, reason)
        self.queue.quarantine(row.id, reason, attempts if attempts is not None else 1)

    def _record(self, row: PendingTurn, attempts: int, error: str) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.queue.record_failure(row.id, attempts, error)

    def _open_db(self) -> MemoryDb:
        db: MemoryDb | None = getattr(self._local, "db", None)
        if db is None:
            db = open_db(self.db_path)
            self._local.db = db
        return db

    def _close_db(self) -> None:
        db: MemoryDb | None = getattr(self._local, "db", None)
        self._local.db = None
        if db is not None:
            db.close()

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message)


_REGISTRY: dict[str, QueueWorker] = {}
_REGISTRY_LOCK = threading.Lock()


def acquire_worker(db_path: Path, queue_path: Path, policy: ScopePolicy) -> QueueWorker:
    """The process's worker for *queue_path* (started if needed), with *policy* attached.

    Starting it recovers whatever an earlier process left pending.
    """
    key = str(queue_path.resolve())
    with _REGISTRY_LOCK:
        worker = _REGISTRY.get(key)
        if worker is None:
            worker = QueueWorker(db_path, TurnQueue(queue_path))
            _REGISTRY[key] = worker
        worker.attach(policy)
    return worker


def release_worker(worker: QueueWorker, policy: ScopePolicy, timeout: float) -> bool:
    """Detach *policy*, flushing for at most *timeout* seconds; True if the queue was empty."""
    flushed = worker.detach(policy, timeout)
    with _REGISTRY_LOCK:
        key = str(worker.queue.path.resolve())
        if _REGISTRY.get(key) is worker and not worker._policies:
            del _REGISTRY[key]
    return flushed
