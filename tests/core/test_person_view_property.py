"""``memories`` and ``history`` as properties of random histories across scopes (issue 14).

Random sequences of remember (with or without a claim, several kinds), correct, link, delete and
forget run in three scopes, with ids picked from every scope. Then, for every scope:

* paging ``memories`` with a small limit (now, or ``as_of`` a random time) lists exactly what a
  literal reading of the tables says a scope holds (live current - or then visible - claims with
  live support, live captures with live evidence), newest first, each item once, and nothing of
  another scope (ids and marker words);
* ``history`` answers for **every** claim id ``remember`` or ``correct`` ever returned in that
  scope, each chain holds the asked id and only that scope's claims, and the same id asked from
  another scope is exactly ``record not found``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import NotFound, ZkrError

SCOPES = [("a", "sam"), ("b", "sam"), ("a", "max")]
MARKERS = ["alpha", "bravo", "charlie"]
SOURCE_KINDS = ["conversation", "document", "screen"]
CLAIM_KINDS = ["fact", "preference", "task"]

scope_ix = st.integers(0, len(SCOPES) - 1)
ref = st.integers(0, 30)
operation = st.one_of(
    st.tuples(
        st.just("remember"),
        scope_ix,
        st.none() | st.sampled_from(CLAIM_KINDS),
        st.sampled_from(SOURCE_KINDS),
    ),
    st.tuples(st.just("correct"), scope_ix, ref),
    st.tuples(st.just("link"), scope_ix, ref, ref),
    st.tuples(st.just("delete"), scope_ix, ref),
    st.tuples(st.just("forget"), scope_ix, ref),
)


@dataclass
class World:
    db: MemoryDb
    clock: int = 100
    owner: dict[str, int] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    #: Every claim id remember or correct returned, with its scope.
    returned_claims: dict[str, int] = field(default_factory=dict)

    def tick(self) -> int:
        self.clock += 10
        return self.clock

    def pick(self, pool: list[str], index: int) -> str:
        return pool[index % len(pool)] if pool else "f" * 32

    def scope(self, s: int) -> dict[str, str]:
        return {"tenant_id": SCOPES[s][0], "person_id": SCOPES[s][1]}

    def own(self, s: int, **ids: str | None) -> None:
        for pool_name, value in ids.items():
            if value is not None:
                self.owner.setdefault(value, s)
                getattr(self, pool_name).append(value)

    def run(self, op: tuple[Any, ...]) -> None:
        name, s = op[0], op[1]
        at = self.tick()
        try:
            if name == "remember":
                _, _, claim_kind, source_kind = op
                payload: dict[str, Any] = {
                    **self.scope(s),
                    "kind": source_kind,
                    "text": f"{MARKERS[s]} note {at}",
                    "captured_at": at,
                    "recorded_at": at,
                }
                if claim_kind is not None:
                    payload["claim"] = {
                        "subject": "Sam",
                        "predicate": f"topic{at}",
                        "value": f"{MARKERS[s]} value",
                        "kind": claim_kind,
                        "valid_from": at,
                    }
                r = self.db.remember(m.RememberRequest.model_validate(payload))
                self.own(s, sources=r.source_id, evidence=r.evidence_id, claims=r.claim_id)
                if r.claim_id is not None:
                    self.returned_claims[r.claim_id] = s
            elif name == "correct":
                c = self.db.correct(
                    m.CorrectRequest(
                        **self.scope(s),
                        claim_id=self.pick(self.claims, op[2]),
                        text=f"{MARKERS[s]} correction {at}",
                        value=f"{MARKERS[s]} corrected",
                        valid_at=at,
                        recorded_at=at,
                    )
                )
                self.own(s, sources=c.source_id, evidence=c.evidence_id, claims=c.claim_id)
                self.returned_claims[c.claim_id] = s
            elif name == "link":
                self.db.link(
                    m.LinkRequest.model_validate(
                        {
                            **self.scope(s),
                            "claim_id": self.pick(self.claims, op[2]),
                            "evidence_id": self.pick(self.evidence, op[3]),
                            "relation": "supports",
                            "confidence_basis_points": 8000,
                        }
                    )
                )
            elif name == "delete":
                self.db.delete(
                    m.DeleteRequest(
                        **self.scope(s), source_id=self.pick(self.sources, op[2]), deleted_at=at
                    )
                )
            else:
                self.db.forget(
                    m.ForgetRequest(
                        **self.scope(s), source_id=self.pick(self.sources, op[2]), erased_at=at
                    )
                )
        except ZkrError:
            pass


def literal_listing(
    db: MemoryDb, tenant: str, person: str, at: int | None
) -> list[tuple[int, str]]:
    """What a scope holds (now, or at valid = recorded = *at*), read plainly: (recorded, id),
    newest first."""
    if at is not None:
        return literal_listing_as_of(db, tenant, person, at)
    claims = db.conn.execute(
        "SELECT c.recorded_from, c.id FROM claims c WHERE c.tenant_id = ? AND c.person_id = ?"
        " AND c.status = 'accepted' AND c.valid_until IS NULL AND c.recorded_until IS NULL"
        " AND EXISTS (SELECT 1 FROM claim_evidence ce JOIN evidence e ON e.id = ce.evidence_id"
        " JOIN sources s ON s.id = e.source_id WHERE ce.claim_id = c.id"
        " AND ce.relation = '\"supports\"' AND e.deleted_at IS NULL AND s.deleted_at IS NULL)",
        (tenant, person),
    ).fetchall()
    sources = db.conn.execute(
        "SELECT s.recorded_at, s.id FROM sources s WHERE s.tenant_id = ? AND s.person_id = ?"
        " AND s.deleted_at IS NULL AND EXISTS (SELECT 1 FROM evidence e"
        " WHERE e.source_id = s.id AND e.deleted_at IS NULL)",
        (tenant, person),
    ).fetchall()
    return sorted([*claims, *sources], reverse=True)


def literal_listing_as_of(db: MemoryDb, tenant: str, person: str, at: int) -> list[tuple[int, str]]:
    claims = db.conn.execute(
        "SELECT c.recorded_from, c.id FROM claims c WHERE c.tenant_id = :t AND c.person_id = :p"
        " AND c.status IN ('accepted', 'superseded') AND c.valid_from <= :at"
        " AND (c.valid_until IS NULL OR :at < c.valid_until) AND c.recorded_from <= :at"
        " AND (c.recorded_until IS NULL OR :at < c.recorded_until)"
        " AND EXISTS (SELECT 1 FROM claim_evidence ce JOIN evidence e ON e.id = ce.evidence_id"
        " JOIN sources s ON s.id = e.source_id WHERE ce.claim_id = c.id"
        " AND ce.relation = '\"supports\"' AND e.deleted_at IS NULL AND s.deleted_at IS NULL"
        " AND e.recorded_at <= :at AND s.captured_at <= :at AND s.recorded_at <= :at)",
        {"t": tenant, "p": person, "at": at},
    ).fetchall()
    sources = db.conn.execute(
        "SELECT s.recorded_at, s.id FROM sources s WHERE s.tenant_id = :t AND s.person_id = :p"
        " AND s.deleted_at IS NULL AND s.captured_at <= :at AND s.recorded_at <= :at"
        " AND EXISTS (SELECT 1 FROM evidence e WHERE e.source_id = s.id"
        " AND e.deleted_at IS NULL AND e.recorded_at <= :at)",
        {"t": tenant, "p": person, "at": at},
    ).fetchall()
    return sorted([*claims, *sources], reverse=True)


def listed(
    db: MemoryDb, tenant: str, person: str, limit: int, at: int | None
) -> list[m.MemoryListItem]:
    as_of = None if at is None else m.AsOf(valid_at=at, recorded_at=at)
    items: list[m.MemoryListItem] = []
    cursor = None
    while True:
        page = db.memories(
            m.MemoriesRequest(
                tenant_id=tenant, person_id=person, limit=limit, cursor=cursor, as_of=as_of
            )
        )
        assert len(page.items) <= limit
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(operation, min_size=1, max_size=40),
    limit=st.integers(1, 7),
    at=st.none() | st.integers(100, 600),
)
def test_memories_and_history_stay_in_scope(
    ops: list[tuple[Any, ...]], limit: int, at: int | None
) -> None:
    with MemoryDb(":memory:") as db:
        check_world(db, ops, limit, at)


def check_world(db: MemoryDb, ops: list[tuple[Any, ...]], limit: int, at: int | None) -> None:
    world = World(db)
    for op in ops:
        world.run(op)

    for s, (tenant, person) in enumerate(SCOPES):
        items = listed(db, tenant, person, limit, at)
        keys = [(item.recorded_at, item.memory.id) for item in items]
        assert keys == literal_listing(db, tenant, person, at)
        for item in items:
            assert world.owner[item.memory.id] == s
            assert all(world.owner[e] == s for e in item.evidence_ids) and item.evidence_ids
            text = item.model_dump_json()
            assert not any(marker in text for i, marker in enumerate(MARKERS) if i != s)

    for claim_id, s in world.returned_claims.items():
        chain = db.history(m.HistoryRequest(**world.scope(s), claim_id=claim_id))
        ids = [version.claim.id for version in chain.versions]
        assert claim_id in ids and len(set(ids)) == len(ids)
        for version in chain.versions:
            assert (version.claim.tenant_id, version.claim.person_id) == SCOPES[s]
            assert all(world.owner[e.evidence_id] == s for e in version.evidence)
        assert [e.at for e in chain.events] == sorted(e.at for e in chain.events)
        for other in range(len(SCOPES)):
            if other == s:
                continue
            try:
                db.history(m.HistoryRequest(**world.scope(other), claim_id=claim_id))
            except NotFound as exc:
                assert str(exc) == "record not found"
            else:
                raise AssertionError("history answered for another scope's claim")
