"""The page's one door to the database: zkr's operations, run in the page's scope.

zkr-web holds no SQL. Every read and every change goes through an operation of zkr-core's
operation table, with the request built from the operation's own request model (so its validation
and error messages are zkr's) and the scope filled from the server's configuration: a page can
never name another person's scope, and another scope's ids answer exactly like missing ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zkr import MemoryDb
from zkr import models as m
from zkr.tool_calls import run_scoped

__all__ = ["ScopedMemory"]


@dataclass(frozen=True)
class ScopedMemory:
    """The memory of one (tenant, person), reached only through operations."""

    db: MemoryDb
    tenant_id: str
    person_id: str
    #: ``(model, version)`` of an installed embedder: searches are hybrid; ``None``: words only.
    embedder: tuple[str, str] | None = None
    #: Called after every committed change (the background embedder's doorbell).
    after_write: Callable[[], None] | None = None

    def _written(self) -> None:
        if self.after_write is not None:
            self.after_write()

    def run(self, name: str, **fields: Any) -> Any:
        """Run operation *name* in this scope; *fields* are its request's other fields.

        :raises zkr.errors.ZkrError: whatever the operation refuses (``NotFound`` for a missing
            or foreign id, ``RequestParseError`` for a value out of range), with zkr's message.
        """
        # zkr-core's run (zkr's validation and messages, the busy retry): a pydantic
        # ValidationError is no ZkrError and became a 500 (a time past i64).
        return run_scoped(self.db, name, fields, tenant_id=self.tenant_id, person_id=self.person_id)

    # ---------------------------------------------------------------- reads

    def search(self, query: str, limit: int, as_of: int | None) -> m.RetrievalPack:
        fields: dict[str, Any] = {"query": query, "limit": limit}
        if as_of is not None:
            fields["as_of"] = {"valid_at": as_of, "recorded_at": as_of}
        if self.embedder is not None:
            # No vector: zkr embeds the query with the installed embedder of that lane.
            fields["query_embedding"] = {"model": self.embedder[0], "version": self.embedder[1]}
        pack: m.RetrievalPack = self.run("search", **fields)
        return pack

    def get(self, kind: str, target_id: str) -> m.RetrievalItem:
        item: m.RetrievalItem = self.run("get", target={"kind": kind, "id": target_id})
        return item

    def locator(self, evidence_id: str) -> m.LocatorInput | None:
        found: m.LocatorInput | None = self.run("locator", evidence_id=evidence_id)
        return found

    def memories(
        self,
        limit: int,
        *,
        claim_kinds: list[str],
        source_kinds: list[str],
        cursor: str | None,
        as_of: int | None,
    ) -> m.MemoriesPage:
        """One page of the timeline (``memories``)."""
        fields: dict[str, Any] = {
            "limit": limit,
            "claim_kinds": claim_kinds,
            "source_kinds": source_kinds,
            "cursor": cursor,
        }
        if as_of is not None:
            fields["as_of"] = {"valid_at": as_of, "recorded_at": as_of}
        page: m.MemoriesPage = self.run("memories", **fields)
        return page

    def history(self, claim_id: str) -> m.ClaimHistory:
        """A claim's whole chain (``history``)."""
        history: m.ClaimHistory = self.run("history", claim_id=claim_id)
        return history

    def profiles(self, limit: int) -> list[m.ProfileEntry]:
        entries: list[m.ProfileEntry] = self.run("profiles", limit=limit)
        return entries

    def reviews(self, limit: int) -> list[m.ReviewItem]:
        items: list[m.ReviewItem] = self.run("reviews", limit=limit)
        return items

    # ---------------------------------------------------------------- changes

    def correct(
        self, claim_id: str, text: str, value: str, valid_at: int, recorded_at: int
    ) -> m.CorrectResult:
        result: m.CorrectResult = self.run(
            "correct",
            claim_id=claim_id,
            text=text,
            value=value,
            valid_at=valid_at,
            recorded_at=recorded_at,
        )
        self._written()
        return result

    def delete(self, source_id: str, deleted_at: int) -> m.DeleteResult:
        result: m.DeleteResult = self.run("delete", source_id=source_id, deleted_at=deleted_at)
        self._written()
        return result

    def forget(self, source_id: str, erased_at: int) -> m.ForgetResult:
        """Erase a capture and what only it supports (``forget``)."""
        result: m.ForgetResult = self.run("forget", source_id=source_id, erased_at=erased_at)
        self._written()
        return result
