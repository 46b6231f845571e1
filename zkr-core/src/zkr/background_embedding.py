"""Host kit: new memories get vectors without any request waiting for the model.

A host that serves one person with an embedder (zkr-mcp, zkr-web) rings :meth:`notify` after a
write; one daemon thread runs zkr's ``rebuild`` for that scope and lane until nothing is stale or
missing, at start (what was written while no host ran), after every ring, and every
:data:`IDLE_SECONDS` (other processes write to the same file). It has its own database
connection, so searches and writes never wait for the model. Vectors are projections: a crash
loses nothing but vectors, and the next pass embeds whatever is stale or missing.
"""

from __future__ import annotations

import logging
import threading

from zkr.db import MemoryDb, open_db
from zkr.models import RebuildRequest

# typing's TYPE_CHECKING without importing typing, as elsewhere in zkr-core (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class HostScope(Protocol):
        """What :func:`for_host` reads from a host's settings (zkr-mcp's ``Settings``, zkr-web's
        ``WebConfig``): the one person it serves and its embedder lane."""

        @property
        def tenant_id(self) -> str: ...
        @property
        def person_id(self) -> str: ...
        @property
        def embedder(self) -> tuple[str, str] | None: ...


__all__ = [
    "IDLE_SECONDS",
    "RUN_ITEMS",
    "BackgroundEmbedder",
    "EmbedderSettingError",
    "check_embedder",
    "for_host",
    "parse_embedder",
]

log = logging.getLogger("zkr")

#: Items per rebuild run, so that closing never waits for a whole backlog.
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

    :raises EmbedderSettingError: with what ``zkr plugins`` would list.
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
    """Embeds the scope's stale or missing projections whenever :meth:`notify` is called.

    :param thread_name: names the thread after its host (``zkr-mcp-embedder``), for debuggers.
    """

    def __init__(
        self,
        db_path: str,
        tenant_id: str,
        person_id: str,
        lane: tuple[str, str],
        *,
        thread_name: str = "zkr-embedder",
    ) -> None:
        self.db_path = db_path
        self.tenant_id = tenant_id
        self.person_id = person_id
        self.model, self.version = lane
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: Set whenever a pass found no work left (tests and shutdowns wait on it).
        self.idle = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=thread_name, daemon=True)

    def start(self) -> None:
        self._wake.set()  # catch up with what was written while no host ran
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
                self._wake.wait(IDLE_SECONDS)  # read each time: tests lengthen it
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


def for_host(db_path: str, host: HostScope, *, thread_name: str) -> BackgroundEmbedder | None:
    """The embedder thread of a host serving one person (not started), or ``None`` without an
    embedder. The host has already refused a lane that is not installed, in its own words."""
    if host.embedder is None:
        return None
    return BackgroundEmbedder(
        db_path, host.tenant_id, host.person_id, host.embedder, thread_name=thread_name
    )
