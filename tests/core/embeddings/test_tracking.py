"""The trigger-kept structures behind fast ``projections`` and the incremental dense cache.

``projections`` walks a per-lane backlog instead of every target, and the dense cache re-reads only
the targets ticked in ``embedding_dirty`` (see :mod:`zkr.store._embedding_tracking`). Both must give
exactly what a full recomputation gives, after any sequence of operations and raw SQL edits:
these properties drive random sequences and compare the fast answers with the exact full scan.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zkr.embeddings.backlog as backlog
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.dense import DenseScan, cached_lanes, dense_ranking
from zkr.embeddings.projections import current_lane
from zkr.errors import ZkrError

SCOPES = [("t", "p"), ("t", "q")]
LANES = [("m", "v"), ("m2", "v")]
# Dyadic values: every score is exact whatever the summation order, so rankings compare exactly.
VECTORS = [[1.0, 0.0], [0.0, 1.0], [0.75, 0.5], [1.0, 1.0], [-1.0, 0.5], [0.0, 0.0]]
KINDS = ["source", "evidence", "claim"]


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class World:
    """One database and the ids created so far; every operation swallows refusals."""

    def __init__(self, db: MemoryDb) -> None:
        self.db = db
        self.clock = 10
        self.ids: dict[str, list[tuple[int, str]]] = {kind: [] for kind in KINDS}

    def scope(self, index: int, **extra: Any) -> dict[str, Any]:
        tenant, person = SCOPES[index % len(SCOPES)]
        return {"tenant_id": tenant, "person_id": person, **extra}

    def pick(self, kind: str, ref: int) -> tuple[int, str] | None:
        pool = self.ids[kind]
        return pool[ref % len(pool)] if pool else None

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def run(self, op: tuple[Any, ...]) -> None:
        with contextlib.suppress(ZkrError):
            getattr(self, op[0])(*op[1:])

    # -- operations ------------------------------------------------------------------------

    def remember(self, scope: int, claim: bool, word: int) -> None:
        at = self.tick()
        payload = self.scope(
            scope, kind="conversation", text=f"note {word} at {at}", captured_at=at, recorded_at=at
        )
        if claim:
            payload["claim"] = {
                "subject": "Sam",
                "predicate": "likes",
                "value": f"thing {word}",
                "kind": "fact",
                "valid_from": at,
            }
        result = self.db.remember(m.RememberRequest.model_validate(payload))
        self.ids["source"].append((scope, result.source_id))
        self.ids["evidence"].append((scope, result.evidence_id))
        if result.claim_id is not None:
            self.ids["claim"].append((scope, result.claim_id))

    def correct(self, ref: int) -> None:
        picked = self.pick("claim", ref)
        if picked is None:
            return
        scope, claim_id = picked
        at = self.tick()
        result = self.db.correct(
            m.CorrectRequest.model_validate(
                self.scope(
                    scope,
                    claim_id=claim_id,
                    text=f"Actually {at}",
                    value=f"fixed {at}",
                    valid_at=at,
                    recorded_at=at,
                )
            )
        )
        self.ids["claim"].append((scope, result.claim_id))
        self.ids["source"].append((scope, result.source_id))
        self.ids["evidence"].append((scope, result.evidence_id))

    def delete(self, ref: int) -> None:
        picked = self.pick("source", ref)
        if picked is not None:
            self.db.delete(
                m.DeleteRequest.model_validate(
                    self.scope(picked[0], source_id=picked[1], deleted_at=self.tick())
                )
            )

    def link(self, claim_ref: int, evidence_ref: int, supports: bool) -> None:
        claim, evidence = self.pick("claim", claim_ref), self.pick("evidence", evidence_ref)
        if claim is None or evidence is None:
            return
        self.db.link(
            m.LinkRequest.model_validate(
                self.scope(
                    claim[0],
                    claim_id=claim[1],
                    evidence_id=evidence[1],
                    relation="supports" if supports else "contradicts",
                    confidence_basis_points=5000,
                )
            )
        )

    def text(self, kind: str, target_id: str) -> str | None:
        sql = {
            "source": "SELECT content FROM sources WHERE id = ?",
            "evidence": "SELECT quote FROM evidence WHERE id = ?",
            "claim": "SELECT subject || ' ' || predicate || ' ' || value FROM claims WHERE id = ?",
        }[kind]
        row = self.db.conn.execute(sql, (target_id,)).fetchone()
        return None if row is None else str(row[0])

    def embed(self, kind: int, ref: int, lane: int, vector: int, dot: bool, wide: bool) -> None:
        picked = self.pick(KINDS[kind % 3], ref)
        if picked is None:
            return
        scope, target_id = picked
        text = self.text(KINDS[kind % 3], target_id)
        if text is None:
            return
        model, version = LANES[lane % len(LANES)]
        values = VECTORS[vector % len(VECTORS)] + ([0.5] if wide else [])
        self.db.embed(
            m.EmbedRequest.model_validate(
                self.scope(
                    scope,
                    target={"kind": KINDS[kind % 3], "id": target_id},
                    embedding={
                        "vector": values,
                        "model": model,
                        "version": version,
                        "input_hash": sha(text),
                        "normalization": "none",
                        "distance": "dot" if dot else "cosine",
                    },
                )
            )
        )

    def raw(self, statement: int, ref: int) -> None:
        """A raw SQL edit, as a host or a repair script could make behind zkr's back."""
        kind = KINDS[ref % 3]
        picked = self.pick(kind, ref // 3)
        if picked is None:
            return
        target_id = picked[1]
        table = {"source": "sources", "evidence": "evidence", "claim": "claims"}[kind]
        text_column = {"source": "content", "evidence": "quote", "claim": "value"}[kind]
        revision = {"source": "revision", "evidence": "source_revision", "claim": "recorded_from"}
        statements = [
            f"UPDATE {table} SET {text_column} = {text_column} || ' edited' WHERE id = ?",
            f"UPDATE {table} SET {revision[kind]} = {revision[kind]} + 1 WHERE id = ?",
            "UPDATE sources SET deleted_at = NULL WHERE id = ?",
            "UPDATE evidence SET deleted_at = NULL WHERE id = ?",
            "UPDATE evidence SET deleted_at = 5 WHERE id = ?",
            "UPDATE claims SET valid_until = valid_from + 1 WHERE id = ?",
            "UPDATE claims SET valid_until = NULL, recorded_until = NULL, status = 'accepted'"
            " WHERE id = ?",
            "UPDATE embeddings SET vector = X'00' WHERE target_id = ?",
            "UPDATE embeddings SET normalization = '\"l2\"' WHERE target_id = ?",
            "DELETE FROM embeddings WHERE target_id = ?",
            # A copy of the row re-inserted by REPLACE: same bytes, but no certificate.
            "INSERT OR REPLACE INTO embeddings SELECT * FROM embeddings WHERE target_id = ?",
            # An uncertified row with a 3-dimension vector (a mixed lane).
            "INSERT OR IGNORE INTO embeddings SELECT tenant_id, person_id, target_kind,"
            " target_id, 'm', 'v', 3, input_hash, normalization, distance,"
            " X'0000803f0000803f0000803f', target_revision, created_at FROM embeddings"
            " WHERE target_id = ? AND model = 'm2'",
            "UPDATE sources SET deleted_at = 99 WHERE id = ?",
        ]
        sql = statements[statement % len(statements)]
        if sql.startswith("UPDATE sources") and kind == "evidence":
            row = self.db.conn.execute(
                "SELECT source_id FROM evidence WHERE id = ?", (target_id,)
            ).fetchone()
            target_id = row[0]  # the evidence's source
        elif sql.startswith(("UPDATE sources", "UPDATE evidence", "UPDATE claims")) and (
            table not in sql.split(" SET")[0]
        ):
            return
        try:
            with self.db.atomic() as conn:
                conn.execute(sql, (target_id,))
        except (sqlite3.Error, ZkrError):
            pass

    def search(self, scope: int, lane: int, vector: int) -> None:
        """A dense search through ``db.search``: builds or refreshes the cached lane."""
        model, version = LANES[lane % len(LANES)]
        self.db.search(
            m.SearchRequest.model_validate(
                self.scope(
                    scope,
                    query="note",
                    query_embedding={
                        "model": model,
                        "version": version,
                        "vector": VECTORS[vector % len(VECTORS)],
                    },
                )
            )
        )

    def projections_now(self) -> None:
        for scope in range(len(SCOPES)):
            for model, version in LANES:
                self.db.projections(
                    m.ProjectionsRequest.model_validate(
                        self.scope(scope, model=model, version=version, limit=100)
                    )
                )


OPERATION = st.one_of(
    st.tuples(st.just("remember"), st.integers(0, 1), st.booleans(), st.integers(0, 5)),
    st.tuples(st.just("remember"), st.integers(0, 1), st.booleans(), st.integers(0, 5)),
    st.tuples(st.just("correct"), st.integers(0, 30)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("link"), st.integers(0, 30), st.integers(0, 30), st.booleans()),
    st.tuples(
        st.just("embed"),
        st.integers(0, 2),
        st.integers(0, 30),
        st.integers(0, 1),
        st.integers(0, len(VECTORS) - 1),
        st.booleans(),
        st.integers(0, 9).map(lambda n: n == 0),
    ),
    st.tuples(
        st.just("embed"),
        st.integers(0, 2),
        st.integers(0, 30),
        st.integers(0, 1),
        st.integers(0, len(VECTORS) - 1),
        st.just(False),
        st.just(False),
    ),
    st.tuples(st.just("raw"), st.integers(0, 12), st.integers(0, 90)),
    st.tuples(st.just("projections_now")),
)
SEARCH = st.tuples(
    st.just("search"), st.integers(0, 1), st.integers(0, 1), st.integers(0, len(VECTORS) - 1)
)


@pytest.fixture
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    db = MemoryDb(tmp_path_factory.mktemp("tracking") / "memory.db")
    try:
        yield World(db)
    finally:
        db.close()


def all_issues(db: MemoryDb, scope: tuple[str, str], lane: tuple[str, str], *, fast: bool) -> Any:
    """Every issue of (scope, lane) in order, by the backlog walk or by the full scan."""
    tenant, person = scope
    with db.atomic(write=False) as conn:
        config = current_lane(conn, tenant, person, *lane)
        covered = backlog.backlog_covers(conn, (tenant, person, *lane), config)
        issues = list(backlog.iter_issues(conn, (tenant, person, *lane), config, walk_backlog=fast))
    return covered, [issue.model_dump(mode="json") for issue in issues]


def dense_answer(
    db: MemoryDb, scope: tuple[str, str], lane: tuple[str, str], *, cache: bool, vectors: int = 7
) -> Any:
    """Each query vector's whole dense list (or its error) from the cached lane or a fresh one."""
    answers = []
    for vector in [*VECTORS, [0.5, 0.25, 1.0]][:vectors]:
        query = m.QueryEmbedding.model_validate(
            {"model": lane[0], "version": lane[1], "vector": vector}
        )
        try:
            with db.atomic(write=False) as conn:
                answers.append(dense_ranking(DenseScan(db, conn, *scope, query, cache=cache)))
        except ZkrError as exc:
            answers.append(str(exc))
    return answers


def backlog_invariant_holds(db: MemoryDb) -> bool:
    """Every candidate without a certificate at its revision is in its registered lanes' backlog."""
    missing = db.conn.execute(
        """
        WITH candidates(tenant_id, person_id, kind, id, revision) AS (
          SELECT tenant_id, person_id, 'source', id, revision FROM sources WHERE deleted_at IS NULL
          UNION ALL
          SELECT v.tenant_id, v.person_id, 'evidence', v.id, v.source_revision FROM evidence v
            JOIN sources s ON s.id = v.source_id AND s.tenant_id = v.tenant_id
            AND s.person_id = v.person_id WHERE v.deleted_at IS NULL AND s.deleted_at IS NULL
          UNION ALL
          SELECT tenant_id, person_id, 'claim', id, recorded_from FROM claims
            WHERE status = 'accepted' AND valid_until IS NULL AND recorded_until IS NULL)
        SELECT count(*) FROM candidates c JOIN projection_lanes r
          ON r.tenant_id = c.tenant_id AND r.person_id = c.person_id
        WHERE NOT EXISTS (SELECT 1 FROM embedding_checks k WHERE k.tenant_id = c.tenant_id
            AND k.person_id = c.person_id AND k.target_kind = c.kind AND k.target_id = c.id
            AND k.model = r.model AND k.version = r.version AND k.target_revision = c.revision)
          AND NOT EXISTS (SELECT 1 FROM projection_backlog b WHERE b.tenant_id = c.tenant_id
            AND b.person_id = c.person_id AND b.model = r.model AND b.version = r.version
            AND b.target_kind = c.kind AND b.target_id = c.id)
        """
    ).fetchone()[0]
    return bool(missing == 0)


def assert_the_walk_lists_what_the_full_scan_lists(db: MemoryDb) -> None:
    """The backlog invariant holds and, in every scope and lane, the walk answers as the scan."""
    assert backlog_invariant_holds(db)
    for scope in SCOPES:
        for lane in LANES:
            _covered, fast = all_issues(db, scope, lane, fast=True)
            _, full = all_issues(db, scope, lane, fast=False)
            assert fast == full


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(operations=st.lists(OPERATION, min_size=1, max_size=40))
def test_backlog_walk_lists_exactly_what_the_full_scan_lists(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[Any, ...]]
) -> None:
    db = MemoryDb(tmp_path_factory.mktemp("tracking") / "memory.db")
    try:
        world = World(db)
        for op in operations:
            world.run(op)
        assert_the_walk_lists_what_the_full_scan_lists(db)
    finally:
        db.close()


def test_the_backlog_walk_is_taken_and_shrinks_as_targets_are_embedded(world: World) -> None:
    for word in range(6):
        world.remember(0, word % 2 == 0, word)
    world.embed(0, 0, 0, 0, False, False)  # registers lane m/v and fills its backlog
    backlog = "SELECT count(*) FROM projection_backlog WHERE model = 'm'"
    assert world.db.conn.execute(backlog).fetchone()[0] == 6 + 6 + 3 - 1
    for kind in range(3):
        for ref in range(6):
            world.run(("embed", kind, ref, 0, 2, False, False))
    assert world.db.conn.execute(backlog).fetchone()[0] == 0
    covered, issues = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    assert covered and issues == []
    world.raw(0, 0)  # edit a source's text: it is stale again, and back in the backlog
    covered, issues = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    assert covered and [(i["state"], i["input"]["target"]["kind"]) for i in issues] == [
        ("stale", "source")
    ]
    assert world.db.conn.execute(backlog).fetchone()[0] == 1


def test_an_uncertified_off_lane_row_is_in_the_backlog(world: World) -> None:
    world.remember(0, True, 1)
    world.embed(2, 0, 1, 0, False, False)  # the claim in lane m2/v, 2 dimensions
    world.embed(1, 0, 0, 0, False, False)  # evidence in lane m/v, 2 dimensions (certified)
    world.raw(11, 2)  # an uncertified 3-dimension copy of the claim's row in lane m/v
    covered, fast = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    _, full = all_issues(world.db, SCOPES[0], LANES[0], fast=False)
    assert covered and fast == full
    assert [(i["state"], i["input"]["target"]["kind"]) for i in fast] == [
        ("stale", "claim"),
        ("missing", "source"),
    ]


def test_certificates_of_two_configurations_fall_back_to_the_full_scan(world: World) -> None:
    world.remember(0, True, 1)
    world.embed(2, 0, 0, 0, False, False)  # the claim, 2 dimensions
    world.correct(0)  # superseded: its certificate stays, the lane has no counting row
    world.embed(2, 1, 0, 0, False, True)  # the new claim, 3 dimensions: allowed, no lane
    covered, fast = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    _, full = all_issues(world.db, SCOPES[0], LANES[0], fast=False)
    assert not covered and fast == full
    assert len(fast) == 4  # two sources, two evidence rows


def test_a_migrated_lane_is_scanned_until_embed_registers_it(world: World) -> None:
    world.remember(0, False, 1)
    world.embed(2, 0, 0, 0, False, False)
    world.db.conn.execute("DELETE FROM projection_lanes")
    world.db.conn.execute("DELETE FROM projection_backlog")
    covered, _ = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    assert not covered
    world.embed(1, 0, 0, 1, False, False)  # the next embed registers the lane again
    covered, fast = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
    _, full = all_issues(world.db, SCOPES[0], LANES[0], fast=False)
    assert covered and fast == full


_OLD_BACKLOG = """
CREATE TABLE projection_backlog(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  model TEXT NOT NULL, version TEXT NOT NULL, target_kind TEXT NOT NULL, target_id TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, model, version, target_kind, target_id)) WITHOUT ROWID;
CREATE INDEX projection_backlog_by_target ON projection_backlog(tenant_id,
  person_id, target_kind, target_id);
"""


def _backlog_rows(db: MemoryDb) -> list[tuple[str, ...]]:
    return db.conn.execute("SELECT * FROM projection_backlog ORDER BY 1, 2, 3, 4, 5, 6").fetchall()


def test_a_schema_15_backlog_is_rekeyed_with_its_rows(tmp_path: Path) -> None:
    """Schema 16 keys the backlog by target before lane and drops the index by target: a file
    written with the old key keeps every entry, and the triggers and the walk then work on it."""
    path = tmp_path / "v15.db"
    db = MemoryDb(path)
    try:
        world = World(db)
        populated(world)
        world.run(("remember", 0, True, 40))  # not embedded: in the backlog of both lanes
        world.run(("embed", 0, 8, 1, 1, False, False))  # registers lane m2/v
        expected = _backlog_rows(db)
        assert len({row[2] for row in expected}) == 2  # both lanes have entries
    finally:
        db.close()
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT * FROM projection_backlog").fetchall()
    conn.execute("PRAGMA legacy_alter_table = ON")  # the triggers name the table: not checked
    conn.execute("DROP TABLE projection_backlog")
    conn.executescript(_OLD_BACKLOG)
    conn.executemany("INSERT INTO projection_backlog VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.execute("PRAGMA user_version = 15")
    conn.commit()
    conn.close()
    db = MemoryDb(path)
    try:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == 16
        assert _backlog_rows(db) == expected
        indexes = db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'"
            " AND tbl_name = 'projection_backlog'"
        ).fetchall()
        assert indexes == []  # WITHOUT ROWID: the key is the table; no second B-tree
        key = [row[2] for row in db.conn.execute("PRAGMA index_info(projection_backlog)")]
        assert key[:4] == ["tenant_id", "person_id", "target_kind", "target_id"]
        world = World(db)
        world.run(("remember", 0, False, 41))
        assert_the_walk_lists_what_the_full_scan_lists(db)
        assert all_issues(db, SCOPES[0], LANES[0], fast=True)[0]  # the walk was taken
    finally:
        db.close()


def test_the_lane_walk_reads_the_backlog_by_its_key(world: World) -> None:
    """No full scan of the backlog and no sort: the walk is a range of the key, in id order."""
    world.remember(0, True, 1)
    world.embed(0, 0, 0, 0, False, False)
    checks = "embedding_checks"
    for kind in backlog._KIND_ORDER:
        sql = backlog._candidate_sql(kind, checks, None, True)
        plan = " | ".join(
            row[3]
            for row in world.db.conn.execute(
                f"EXPLAIN QUERY PLAN {sql}",
                {"tenant": "t", "person": "p", "model": "m", "version": "v", "after": ""},
            )
        )
        assert "SEARCH b USING PRIMARY KEY (tenant_id=? AND person_id=? AND target_kind=?" in plan
        assert "TEMP B-TREE" not in plan, plan


def test_reviving_a_source_by_raw_sql_brings_back_its_evidence(world: World) -> None:
    world.remember(0, False, 1)
    world.embed(0, 0, 0, 0, False, False)  # the source: certified; its evidence is missing
    for statement in (12, 2):  # raw tombstone of the source, then raw revival
        world.raw(statement, 0)
        covered, fast = all_issues(world.db, SCOPES[0], LANES[0], fast=True)
        _, full = all_issues(world.db, SCOPES[0], LANES[0], fast=False)
        assert covered and fast == full
    assert [(i["state"], i["input"]["target"]["kind"]) for i in fast] == [("missing", "evidence")]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(operations=st.lists(st.one_of(OPERATION, SEARCH, SEARCH), min_size=1, max_size=40))
def test_the_refreshed_dense_lane_equals_a_fresh_build(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[Any, ...]]
) -> None:
    db = MemoryDb(tmp_path_factory.mktemp("tracking") / "memory.db")
    try:
        world = World(db)
        populated(world)  # a cached lane first: the operations refresh it rather than build it
        world.run(("search", 0, 0, 0))
        world.run(("search", 1, 0, 0))
        for op in [*operations, ("search", 0, 0, 0), ("search", 0, 1, 0)]:
            world.run(op)
        for scope in SCOPES:
            for lane in LANES:
                fresh = dense_answer(db, scope, lane, cache=False)
                assert dense_answer(db, scope, lane, cache=True) == fresh
        assert cached_lanes(db)
    finally:
        db.close()


def populated(world: World) -> None:
    """Eight captures (some with claims, some linked to several claims), all embedded in m/v."""
    for word in range(8):
        world.run(("remember", word % 2, word % 3 == 0, word))
    for claim_ref, evidence_ref in ((0, 2), (1, 4), (0, 4), (2, 6)):
        world.run(("link", claim_ref, evidence_ref, True))
    for kind in range(3):
        for ref in range(8):
            world.run(("embed", kind, ref, 0, ref % 5, False, False))  # no zero vector


@pytest.mark.parametrize("statement", range(13))
def test_every_raw_edit_refreshes_the_cached_lane_exactly(world: World, statement: int) -> None:
    populated(world)
    answered = 0
    for ref in range(24):  # the statement applied to each target in turn
        world.run(("search", ref % 2, 0, ref))  # cache (or refresh) the lane first
        world.run(("raw", statement, ref))
        for scope in SCOPES:
            fresh = dense_answer(world.db, scope, LANES[0], cache=False, vectors=2)
            assert dense_answer(world.db, scope, LANES[0], cache=True, vectors=2) == fresh
            answered += sum(isinstance(answer, list) and len(answer) > 0 for answer in fresh)
    assert answered > 40  # most steps rank something (not an error, not empty)


@pytest.mark.parametrize("statement", range(13))
def test_every_raw_edit_keeps_the_backlog_exact(world: World, statement: int) -> None:
    for word in range(8):
        world.run(("remember", word % 2, word % 3 == 0, word))
    for kind in range(3):
        for ref in range(0, 8, 2):  # half of the targets embedded: the rest stay in the backlog
            world.run(("embed", kind, ref, 0, ref % 5, False, False))
    # The statement on every target in turn, then every revival on every target.
    steps = [(statement, ref) for ref in range(24)]
    steps += [(revival, ref) for revival in (2, 3, 6) for ref in range(24)]
    walked = 0
    for raw, ref in steps:
        world.run(("raw", raw, ref))
        assert backlog_invariant_holds(world.db)
        for scope in SCOPES:
            covered, fast = all_issues(world.db, scope, LANES[0], fast=True)
            assert fast == all_issues(world.db, scope, LANES[0], fast=False)[1]
            walked += covered
    assert walked > len(steps)  # the backlog walk answered most of them


# -- the lane saved beside the database (zkr.embeddings._lane_file) --------------------------
# The next process loads the file at its tick and refreshes it by what was ticked since; after any
# sequence of operations that answer must equal a fresh build. A file of another database is
# ignored, and an erasure zeroes and removes every file (they hold vectors derived from text).

import shutil  # noqa: E402  (this section's own imports, kept apart from the file's head)
from pathlib import Path  # noqa: E402

import zkr.embeddings.dense as dense  # noqa: E402
from zkr.embeddings.dense import LaneTuning  # noqa: E402
from zkr.store.sidecars import SIDECAR_SUFFIX  # noqa: E402

SAVE_ALL = LaneTuning(file_rows=1)


def _open(path: Path) -> MemoryDb:
    db = MemoryDb(path)
    db.lane_tuning = SAVE_ALL  # type: ignore[attr-defined]
    return db


def _lane_files(path: Path) -> list[Path]:
    folder = Path(str(path) + SIDECAR_SUFFIX)
    return sorted(folder.glob("lane-*.f32")) if folder.is_dir() else []


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Records every full build (a lane read from its file is not one)."""
    calls: list[Any] = []
    build = dense._build

    def counted(*args: Any) -> Any:
        calls.append(args[1])
        return build(*args)

    monkeypatch.setattr(dense, "_build", counted)
    return calls


def test_a_saved_lane_is_loaded_by_the_next_process_without_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    first = _open(path)
    populated(World(first))
    expected = dense_answer(first, SCOPES[0], LANES[0], cache=True)
    first.close()
    assert _lane_files(path)
    builds = _builds(monkeypatch)
    second = _open(path)
    try:
        assert dense_answer(second, SCOPES[0], LANES[0], cache=True) == expected
        assert builds == []
        assert cached_lanes(second)
    finally:
        second.close()


def _cached_answer_is_a_fresh_build(db: MemoryDb, *records: list[Any]) -> None:
    """Populate *db*, then check that its cached lane answers as a fresh build does; *records*
    (build or read logs) are cleared between the two, so they hold the cached answer's calls."""
    populated(World(db))
    fresh = dense_answer(db, SCOPES[0], LANES[0], cache=False)
    for record in records:
        record.clear()
    assert dense_answer(db, SCOPES[0], LANES[0], cache=True) == fresh


def test_the_process_that_saves_a_lane_keeps_the_copy_read_back_from_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A build's temporaries leave its memory scattered; the lane read back from the file it was
    # just saved to is the same lane in less resident memory (issue 27.5's serve RSS).
    path = tmp_path / "memory.db"
    builds = _builds(monkeypatch)
    reads: list[Any] = []
    read = dense.read_lane

    def recorded(*args: Any) -> Any:
        lane = read(*args)
        reads.append(lane)
        return lane

    monkeypatch.setattr(dense, "read_lane", recorded)
    db = _open(path)
    try:
        _cached_answer_is_a_fresh_build(db, builds, reads)
        assert len(builds) == 1 and _lane_files(path)
        kept = [lane for lane in cached_lanes(db).values()]
        assert len(kept) == 1 and reads[-1] is kept[0]  # the file's copy, not the build's
    finally:
        db.close()


def test_a_built_lane_holds_one_tuple_per_target_that_is_also_a_row(tmp_path: Path) -> None:
    # The mapping's targets arrive as new tuples; a target that is also one of the lane's rows is
    # kept as that row's own tuple (issue 27.5: at 100k that second copy was ~18 MB, and the
    # whole mapping held at once ~37 MB more at the build's peak).
    db = MemoryDb(tmp_path / "memory.db")
    db.lane_tuning = LaneTuning(file_rows=0)  # type: ignore[attr-defined]  # no file: the build
    try:
        _cached_answer_is_a_fresh_build(db)
        (lane,) = cached_lanes(db).values()
        shared = [t for t in lane.target_keys if t in lane.slot_of]
        assert shared  # the fixture has rows that count for themselves
        assert all(t is lane.slot_target[lane.slot_of[t]] for t in shared)
    finally:
        db.close()


def test_a_lane_that_cannot_be_saved_is_kept_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    monkeypatch.setattr(dense, "save_lane", lambda *args: False)  # e.g. a read-only folder
    builds = _builds(monkeypatch)
    db = _open(path)
    try:
        _cached_answer_is_a_fresh_build(db, builds)
        assert len(builds) == 1 and _lane_files(path) == []
    finally:
        db.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(OPERATION, min_size=1, max_size=30))
def test_a_lane_read_from_its_file_and_refreshed_equals_a_fresh_build(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[Any, ...]]
) -> None:
    path = tmp_path_factory.mktemp("lanefile") / "memory.db"
    first = _open(path)
    try:
        populated(World(first))
        for scope in SCOPES:
            for lane in LANES:
                dense_answer(first, scope, lane, cache=True, vectors=1)  # builds and saves
        world = World(first)
        for op in operations:  # changes the saved lanes never saw
            world.run(op)
    finally:
        first.close()
    second = _open(path)
    try:
        for scope in SCOPES:
            for lane in LANES:
                fresh = dense_answer(second, scope, lane, cache=False)
                assert dense_answer(second, scope, lane, cache=True) == fresh
    finally:
        second.close()


def test_a_lane_file_of_another_database_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, other = tmp_path / "one.db", tmp_path / "other.db"
    for path, word in ((one, 1), (other, 2)):
        db = _open(path)
        world = World(db)
        populated(world)
        world.run(("remember", 0, True, word))
        dense_answer(db, SCOPES[0], LANES[0], cache=True, vectors=1)
        db.close()
    theirs = _lane_files(one)[0]
    shutil.copyfile(theirs, _lane_files(other)[0])  # same lane key, another history
    builds = _builds(monkeypatch)
    db = _open(other)
    try:
        fresh = dense_answer(db, SCOPES[0], LANES[0], cache=False)
        builds.clear()
        assert dense_answer(db, SCOPES[0], LANES[0], cache=True) == fresh
        assert len(builds) == 1  # the copied file was refused: the lane was built
    finally:
        db.close()


def test_an_erasure_zeroes_and_removes_the_lane_files(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    db = _open(path)
    try:
        world = World(db)
        populated(world)
        dense_answer(db, SCOPES[0], LANES[0], cache=True, vectors=1)
        assert _lane_files(path)
        scope, source_id = next(pick for pick in world.ids["source"] if pick[0] == 0)
        tenant, person = SCOPES[scope]
        db.forget(
            m.ForgetRequest.model_validate(
                {"tenant_id": tenant, "person_id": person, "source_id": source_id, "erased_at": 99}
            )
        )
        assert _lane_files(path) == []
    finally:
        db.close()
