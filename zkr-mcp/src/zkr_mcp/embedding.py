"""Background embedding: new memories get vectors without a tool call waiting for the model.

A write rings the doorbell; one daemon thread runs zkr's ``rebuild`` for the server's scope and
embedder lane until no work is left. It has its own database connection, so searches and writes
of the tool calls never wait for the model. Embedding is a projection: a crash loses nothing but
vectors, and the next start (or the next write) catches up, because ``rebuild`` embeds whatever
is stale or missing.
"""

from __future__ import annotations

import logging
import threading

from zkr.db import MemoryDb, open_db
from zkr.models import RebuildRequest
from zkr_mcp.config import Settings

__all__ = ["BackgroundEmbedder"]

log = logging.getLogger("zkr_mcp")

#: Items per rebuild run, so that ``close`` never waits for a whole backlog.
RUN_ITEMS = 64
#: Seconds between catch-up passes when nothing rang (another process may have written).
IDLE_SECONDS = 30.0


class BackgroundEmbedder:
    """Embeds the scope's stale or missing projections whenever :meth:`notify` is called."""

    def __init__(self, settings: Settings) -> None:
        if settings.embedder is None:
            raise ValueError("BackgroundEmbedder needs settings.embedder")
        self.settings = settings
        self.model, self.version = settings.embedder
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: Set whenever a pass found no work left (tests and ``zkr-mcp`` shutdown wait on it).
        self.idle = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="zkr-mcp-embedder", daemon=True)

    def start(self) -> None:
        self._wake.set()  # catch up with what was written while no server ran
        self._thread.start()

    def notify(self) -> None:
        """Something was written: embed it soon."""
        self.idle.clear()
        self._wake.set()

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        db = open_db(self.settings.db)
        try:
            while not self._stop.is_set():
                self._wake.wait(IDLE_SECONDS)
                self._wake.clear()
                self._drain(db)
        finally:
            db.close()

    def _drain(self, db: MemoryDb) -> None:
        request = RebuildRequest(
            tenant_id=self.settings.tenant_id,
            person_id=self.settings.person_id,
            model=self.model,
            version=self.version,
            max_items=RUN_ITEMS,
            batch_size=None,  # the embedder's own
        )
        while not self._stop.is_set():
            try:
                result = db.run("rebuild", request)
            except Exception:
                # Busy database, a model failure: the vectors are a projection, try again later.
                log.exception("background embedding failed; retrying later")
                return
            if result.complete:
                if not self._wake.is_set():
                    self.idle.set()
                return
