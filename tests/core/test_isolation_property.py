"""Scope isolation, as a property: random operation sequences across scopes (issue 3, acceptance 3).

Operations pick record ids from every scope. An id of another scope must behave exactly like a
missing id (same error, or ``None`` for ``locator``) and change nothing; reads (search, current,
dense and ``as_of``; get, profiles, reviews, projections, export) never show another scope's id or
text; ``embed`` cannot project another scope's target; an export cursor naming another scope's
commit is refused exactly like one naming no commit; every feed record carries its commit's scope.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.conftest import table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash
from zkr.errors import ExportError, ZkrError

SCOPES = [("a", "sam"), ("b", "sam"), ("a", "max")]
# A word that appears only in the texts and values of one scope.
MARKERS = ["alpha", "bravo", "charlie"]
MISSING = "f" * 32
# The one embedding lane every ``embed`` writes to, so that dense searches have rows to scan.
MODEL, VERSION, VECTOR = "m", "v", [1.0, 0.0]
TEXT_OF = {
    "source": "SELECT content FROM sources WHERE id = ?",
    "evidence": "SELECT quote FROM evidence WHERE id = ?",
    "claim": "SELECT subject || ' ' || predicate || ' ' || value FROM claims WHERE id = ?",
}


@dataclass
class Registry:
    """Which scope owns each id created so far, and what the keyed memories returned."""

    owner: dict[str, int] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    keyed: dict[tuple[int, int, bool], m.RememberResult] = field(default_factory=dict)

    def pick(self, pool: list[str], index: int) -> str:
        return pool[index % len(pool)] if pool else MISSING


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except ZkrError as exc:
        return (type(exc).__name__, str(exc))


scope_ix = st.integers(0, len(SCOPES) - 1)
ref = st.integers(0, 40)
operation = st.one_of(
    st.tuples(
        st.just("remember"), scope_ix, st.booleans(), st.booleans(), st.none() | st.integers(0, 2)
    ),
    st.tuples(st.just("correct"), scope_ix, ref),
    st.tuples(st.just("link"), scope_ix, ref, ref, st.sampled_from(["supports", "contradicts"])),
    st.tuples(st.just("delete"), scope_ix, ref),
    st.tuples(st.just("profile"), scope_ix, ref),
    st.tuples(st.just("review"), scope_ix, st.lists(ref, min_size=1, max_size=3)),
    st.tuples(st.just("locator"), scope_ix, ref),
    st.tuples(st.just("get"), scope_ix, st.sampled_from(["source", "evidence", "claim"]), ref),
    st.tuples(
        st.just("search"),
        scope_ix,
        st.sampled_from(["shared", *MARKERS]),
        st.none() | st.integers(0, 400),  # as_of valid_at = recorded_at
        st.booleans(),  # with a query embedding (dense is used only without as_of)
    ),
    st.tuples(st.just("embed"), scope_ix, st.sampled_from(["source", "evidence", "claim"]), ref),
    st.tuples(st.just("projections"), scope_ix),
    st.tuples(st.just("export"), scope_ix, ref),
)


class Driver:
    def __init__(self, db: MemoryDb) -> None:
        self.db = db
        self.reg = Registry()
        self.clock = 100

    def tick(self) -> int:
        self.clock += 10
        return self.clock

    # --------------------------------------------------------------------- mutations and reads

    def remember(self, s: int, with_claim: bool, profile_kind: bool, key: int | None) -> None:
        tenant, person = SCOPES[s]
        marker = MARKERS[s]
        # Keyed memories use a fixed payload per (scope, key, claim) so that replays happen.
        at = 5 if key is not None else self.tick()
        payload: dict[str, Any] = {
            "tenant_id": tenant,
            "person_id": person,
            "kind": "conversation",
            "text": f"shared {marker} note {key if key is not None else at}",
            "captured_at": at,
            "recorded_at": at,
            "ingestion_key": None if key is None else f"key-{key}",
        }
        if with_claim:
            payload["claim"] = {
                "subject": "Sam",
                "predicate": f"topic{key if key is not None else at}",
                "value": f"{marker} value",
                "kind": "profile_fact" if profile_kind else "fact",
                "valid_from": at,
            }
        before = table_snapshot(self.db)
        kind, result = outcome(lambda: self.db.remember(m.RememberRequest.model_validate(payload)))
        if kind != "ok":
            assert table_snapshot(self.db) == before
            return
        if key is not None:
            first = self.reg.keyed.setdefault((s, key, with_claim), result)
            assert result == first  # a replay returns the original ids
        for pool, value in (
            (self.reg.sources, result.source_id),
            (self.reg.evidence, result.evidence_id),
            (self.reg.claims, result.claim_id),
        ):
            if value is not None and value not in self.reg.owner:
                self.reg.owner[value] = s
                pool.append(value)

    def guarded(
        self, s: int, ids: list[str], call: Callable[[list[str]], Any], on_ok: Callable[[Any], None]
    ) -> None:
        """Run *call*; when it names another scope's id, compare it with a missing id instead."""
        foreign = [i for i in ids if self.reg.owner.get(i, s) != s]
        before = table_snapshot(self.db)
        kind, result = outcome(lambda: call(ids))
        if foreign:
            assert table_snapshot(self.db) == before, "a foreign id changed the database"
            substituted = [MISSING if i in foreign else i for i in ids]
            expected = outcome(lambda: call(substituted))
            assert table_snapshot(self.db) == before
            assert _normalise(kind, result, foreign) == _normalise(*expected, [MISSING])
            return
        if kind == "ok":
            on_ok(result)
        else:
            assert table_snapshot(self.db) == before, "a failed operation changed the database"

    def correct(self, s: int, r: int) -> None:
        tenant, person = SCOPES[s]
        at = self.tick()

        def call(ids: list[str]) -> m.CorrectResult:
            return self.db.correct(
                m.CorrectRequest(
                    tenant_id=tenant,
                    person_id=person,
                    claim_id=ids[0],
                    text=f"shared {MARKERS[s]} correction",
                    value=f"{MARKERS[s]} corrected",
                    valid_at=at,
                    recorded_at=at,
                )
            )

        def on_ok(result: m.CorrectResult) -> None:
            for pool, value in (
                (self.reg.sources, result.source_id),
                (self.reg.evidence, result.evidence_id),
                (self.reg.claims, result.claim_id),
            ):
                self.reg.owner[value] = s
                pool.append(value)

        self.guarded(s, [self.reg.pick(self.reg.claims, r)], call, on_ok)

    def link(self, s: int, c: int, e: int, relation: str) -> None:
        tenant, person = SCOPES[s]

        def call(ids: list[str]) -> m.OkResult:
            return self.db.link(
                m.LinkRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "claim_id": ids[0],
                        "evidence_id": ids[1],
                        "relation": relation,
                        "confidence_basis_points": 10000 if relation == "supports" else 7000,
                    }
                )
            )

        ids = [self.reg.pick(self.reg.claims, c), self.reg.pick(self.reg.evidence, e)]
        self.guarded(s, ids, call, lambda _: None)

    def delete(self, s: int, r: int) -> None:
        tenant, person = SCOPES[s]
        at = self.tick()

        def call(ids: list[str]) -> m.DeleteResult:
            return self.db.delete(
                m.DeleteRequest(tenant_id=tenant, person_id=person, source_id=ids[0], deleted_at=at)
            )

        self.guarded(s, [self.reg.pick(self.reg.sources, r)], call, lambda _: None)

    def profile(self, s: int, r: int) -> None:
        tenant, person = SCOPES[s]
        at = self.tick()

        def call(ids: list[str]) -> m.ProfileEntry:
            return self.db.profile(
                m.ProfileRequest(
                    tenant_id=tenant,
                    person_id=person,
                    stability=m.ProfileStability.current,
                    claim_id=ids[0],
                    recorded_at=at,
                )
            )

        self.guarded(s, [self.reg.pick(self.reg.claims, r)], call, lambda _: None)

    def review(self, s: int, refs: list[int]) -> None:
        tenant, person = SCOPES[s]
        at = self.tick()

        def call(ids: list[str]) -> m.ReviewResult:
            return self.db.review(
                m.ReviewRequest(
                    tenant_id=tenant,
                    person_id=person,
                    day=f"day-{at}",
                    summary=f"{MARKERS[s]} review",
                    evidence_ids=ids,
                    recorded_at=at,
                )
            )

        ids = [self.reg.pick(self.reg.evidence, r) for r in refs]
        self.guarded(s, ids, call, lambda _: None)

    def locator(self, s: int, r: int) -> None:
        tenant, person = SCOPES[s]

        def call(ids: list[str]) -> m.LocatorInput | None:
            return self.db.locator(
                m.LocatorRequest(tenant_id=tenant, person_id=person, evidence_id=ids[0])
            )

        self.guarded(s, [self.reg.pick(self.reg.evidence, r)], call, lambda _: None)

    def get(self, s: int, kind: str, r: int) -> None:
        tenant, person = SCOPES[s]
        pool = {"source": self.reg.sources, "evidence": self.reg.evidence, "claim": self.reg.claims}

        def call(ids: list[str]) -> m.RetrievalItem:
            return self.db.get(
                m.GetRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "target": {"kind": kind, "id": ids[0]},
                    }
                )
            )

        self.guarded(s, [self.reg.pick(pool[kind], r)], call, lambda item: self.check_item(s, item))

    def search(self, s: int, word: str, as_of: int | None, dense: bool) -> None:
        tenant, person = SCOPES[s]
        request: dict[str, Any] = {
            "tenant_id": tenant,
            "person_id": person,
            "query": word,
            "limit": 100,
        }
        if as_of is not None:
            request["as_of"] = {"valid_at": as_of, "recorded_at": as_of}
        if dense:
            request["query_embedding"] = {"model": MODEL, "version": VERSION, "vector": VECTOR}
        pack = self.db.search(m.SearchRequest.model_validate(request))
        for item in pack.items:
            self.check_item(s, item)
        if word in MARKERS and word != MARKERS[s] and not dense:
            assert pack.items == []

    def embed(self, s: int, kind: str, r: int) -> None:
        tenant, person = SCOPES[s]
        pool = {"source": self.reg.sources, "evidence": self.reg.evidence, "claim": self.reg.claims}

        def call(ids: list[str]) -> m.EmbedResult:
            # The target's true hash, even for another scope's target: only scope may refuse it.
            row = self.db.conn.execute(TEXT_OF[kind], (ids[0],)).fetchone()
            digest = input_hash(row[0]) if row else "sha256:" + "0" * 64
            return self.db.embed(
                m.EmbedRequest.model_validate(
                    {
                        "tenant_id": tenant,
                        "person_id": person,
                        "target": {"kind": kind, "id": ids[0]},
                        "embedding": {
                            "vector": VECTOR,
                            "model": MODEL,
                            "version": VERSION,
                            "input_hash": digest,
                            "normalization": "none",
                            "distance": "dot",
                        },
                    }
                )
            )

        def on_ok(result: m.EmbedResult) -> None:
            assert self.reg.owner[result.target.id] == s

        self.guarded(s, [self.reg.pick(pool[kind], r)], call, on_ok)

    def projections(self, s: int) -> None:
        tenant, person = SCOPES[s]
        issues = self.db.projections(
            m.ProjectionsRequest(
                tenant_id=tenant, person_id=person, model=MODEL, version=VERSION, limit=100
            )
        )
        for issue in issues:
            assert self.reg.owner[issue.input.target.id] == s
            for other, marker in enumerate(MARKERS):
                if other != s:
                    assert marker not in issue.input.text

    def export(self, s: int, r: int) -> None:
        tenant, person = SCOPES[s]
        commits = self.db.conn.execute(
            "SELECT sequence, tenant_id, person_id FROM memory_commits ORDER BY sequence"
        ).fetchall()
        sequence, *scope = commits[r % len(commits)]

        def call(after_commit: int) -> m.ExportPage:
            return self.db.export(
                m.ExportRequest(
                    export_format=1,
                    tenant_id=tenant,
                    person_id=person,
                    after_commit=after_commit,
                    after_event_index=0,
                    limit=100,
                )
            )

        before = table_snapshot(self.db)
        kind, result = outcome(lambda: call(sequence))
        if tuple(scope) != (tenant, person):
            assert (kind, result) == (ExportError.__name__, "after_commit is not in scope")
            assert outcome(lambda: call(10**9)) == (kind, result)  # exactly like no commit at all
        else:
            assert kind == "ok"
            for commit in result.commits:
                assert (commit.sequence, commit.first_event_index) > (sequence, 0)
                for record in commit.records:
                    assert _record_scope(record) == (tenant, person)
        assert table_snapshot(self.db) == before

    # --------------------------------------------------------------------- visibility checks

    def check_item(self, s: int, item: m.RetrievalItem) -> None:
        assert self.reg.owner[item.memory.id] == s
        assert all(self.reg.owner[e] == s for e in item.evidence_ids)
        for other, marker in enumerate(MARKERS):
            if other != s:
                assert marker not in item.excerpt

    def check_listings_and_feed(self) -> None:
        for s, (tenant, person) in enumerate(SCOPES):
            for entry in self.db.profiles(
                m.ProfilesRequest(tenant_id=tenant, person_id=person, limit=100)
            ):
                assert (entry.tenant_id, entry.person_id) == (tenant, person)
                assert self.reg.owner[entry.claim_id] == s
            for review in self.db.reviews(
                m.ReviewsRequest(tenant_id=tenant, person_id=person, limit=100)
            ):
                assert all(self.reg.owner[e] == s for e in review.evidence_ids)
            after_commit, after_index = 0, -1
            while True:
                page = self.db.export(
                    m.ExportRequest(
                        export_format=1,
                        tenant_id=tenant,
                        person_id=person,
                        after_commit=after_commit,
                        after_event_index=after_index,
                        limit=100,
                    )
                )
                for commit in page.commits:
                    for record in commit.records:
                        assert _record_scope(record) == (tenant, person)
                after_commit, after_index = page.next_after_commit, page.next_after_event_index
                if page.complete:
                    break
        rows = self.db.conn.execute(
            "SELECT c.tenant_id, c.person_id, e.payload FROM memory_commits c"
            " JOIN memory_export_events e ON e.commit_sequence = c.sequence"
        ).fetchall()
        for tenant, person, payload in rows:
            assert _record_scope(json.loads(payload)) == (tenant, person)
            record = json.loads(payload)["record"]
            for value in _strings(record):
                if value in self.reg.owner:
                    assert SCOPES[self.reg.owner[value]] == (tenant, person)


def _record_scope(envelope: dict[str, Any]) -> tuple[str, str]:
    kind, record = envelope["kind"], envelope["record"]
    inner = record[kind] if kind in ("source", "evidence") else record
    return inner["tenant_id"], inner["person_id"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _normalise(kind: str, result: Any, ids: list[str]) -> tuple[str, Any]:
    if isinstance(result, str):
        for i in ids:
            result = result.replace(i, "<id>")
    return kind, result


@settings(max_examples=50, deadline=None)
@given(st.lists(operation, min_size=1, max_size=25))
def test_no_scope_sees_or_touches_another_scopes_records(ops: list[tuple[Any, ...]]) -> None:
    with MemoryDb(":memory:") as db:
        driver = Driver(db)
        # Every scope starts with something to point at.
        for s in range(len(SCOPES)):
            driver.remember(s, True, True, None)
        for name, *args in ops:
            getattr(driver, name)(*args)
        driver.check_listings_and_feed()
