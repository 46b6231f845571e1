"""``MemoryDb``: one SQLite file of memory, opened, migrated, used one transaction per operation."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from zkr import models as m
from zkr.errors import IntegrityError, InvalidRequest
from zkr.schema import migrate

__all__ = ["BUSY_TIMEOUT_SECONDS", "MemoryDb"]

#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_SECONDS = 5.0

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


class MemoryDb:
    """A zkr memory database.

    ``MemoryDb(path)`` opens (creating if needed) the SQLite file at *path* and migrates it to the
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
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._closed = False
        #: Caches owned by projections (e.g. dense lane matrices), dropped on every write.
        self.caches: dict[str, Any] = {}
        self.conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            self.conn.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                # WAL lets readers (a host's recall) run while a writer (a stored turn) commits.
                self.conn.execute("PRAGMA journal_mode = WAL")
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
    def atomic(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """Run the block in one transaction (a savepoint when nested).

        Writers start with ``BEGIN IMMEDIATE`` so that two processes never deadlock upgrading a read
        lock; any exception rolls back everything, feed rows included. SQLite trigger aborts are
        turned into :class:`~zkr.errors.IntegrityError` with the trigger's message.
        """
        with self._lock:
            conn = self.conn
            nested = conn.in_transaction
            if nested:
                conn.execute("SAVEPOINT zkr_atomic")
            else:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException as exc:
                if nested:
                    conn.execute("ROLLBACK TO zkr_atomic")
                    conn.execute("RELEASE zkr_atomic")
                else:
                    conn.execute("ROLLBACK")
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

    # ------------------------------------------------------------------ operations (contract §2.4)

    def remember(self, request: m.RememberRequest) -> m.RememberResult:
        """Store a capture (source + evidence), optionally with a claim and a transcript locator."""
        from zkr.lifecycle import remember

        return remember(self, request)

    def locator(self, request: m.LocatorRequest) -> m.LocatorInput | None:
        """The transcript locator of a live evidence row in scope, or ``None``."""
        from zkr.lifecycle import locator

        return locator(self, request)

    def search(self, request: m.SearchRequest) -> m.RetrievalPack:
        """Bounded, scoped, cited recall: lexical (+ dense) candidates fused by rank."""
        from zkr.retrieval import search

        return search(self, request)

    def get(self, request: m.GetRequest) -> m.RetrievalItem:
        """One live source, evidence or current claim as a cited item."""
        from zkr.retrieval import get

        return get(self, request)

    def correct(self, request: m.CorrectRequest) -> m.CorrectResult:
        """Supersede a claim with a new value, recording the correction as evidence."""
        from zkr.lifecycle import correct

        return correct(self, request)

    def link(self, request: m.LinkRequest) -> m.OkResult:
        """Attach supporting or contradicting evidence to an accepted claim."""
        from zkr.lifecycle import link

        return link(self, request)

    def delete(self, request: m.DeleteRequest) -> m.DeleteResult:
        """Tombstone a source and retract what loses its last support."""
        from zkr.lifecycle import delete

        return delete(self, request)

    def profile(self, request: m.ProfileRequest) -> m.ProfileEntry:
        """Project a live ``profile_fact`` claim as the current profile entry of its key."""
        from zkr.profiles import profile

        return profile(self, request)

    def profiles(self, request: m.ProfilesRequest) -> list[m.ProfileEntry]:
        """Current profile entries, newest first."""
        from zkr.profiles import profiles

        return profiles(self, request)

    def review(self, request: m.ReviewRequest) -> m.ReviewResult:
        """Store a daily review citing live evidence."""
        from zkr.profiles import review

        return review(self, request)

    def reviews(self, request: m.ReviewsRequest) -> list[m.ReviewItem]:
        """Daily reviews, latest day first."""
        from zkr.profiles import reviews

        return reviews(self, request)

    def projections(self, request: m.ProjectionsRequest) -> list[m.ProjectionIssue]:
        """Embedding work that is missing or stale for a model/version lane."""
        from zkr.embeddings import projections

        return projections(self, request)

    def embed(self, request: m.EmbedRequest) -> m.EmbedResult:
        """Store one vector for a live target, after checking its input hash and lane."""
        from zkr.embeddings import embed

        return embed(self, request)

    def rebuild(self, request: m.RebuildRequest) -> m.RebuildResult:
        """Embed stale or missing projections with the installed embedder of (model, version)."""
        from zkr.rebuild import rebuild

        return rebuild(self, request)

    def export(self, request: m.ExportRequest) -> m.ExportPage:
        """One page of the scope's commit feed."""
        from zkr.export import export

        return export(self, request)

    def apply(self, request: m.ApplyRequest) -> m.ApplyResult:
        """Stage an exported page of another database and apply each commit once it is whole."""
        from zkr.replicate import apply

        return apply(self, request)


def _translate_sqlite_error(exc: BaseException) -> Exception | None:
    if isinstance(exc, sqlite3.IntegrityError | sqlite3.OperationalError):
        message = str(exc)
        if message in _TRIGGER_MESSAGES:
            return IntegrityError(message)
    if isinstance(exc, sqlite3.DataError):
        return InvalidRequest(str(exc))
    return None
