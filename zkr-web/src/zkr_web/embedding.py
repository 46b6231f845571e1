"""The page's embedder: hybrid search, and vectors for what is written, without a page waiting.

With ``--embedder MODEL/VERSION`` every search embeds its query with that installed embedder
(``query_embedding`` without a vector: zkr embeds it) and runs hybrid, and one daemon thread runs
zkr's ``rebuild`` for the page's scope and lane until nothing is stale or missing: at start (what
other writers — the agent, ``zkr import`` — stored while no embedding ran), after every change made
through the page (a correction is a new capture and claim), and every :data:`IDLE_SECONDS`, because
the agent writes to the same file from other processes. It has its own database connection, so a
page never waits for the model. Vectors are projections: a crash loses nothing but vectors, and
the next pass embeds whatever is stale or missing. zkr-mcp's ``--embedder`` works the same way.
"""

from __future__ import annotations

import logging
import threading

from zkr.db import MemoryDb, open_db
from zkr.models import RebuildRequest

__all__ = ["BackgroundEmbedder", "EmbedderSettingError", "check_embedder", "parse_embedder"]

log = logging.getLogger("zkr_web")

#: Items per rebuild run, so that shutdown never waits for a whole backlog.
RUN_ITEMS = 64
#: Seconds between catch-up passes when nothing rang (another process may have written).
IDLE_SECONDS = 30.0


class EmbedderSettingError(ValueError):
    """``--embedder`` is malformed or names no installed embedder."""


def parse_embedder(value: str) -> tuple[str, str]:
    """``MODEL/VERSION`` as ``(model, version)``: the version is what follows the last slash,
    since model names hold slashes themselves (``intfloat/multilingual-e5-small``).

    :raises EmbedderSettingError: no slash, or a blank model or version.
    """
    model, slash, version = value.strip().rpartition("/")
    if not slash or not model.strip() or not version.strip():
        raise EmbedderSettingError(f"--embedder must be MODEL/VERSION, got {value!r}")
    return model, version


def check_embedder(lane: tuple[str, str]) -> None:
    """Refuse at start, not at the first search, an embedder that is not installed.

    :raises EmbedderSettingError: with zkr's message and what ``zkr plugins`` would list.
    """
    from zkr.plugins import get_embedders

    installed = get_embedders()
    if lane not in installed:
        names = ", ".join(sorted(f"{m}/{v}" for m, v in installed)) or "none"
        raise EmbedderSettingError(
            f"--embedder: no installed embedder for model {lane[0]!r} version {lane[1]!r}"
            f" (installed: {names})"
        )


class BackgroundEmbedder:
    """Embeds the scope's stale or missing projections whenever :meth:`notify` is called."""

    def __init__(self, db_path: str, tenant_id: str, person_id: str, lane: tuple[str, str]) -> None:
        self.db_path = db_path
        self.tenant_id = tenant_id
        self.person_id = person_id
        self.model, self.version = lane
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: Set whenever a pass found no work left (tests wait on it).
        self.idle = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="zkr-web-embedder", daemon=True)

    def start(self) -> None:
        self._wake.set()  # catch up with what was written while no page ran
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
        db = open_db(self.db_path)
        try:
            while not self._stop.is_set():
                self._wake.wait(IDLE_SECONDS)
                self._wake.clear()
                self._drain(db)
        finally:
            db.close()

    def _drain(self, db: MemoryDb) -> None:
        request = RebuildRequest(
            tenant_id=self.tenant_id,
            person_id=self.person_id,
            model=self.model,
            version=self.version,
            max_items=RUN_ITEMS,
            batch_size=None,  # the embedder's own
        )
        while not self._stop.is_set():
            try:
                result = db.run("rebuild", request)
            except Exception:
                # A busy database, a model failure: the vectors are a projection, try again later.
                log.exception("background embedding failed; retrying later")
                return
            if result.complete:
                if not self._wake.is_set():
                    self.idle.set()
                return
