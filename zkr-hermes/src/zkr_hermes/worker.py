"""The background worker that applies queued turns to the memory database.

One worker thread per queue file and process, shared by every provider instance using that file
(a gateway runs one ``AIAgent``, hence one provider, per chat session). Each row is applied with
its own ingestion key, so a retry, a crash between applying and forgetting a row, or another
process applying the same row concurrently never stores a turn twice.

Scope policy (``judge_row``): a row is applied only by a worker that has a provider of exactly
the row's (tenant, person) attached. Otherwise:

- a row of another tenant is quarantined (the tenant is always configuration);
- a row of another person is quarantined when an attached provider's person is pinned (by
  configuration or a CLI session's agent identity: this process serves one person) and the row was
  not queued by a gateway session;
- any other row stays pending for its own person's provider: a gateway serves many chat users from
  one queue, and a user's turn left pending (a crash, a locked database at shutdown) is applied by
  that user's next session, in this process or another, never by someone else's.

Failure policy:

- a row that can never be applied (not JSON, outside the scope policy, refused by zkr's
  validation) is quarantined at once, with the reason;
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
from zkr.db import MemoryDb, open_db
from zkr.errors import (
    ConflictError,
    MigrationError,
    NotFound,
    SchemaVersionError,
    ZkrError,
)
from zkr_hermes.config import ORIGIN_GATEWAY, Scope, ScopePolicy
from zkr_hermes.queue import PendingTurn, TurnQueue

__all__ = [
    "MAX_ATTEMPTS",
    "QueueWorker",
    "Verdict",
    "acquire_worker",
    "judge_row",
    "release_worker",
]

log = logging.getLogger("zkr_hermes")

MAX_ATTEMPTS = 3
#: Longest pause between retries of a transient failure, and between idle polls of the queue
#: (another process may have enqueued rows we were not woken for).
MAX_BACKOFF_SECONDS = 2.0
IDLE_POLL_SECONDS = 1.0
RETRY_PAUSE_SECONDS = 0.05
_RESULTS_KEPT = 512

REASON_INVALID = "invalid queued payload"
REASON_SCOPE = "queued payload outside provider scope"
_PAGE = 50


class Verdict(Enum):
    APPLY = "apply"
    QUARANTINE = "quarantine"
    WAIT = "wait"  # someone else's: left pending for its own person's provider


def judge_row(
    policies: list[ScopePolicy], tenant_id: Any, person_id: Any, origin: str | None
) -> Verdict:
    """What a worker serving *policies* does with a queued row of (*tenant_id*, *person_id*)."""
    if not isinstance(tenant_id, str) or not isinstance(person_id, str) or not person_id.strip():
        return Verdict.QUARANTINE
    if not policies:
        return Verdict.WAIT  # no provider attached (shutting down): judge nothing
    if any(p.scope == Scope(tenant_id, person_id) for p in policies):
        return Verdict.APPLY
    if all(p.scope.tenant_id != tenant_id for p in policies):
        return Verdict.QUARANTINE
    if origin != ORIGIN_GATEWAY and any(p.person_pinned for p in policies):
        return Verdict.QUARANTINE
    return Verdict.WAIT


class _Outcome(Enum):
    DONE = "done"  # applied (or already applied): the row is gone
    QUARANTINED = "quarantined"
    SKIPPED = "skipped"  # another person's row, left pending for them
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
        # Drain passes, numbered; the last one that ended with nothing left for us to apply.
        self._passes_started = 0
        self._last_clean_pass = 0
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
        """Wait (at most *timeout* seconds) until every row queued before the call that this
        worker may apply is applied (or quarantined). Rows left pending for other people do not
        count. True when that happened in time."""
        deadline = time.monotonic() + timeout
        with self._progress:
            # A pass already running may have read the queue before our rows were written.
            wanted = self._passes_started + 1
        while True:
            try:
                if self.queue.count_pending() == 0:
                    return True
            except sqlite3.Error:
                pass
            with self._progress:
                if self._last_clean_pass >= wanted:
                    return True
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
                with self._progress:
                    self._passes_started += 1
                    number = self._passes_started
                try:
                    state = self._drain()
                except Exception as exc:  # never let the thread die on an unexpected error
                    self._warn_once("drain", f"zkr: queue worker error ({type(exc).__name__})")
                    state = _Outcome.TRANSIENT
                if state is _Outcome.DONE:
                    with self._progress:
                        self._last_clean_pass = number
                if state is _Outcome.TRANSIENT:
                    pause = backoff
                    backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                elif state is _Outcome.RETRY:
                    pause = RETRY_PAUSE_SECONDS  # the next attempt; MAX_ATTEMPTS bounds them
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
        """Apply rows until none is left for us (DONE), one must wait (TRANSIENT), or the pass
        ends with rows that failed and are to be retried (RETRY).

        Rows are read in pages by id, so rows left pending for other people never hide the
        ones behind them.
        """
        after, retried = 0, False
        while True:
            rows = self.queue.pending(limit=_PAGE, after_id=after)
            if not rows:
                return _Outcome.RETRY if retried else _Outcome.DONE
            for row in rows:
                deadline = self._stop_deadline
                if deadline is not None and time.monotonic() >= deadline:
                    return _Outcome.TRANSIENT
                outcome = self._apply(row)
                if outcome is _Outcome.TRANSIENT:
                    return _Outcome.TRANSIENT
                retried = retried or outcome is _Outcome.RETRY
                with self._progress:
                    self._progress.notify_all()
            after = rows[-1].id

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
        verdict = judge_row(
            policies, payload.get("tenant_id"), payload.get("person_id"), row.origin
        )
        if verdict is Verdict.WAIT:
            return _Outcome.SKIPPED
        if verdict is Verdict.QUARANTINE:
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
