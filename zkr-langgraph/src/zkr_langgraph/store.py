"""``ZkrStore``: LangGraph's ``BaseStore`` over zkr's operations (no SQL of its own).

* ``put`` of a new key -> ``remember`` (a capture holding the value, and a claim whose value is the
  value's JSON), keyed by the ingestion key of :mod:`zkr_langgraph.mapping`;
* ``put`` over a live key -> ``correct``: the old version is closed and kept, so ``zkr history``
  shows both; putting the value the key already holds changes nothing (a retried put is a replay);
* ``delete`` -> ``delete`` of every capture of the item's versions (tombstones: the claim is
  retracted, its history kept), or ``forget`` of them with ``on_delete="forget"`` (erased for good);
* ``get`` -> ``claims`` by subject and predicate (the full value), the first capture's time
  (``captures`` by ingestion-key prefix) and the claim's evidence (``get``);
* ``search`` with a query -> ``search`` with the recall ranking (at most its 100 best hits, then
  the namespace prefix and the filter); without a query -> ``memories``, newest update first;
* ``list_namespaces`` -> ``scopes`` (the tenant's persons) and each person's item subjects.

Every result carries its zkr :class:`~zkr_langgraph.items.Citation`. A batch runs its operations
one after another, in order; ``abatch`` runs the same in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from zkr import MemoryDb
from zkr.errors import ConflictError, LimitExceeded, NotFound
from zkr.models import ClaimKind, ListedClaim, LiveClaim, MemoryListItem
from zkr.operations import OPERATIONS
from zkr.tools import tool_request
from zkr_langgraph import mapping
from zkr_langgraph.items import Citation, ZkrItem, ZkrSearchItem, moment

__all__ = ["ZkrStore"]

#: zkr's largest page, and the most hits one search answers.
_PAGE = 100
#: A listed claim value this long may have been cut (zkr caps listed text at 4096 bytes).
_LISTED_CAP = 4096
#: Incarnations tried before a put gives up (each earlier one was deleted).
_MAX_INCARNATIONS = 100_000
#: Read-then-write rounds a put tries while other writers keep changing its key.
_MAX_ROUNDS = 100


def _check_put_namespace(namespace: tuple[str, ...]) -> None:
    """``put``'s namespace rules, also for a ``PutOp`` handed to ``batch`` directly (LangGraph
    checks them in ``put`` only)."""
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {namespace}'
        )


class ZkrStore(BaseStore):
    """A LangGraph store whose items are cited, bitemporal zkr memories of one tenant.

    :param db: an open :class:`zkr.MemoryDb`, or the path of a zkr database to open (closed by
        :meth:`close`).
    :param tenant_id: the zkr tenant every namespace lives in; a store never reads another.
    :param on_delete: ``"delete"`` (default) tombstones an item's captures and keeps its history;
        ``"forget"`` erases their text for good (zkr ``forget``).
    :param claim_kind: the kind of the claims items are stored as (default ``fact``).
    :param clock: seconds since the epoch "now" (default: the system clock).
    """

    __slots__ = ("_clock", "_db", "_kind", "_on_delete", "_owns_db", "_tenant")

    def __init__(
        self,
        db: MemoryDb | str | os.PathLike[str],
        *,
        tenant_id: str,
        on_delete: Literal["delete", "forget"] = "delete",
        claim_kind: ClaimKind | str = ClaimKind.fact,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if not isinstance(tenant_id, str) or not tenant_id.strip():
            raise ValueError("zkr-langgraph: tenant_id must not be empty")
        if on_delete not in ("delete", "forget"):
            raise ValueError("zkr-langgraph: on_delete is 'delete' or 'forget'")
        self._kind = ClaimKind(claim_kind)
        self._owns_db = not isinstance(db, MemoryDb)
        self._db = MemoryDb(db) if not isinstance(db, MemoryDb) else db
        self._tenant = tenant_id
        self._on_delete = on_delete
        self._clock = clock or (lambda: int(time.time()))

    def close(self) -> None:
        """Close the database if the store opened it."""
        if self._owns_db:
            self._db.close()

    # ------------------------------------------------------------------------------------------
    # BaseStore
    # ------------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run *ops* in order; each result at its operation's position."""
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (zkr's database calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(op.namespace, op.key)
            else:
                _check_put_namespace(op.namespace)
                if op.ttl is not None:
                    raise NotImplementedError("zkr-langgraph: items do not expire (ttl=None)")
                self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"zkr-langgraph: unknown operation {type(op).__name__}")

    # ------------------------------------------------------------------------------------------
    # Reads
    # ------------------------------------------------------------------------------------------

    def _scope(self, person_id: str) -> dict[str, str]:
        return {"tenant_id": self._tenant, "person_id": person_id}

    def _live(self, person_id: str, path: tuple[str, ...], key: str) -> LiveClaim | None:
        """The item's current claim, if it has one."""
        found: list[LiveClaim] = self._db.run(
            "claims",
            {
                **self._scope(person_id),
                "subject": mapping.subject_of(path),
                "predicate": key,
                "limit": 1,
            },
        )
        return found[0] if found else None

    def _created(self, person_id: str, path: tuple[str, ...], key: str, fallback: int) -> int:
        """When the item's first version was recorded (its key's live first capture)."""
        first = self._db.run(
            "captures",
            {**self._scope(person_id), "key_prefix": mapping.key_prefix(path, key), "limit": 1},
        )
        return int(first[0].recorded_at) if first else fallback

    def _evidence(self, person_id: str, claim_id: str) -> tuple[str, ...]:
        item = self._db.run(
            "get", {**self._scope(person_id), "target": {"kind": "claim", "id": claim_id}}
        )
        return tuple(item.evidence_ids)

    def _get(self, namespace: tuple[str, ...], key: str) -> ZkrItem | None:
        person_id, path = mapping.split_namespace(namespace)
        live = self._live(person_id, path, key)
        if live is None:
            return None
        return ZkrItem(
            value=mapping.value_of(live.value),
            key=key,
            namespace=namespace,
            created_at=moment(self._created(person_id, path, key, live.recorded_from)),
            updated_at=moment(live.recorded_from),
            citation=Citation(live.id, self._evidence(person_id, live.id)),
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if not op.namespace_prefix:
            raise ValueError(
                "zkr-langgraph: search reads one person's memory: the namespace prefix starts "
                "with the person"
            )
        person_id, prefix = mapping.split_namespace(op.namespace_prefix)
        hits = (
            self._query_hits(person_id, prefix, op.query)
            if op.query
            else self._newest_items(person_id, prefix)
        )
        wanted: list[SearchItem] = []
        for hit in hits:
            if mapping.matches_filter(hit.value, op.filter):
                wanted.append(hit)
                if len(wanted) >= op.offset + op.limit:
                    break
        return wanted[op.offset :]

    def _query_hits(
        self, person_id: str, prefix: tuple[str, ...], query: str
    ) -> Iterator[ZkrSearchItem]:
        """The recall pack's claims that are items under *prefix*, most relevant first."""
        pack = self._db.run(
            "search",
            # zkr's default ranking (recall unless the process chose otherwise: zkr.settings).
            {**self._scope(person_id), "query": query, "limit": _PAGE},
        )
        for hit in pack.items:
            if hit.memory.kind != "claim":
                continue  # a capture: an earlier version's text, or not an item at all
            try:
                chain = self._db.run(
                    "history", {**self._scope(person_id), "claim_id": hit.memory.id}
                )
            except LimitExceeded:
                continue  # a history over zkr's page budget: readable by get, not found here
            current = next(v.claim for v in chain.versions if v.claim.id == hit.memory.id)
            path = mapping.path_of(current.subject)
            if path is None or path[: len(prefix)] != prefix:
                continue
            yield ZkrSearchItem(
                (person_id, *path),
                current.predicate,
                mapping.value_of(current.value),
                moment(chain.versions[0].claim.recorded_time.from_),
                moment(current.recorded_time.from_),
                score=hit.relevance_basis_points / 10_000,
                citation=Citation(current.id, tuple(hit.evidence_ids)),
            )

    def _listed_claims(self, person_id: str) -> Iterator[tuple[ListedClaim, MemoryListItem]]:
        """Every live claim of the store's kind in the person's memory, newest recorded first,
        with the listed item (its citations)."""
        cursor: str | None = None
        while True:
            page = self._db.run(
                "memories",
                {
                    **self._scope(person_id),
                    "claim_kinds": [self._kind.value],
                    "limit": _PAGE,
                    "cursor": cursor,
                },
            )
            for listed in page.items:
                if listed.claim is not None:
                    yield listed.claim, listed
            cursor = page.next_cursor
            if cursor is None:
                return

    def _newest_items(self, person_id: str, prefix: tuple[str, ...]) -> Iterator[ZkrSearchItem]:
        """The items under *prefix*, most recently updated first."""
        for claim, listed in self._listed_claims(person_id):
            path = mapping.path_of(claim.subject)
            if path is None or path[: len(prefix)] != prefix:
                continue
            text = claim.value
            if len(text.encode("utf-8")) >= _LISTED_CAP:  # maybe cut: read the whole value
                live = self._live(person_id, path, claim.predicate)
                if live is None:
                    continue  # deleted since the page was read
                text = live.value
            value = mapping.value_of(text)
            updated = claim.recorded_time.from_
            yield ZkrSearchItem(
                (person_id, *path),
                claim.predicate,
                value,
                moment(self._created(person_id, path, claim.predicate, updated)),
                moment(updated),
                citation=Citation(claim.id, tuple(listed.evidence_ids)),
            )

    def _persons(self, op: ListNamespacesOp) -> Iterator[str]:
        """The persons whose namespaces may match: the one a prefix names, or the tenant's."""
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix" and condition.path and condition.path[0] != "*":
                yield condition.path[0]
                return
        cursor: str | None = None
        while True:
            page = self._db.run(
                "scopes", {"tenant_id": self._tenant, "limit": _PAGE, "cursor": cursor}
            )
            yield from (entry.person_id for entry in page.items)
            cursor = page.next_cursor
            if cursor is None:
                return

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        # Namespaces sort by person first, and persons come in that order: a person's sorted
        # namespaces extend the list, which stops once it holds offset + limit.
        wanted: list[tuple[str, ...]] = []
        for person_id in self._persons(op):
            if "." in person_id:
                continue  # not a namespace label LangGraph allows: no item can live there
            found: set[tuple[str, ...]] = set()
            for claim, _ in self._listed_claims(person_id):
                path = mapping.path_of(claim.subject)
                if path is None:
                    continue
                namespace = (person_id, *path)
                if all(
                    mapping.matches_namespace(namespace, c.match_type, tuple(c.path))
                    for c in op.match_conditions or ()
                ):
                    found.add(namespace if op.max_depth is None else namespace[: op.max_depth])
            wanted.extend(sorted(found))
            if len(wanted) >= op.offset + op.limit:
                break
        return wanted[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------------------------------
    # Writes
    # ------------------------------------------------------------------------------------------

    def _tool(self, name: str, person_id: str, arguments: dict[str, Any]) -> Any:
        """Run *name* as a host does: the store's scope, "now" raised past what is stored."""
        operation = OPERATIONS[name]
        request = tool_request(
            operation,
            arguments,
            tenant_id=self._tenant,
            person_id=person_id,
            now=self._clock(),
            db=self._db,
        )
        return self._db.run(operation, request)

    def _put(self, namespace: tuple[str, ...], key: str, value: Any) -> None:
        person_id, path = mapping.split_namespace(namespace)
        if not key.strip():
            raise ValueError("zkr-langgraph: a key must not be blank")
        text = mapping.value_json(value)
        # Read, then write: another writer (a thread, a process) may change the item in between.
        # zkr refuses the stale write (the ingestion key is taken, the claim is no longer live),
        # and the next round reads what that writer left and builds on it.
        for _ in range(_MAX_ROUNDS):
            live = self._live(person_id, path, key)
            if live is None:
                if self._remember(person_id, path, key, text):
                    return
                continue
            if live.value == text:
                return  # the item holds this value already: nothing changes
            try:
                self._tool("correct", person_id, {"claim_id": live.id, "text": text, "value": text})
                return
            except NotFound:
                continue  # corrected or deleted by another writer since it was read
        raise ValueError(f"zkr-langgraph: key {key!r} kept changing under this put; try again")

    def _remember(self, person_id: str, path: tuple[str, ...], key: str, text: str) -> bool:
        """Store a new item; ``False`` when another writer stored the key first."""
        now = self._clock()
        for incarnation in range(1, _MAX_INCARNATIONS + 1):
            try:
                self._db.run(
                    "remember",
                    {
                        **self._scope(person_id),
                        "kind": "integration",
                        "text": text,
                        "captured_at": now,
                        "recorded_at": now,
                        "ingestion_key": mapping.ingestion_key(path, key, incarnation),
                        "claim": {
                            "subject": mapping.subject_of(path),
                            "predicate": key,
                            "value": text,
                            "kind": self._kind.value,
                            "valid_from": now,
                        },
                    },
                )
                return True
            except NotFound:
                continue  # that incarnation was deleted: its key is never reused
            except ConflictError:
                # This incarnation's capture is live: a writer stored it first (then its claim is
                # the item now), or its claim was retracted apart from it (the next one is free).
                if self._live(person_id, path, key) is not None:
                    return False
        raise ValueError(f"zkr-langgraph: key {key!r} was deleted too many times to reuse")

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        person_id, path = mapping.split_namespace(namespace)
        live = self._live(person_id, path, key)
        if live is None:
            return
        # Earlier versions' captures first, the current one's last: until that last one goes the
        # item is still there, so a delete cut short is finished by running it again.
        current = list(live.source_ids)
        earlier = [s for s in self._chain_sources(person_id, path, key, live) if s not in current]
        for source_id in [*earlier, *current]:
            try:
                if self._on_delete == "forget":
                    self._tool("forget", person_id, {"source_id": source_id})
                else:
                    self._tool("delete", person_id, {"source_id": source_id})
            except NotFound:
                continue  # already deleted (by a concurrent delete)

    def _chain_sources(
        self, person_id: str, path: tuple[str, ...], key: str, live: LiveClaim
    ) -> list[str]:
        """The live captures of every version of the item, oldest first."""
        try:
            chain = self._db.run("history", {**self._scope(person_id), "claim_id": live.id})
        except LimitExceeded:
            # A history too large to read in one page: the first capture still goes (the
            # intermediate corrections' captures stay, tombstoned claims' texts aside).
            first = self._db.run(
                "captures",
                {**self._scope(person_id), "key_prefix": mapping.key_prefix(path, key)},
            )
            return [capture.source_id for capture in first]
        sources: list[str] = []
        for version in chain.versions:
            for evidence in version.evidence:
                if evidence.deleted_at is None and evidence.source_id not in sources:
                    sources.append(evidence.source_id)
        return sources
