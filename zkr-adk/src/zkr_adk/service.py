"""``ZkrMemoryService``: a Google ADK ``BaseMemoryService`` over a zkr database.

ADK's ``app_name`` is zkr's tenant and its ``user_id`` the person: every read and write of one
(app, user) pair stays inside that scope, so one user's memories never reach another's search.
``add_session_to_memory`` stores each event with text once (the session may be added again and
again as it grows: events already stored are replays), in one transaction per call.
``search_memory`` runs zkr's default ranking (recall) and answers cited ``MemoryEntry`` items (see
:mod:`zkr_adk.mapping`). The database calls run in a worker thread, so the event loop never waits
on SQLite.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from typing_extensions import override

from zkr import models as m
from zkr.db import MemoryDb, open_db
from zkr.writes.messages import Message, MessageCounts, remember_messages
from zkr_adk.mapping import UNKNOWN_SESSION, event_message, memory_entry

if TYPE_CHECKING:
    from google.adk.events import Event
    from google.adk.sessions import Session

__all__ = ["DEFAULT_LIMIT", "ZkrMemoryService"]

#: Memories a search returns (ADK's own in-memory service returns at most ten too).
DEFAULT_LIMIT = 10


class ZkrMemoryService(BaseMemoryService):
    """ADK memory over zkr: app → tenant, user → person, events → captures, cited results.

    :param db: an open :class:`zkr.MemoryDb` (the caller closes it), or the path of a database
        file to open (with the installed plugins; :meth:`close` closes it).
    :param limit: how many memories a search returns (1..100).
    :param ranking: the search ranking; ``None`` (the default) takes zkr's (``recall``, or what
        ``$ZKR_RANKING`` chose: :mod:`zkr.settings`).
    :param clock: seconds since the epoch, the recorded time of what is stored (for tests).
    """

    def __init__(
        self,
        db: MemoryDb | str | os.PathLike[str],
        *,
        limit: int = DEFAULT_LIMIT,
        ranking: m.Ranking | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._owned = not isinstance(db, MemoryDb)
        self.db = open_db(db) if not isinstance(db, MemoryDb) else db
        self.limit = limit
        self.ranking = ranking
        self._clock = clock

    def close(self) -> None:
        """Close the database if this service opened it."""
        if self._owned:
            self.db.close()

    # -- writes ----------------------------------------------------------------------------------

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        messages = [event_message(session.id, event) for event in session.events]
        await self._store(session.app_name, session.user_id, messages)

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        session = session_id or UNKNOWN_SESSION
        await self._store(app_name, user_id, [event_message(session, event) for event in events])

    async def _store(
        self, app_name: str, user_id: str, messages: Sequence[Message | None]
    ) -> MessageCounts:
        kept = [message for message in messages if message is not None]
        return await asyncio.to_thread(
            remember_messages,
            self.db,
            app_name,
            user_id,
            kept,
            recorded_at=int(self._clock()),
        )

    @override
    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Tombstone the capture *memory_id* (a ``MemoryEntry.id``) of this app and user.

        :raises zkr.NotFound: no such live capture in this scope.
        """
        if not memory_id:
            return
        request = m.DeleteRequest(
            tenant_id=app_name,
            person_id=user_id,
            source_id=memory_id,
            deleted_at=int(self._clock()),
        )
        await asyncio.to_thread(self.db.delete, request)

    # -- reads -----------------------------------------------------------------------------------

    @override
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        if not query.strip():
            return SearchMemoryResponse()
        return await asyncio.to_thread(self._search, app_name, user_id, query)

    def _search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        request: dict[str, object] = {
            "tenant_id": app_name,
            "person_id": user_id,
            "query": query,
            "limit": self.limit,
        }
        if self.ranking is not None:
            request["ranking"] = self.ranking
        pack: m.RetrievalPack = self.db.search(request)
        entries = []
        for item in pack.items:
            locator: m.LocatorInput | None = self.db.locator(
                m.LocatorRequest(
                    tenant_id=app_name, person_id=user_id, evidence_id=item.evidence_ids[0]
                )
            )
            entries.append(memory_entry(item, locator))
        return SearchMemoryResponse(memories=entries)
