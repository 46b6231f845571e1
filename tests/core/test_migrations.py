"""Opening older databases (contract §3.5, §9.5) and our v9 step (float32 vector BLOBs).

The legacy databases are built here by hand, one per schema version 0..8, with the table shapes each
zkr 0.2.x release wrote: the original tables (v1), ingestion keys and locators (v2), scope indexes
(v3), scope triggers (v4), claim kinds, profiles and embedding revisions (v5), source origins (v6),
interval triggers (v7) and the export feed (v8).
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.core.conftest import remember, table_snapshot
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import MigrationError, SchemaVersionError
from zkr.store import schema
from zkr.store._legacy import legacy_vector_blob

ORIGINAL_TABLES = """
CREATE TABLE sources(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  revision INTEGER NOT NULL, kind TEXT NOT NULL, content TEXT NOT NULL,
  captured_at INTEGER NOT NULL, recorded_at INTEGER NOT NULL, deleted_at INTEGER);
CREATE VIRTUAL TABLE source_fts USING fts5(source_id UNINDEXED, tenant_id UNINDEXED,
  person_id UNINDEXED, content, tokenize='unicode61');
CREATE TABLE evidence(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  source_id TEXT NOT NULL REFERENCES sources(id), source_revision INTEGER NOT NULL,
  quote TEXT NOT NULL, recorded_at INTEGER NOT NULL, deleted_at INTEGER);
CREATE TABLE claims(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  subject TEXT NOT NULL, predicate TEXT NOT NULL, value TEXT NOT NULL,
  valid_from INTEGER NOT NULL, valid_until INTEGER, recorded_from INTEGER NOT NULL,
  recorded_until INTEGER, status TEXT NOT NULL);
CREATE TABLE claim_evidence(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  claim_id TEXT NOT NULL REFERENCES claims(id), evidence_id TEXT NOT NULL REFERENCES evidence(id),
  relation TEXT NOT NULL, confidence_basis_points INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, claim_id, evidence_id));
CREATE TABLE daily_reviews(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  day TEXT NOT NULL, summary TEXT NOT NULL, evidence_ids TEXT NOT NULL,
  recorded_at INTEGER NOT NULL);
CREATE TABLE embeddings(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  target_kind TEXT NOT NULL, target_id TEXT NOT NULL, model TEXT NOT NULL, version TEXT NOT NULL,
  dimension INTEGER NOT NULL, input_hash TEXT NOT NULL, normalization TEXT NOT NULL,
  distance TEXT NOT NULL, vector TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id, model, version));
"""

V2 = """
ALTER TABLE sources ADD COLUMN ingestion_key TEXT;
CREATE TABLE evidence_locators(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  evidence_id TEXT NOT NULL REFERENCES evidence(id), device_id TEXT NOT NULL,
  provider TEXT NOT NULL, stream_id TEXT NOT NULL, segment_id TEXT NOT NULL,
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, evidence_id));
"""

V3 = """
CREATE INDEX sources_scope ON sources(tenant_id, person_id, id);
CREATE INDEX evidence_scope ON evidence(tenant_id, person_id, source_id);
CREATE INDEX claims_scope ON claims(tenant_id, person_id, status);
CREATE INDEX reviews_scope ON daily_reviews(tenant_id, person_id, day);
CREATE INDEX embeddings_scope ON embeddings(tenant_id, person_id, target_kind, target_id);
"""

V5 = """
ALTER TABLE claims ADD COLUMN kind TEXT NOT NULL DEFAULT 'fact';
ALTER TABLE embeddings ADD COLUMN target_revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE embeddings ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
CREATE TABLE profile_entries(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  key TEXT NOT NULL, value TEXT NOT NULL, stability TEXT NOT NULL,
  claim_id TEXT NOT NULL REFERENCES claims(id), recorded_at INTEGER NOT NULL);
CREATE INDEX profile_entries_scope ON profile_entries(tenant_id, person_id, recorded_at);
"""

V6 = """
ALTER TABLE sources ADD COLUMN origin_evidence_id TEXT;
ALTER TABLE sources ADD COLUMN origin_claim_id TEXT;
CREATE UNIQUE INDEX profile_entries_current ON profile_entries(tenant_id, person_id, key);
"""

V8 = """
CREATE TABLE corrections(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  superseded_claim_id TEXT NOT NULL REFERENCES claims(id),
  claim_id TEXT NOT NULL REFERENCES claims(id), source_id TEXT NOT NULL REFERENCES sources(id),
  evidence_id TEXT NOT NULL REFERENCES evidence(id), valid_at INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL, PRIMARY KEY(tenant_id, person_id, superseded_claim_id, claim_id));
CREATE TABLE memory_commits(sequence INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL,
  person_id TEXT NOT NULL, recorded_at INTEGER NOT NULL);
CREATE INDEX memory_commits_scope ON memory_commits(tenant_id, person_id, sequence);
CREATE TABLE memory_export_events(commit_sequence INTEGER NOT NULL
  REFERENCES memory_commits(sequence) ON DELETE CASCADE, event_index INTEGER NOT NULL,
  payload TEXT NOT NULL CHECK(json_valid(payload)), PRIMARY KEY(commit_sequence, event_index));
"""

CLAIM_TEXT = "Sam works at Acme"
RAW_TEXT = "a raw note about the blue notebook"


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def create_legacy(path: Path, version: int) -> None:
    """The tables a zkr 0.2.x release at *version* had (no rows); 0 means v1 tables, version 0."""
    conn = sqlite3.connect(path)
    conn.executescript(ORIGINAL_TABLES)
    if version >= 2:
        conn.executescript(V2)
    if version >= 3:
        conn.executescript(V3)
    if version >= 4:
        conn.executescript(schema.CORE_SCOPE_TRIGGERS)
    if version >= 5:
        conn.executescript(V5)
    if version >= 6:
        conn.executescript(V6 + schema.SOURCE_ORIGIN_TRIGGERS + schema.PROFILE_TRIGGERS)
    if version >= 7:
        conn.executescript(schema.INTERVAL_TRIGGERS)
    if version >= 8:
        conn.executescript(V8 + schema.CORRECTION_TRIGGERS)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def insert(conn: sqlite3.Connection, table: str, **row: Any) -> None:
    columns = ", ".join(row)
    marks = ", ".join("?" * len(row))
    conn.execute(f"INSERT INTO {table}({columns}) VALUES ({marks})", tuple(row.values()))


def populate(path: Path, version: int, *, tenant: str = "a", person: str = "sam") -> None:
    """A claim memory (s1/e1/c1), a raw memory whose evidence supports an old superseded claim
    (s2/e2/c0), a review, a source embedding and, from v5, a free-text profile entry."""
    conn = sqlite3.connect(path)
    scope = {"tenant_id": tenant, "person_id": person}
    for sid, eid, text in (("s1", "e1", CLAIM_TEXT), ("s2", "e2", RAW_TEXT)):
        source: dict[str, Any] = dict(
            id=sid, **scope, revision=1, kind='"conversation"', content=text,
            captured_at=10, recorded_at=10,
        )  # fmt: skip
        insert(conn, "sources", **source)
        insert(conn, "source_fts", source_id=sid, **scope, content=text)
        insert(
            conn, "evidence", id=eid, **scope, source_id=sid, source_revision=1, quote=text,
            recorded_at=10,
        )  # fmt: skip
    kind = {"kind": "profile_fact"} if version >= 5 else {}
    insert(
        conn, "claims", id="c1", **scope, subject="Sam", predicate="employer", value="Acme",
        valid_from=10, recorded_from=10, status="accepted", **kind,
    )  # fmt: skip
    # A legacy superseded claim whose valid time was never closed.
    insert(
        conn, "claims", id="c0", **scope, subject="Sam", predicate="notebook", value="blue",
        valid_from=5, recorded_from=5, recorded_until=8, status="superseded",
    )  # fmt: skip
    for cid, eid in (("c1", "e1"), ("c0", "e2")):
        insert(
            conn, "claim_evidence", **scope, claim_id=cid, evidence_id=eid,
            relation='"supports"', confidence_basis_points=10000,
        )  # fmt: skip
    insert(
        conn, "daily_reviews", id="r1", **scope, day="2024-01-01", summary="Sam at Acme",
        evidence_ids='["e1"]', recorded_at=12,
    )  # fmt: skip
    insert(
        conn, "embeddings", **scope, target_kind="source", target_id="s1", model="mini",
        version="1", dimension=2, input_hash=sha(CLAIM_TEXT), normalization='"l2"',
        distance='"cosine"', vector="[1.0,0.0]",
    )  # fmt: skip
    if version >= 5:
        # v5 stored free-text keys and values; from v6 they are the claim's predicate and value.
        key, value = ("company", "ACME Corp") if version == 5 else ("employer", "Acme")
        insert(
            conn, "profile_entries", id="p1", **scope, key=key, value=value,
            stability='"stable"', claim_id="c1", recorded_at=11,
        )  # fmt: skip
    if version >= 6:
        conn.execute("UPDATE sources SET origin_evidence_id = 'e1', origin_claim_id = 'c1'"
                     " WHERE id = 's1'")  # fmt: skip
        conn.execute("UPDATE sources SET origin_evidence_id = 'e2' WHERE id = 's2'")
    conn.commit()
    conn.close()


def legacy(tmp_path: Path, version: int, name: str = "legacy.db") -> Path:
    path = tmp_path / name
    create_legacy(path, version)
    populate(path, version)
    return path


def raw_snapshot(path: Path) -> tuple[int, list[Any], dict[str, list[Any]]]:
    """user_version, schema objects and every row, read without migrating."""
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        objects = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        rows = {
            name: sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for (kind, name, _) in objects
            if kind == "table" and name != "source_fts"
        }
        return version, objects, rows
    finally:
        conn.close()


def schema_shape(conn: sqlite3.Connection) -> dict[str, Any]:
    """Tables with their columns, plus index and trigger definitions (whitespace-insensitive)."""
    shape: dict[str, Any] = {}
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
        if name.startswith(("sqlite_", "source_fts_")):
            continue
        if kind == "table":
            shape[name] = [row[1:] for row in conn.execute(f"PRAGMA table_info({name})")]
        else:
            shape[name] = " ".join((sql or "").split())
    return shape


# ----------------------------------------------------------------------------------------------
# §9.5 checklist
# ----------------------------------------------------------------------------------------------


def test_migration_marks_existing_projections_for_lifecycle_revalidation(tmp_path: Path) -> None:
    path = legacy(tmp_path, 1)
    with MemoryDb(path) as db:
        row = db.conn.execute(
            "SELECT target_revision, created_at, vector FROM embeddings WHERE target_id = 's1'"
        ).fetchone()
        assert row == (0, 0, struct.pack("<2f", 1.0, 0.0))
        fresh = remember(db, "a", "sam", "Beta")
        pack = db.search(m.SearchRequest(tenant_id="a", person_id="sam", query="Beta"))
        assert [item.memory.id for item in pack.items] == [fresh.claim_id]
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


def test_new_database_accepts_point_locators(db: MemoryDb) -> None:
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    locator = {
        "device_id": "omi-1",
        "provider": "deepgram",
        "stream_id": "s",
        "segment_id": "g",
        "start_ms": 1000,
        "end_ms": 1000,
    }
    memory = db.remember(
        m.RememberRequest.model_validate(
            {
                "tenant_id": "a",
                "person_id": "sam",
                "kind": "audio",
                "text": "a point in the stream",
                "captured_at": 1,
                "recorded_at": 1,
                "locator": locator,
            }
        )
    )
    got = db.locator(
        m.LocatorRequest(tenant_id="a", person_id="sam", evidence_id=memory.evidence_id)
    )
    assert got is not None and got.model_dump() == locator


def test_migration_preserves_unknown_legacy_superseded_claim_validity(tmp_path: Path) -> None:
    with MemoryDb(legacy(tmp_path, 4)) as db:
        row = db.conn.execute(
            "SELECT status, valid_until, recorded_until FROM claims WHERE id = 'c0'"
        ).fetchone()
        assert row == ("superseded", None, 8)


@pytest.mark.parametrize("version", range(9))
def test_migration_is_idempotent_for_supported_schema_versions(
    tmp_path: Path, version: int
) -> None:
    path = legacy(tmp_path, version)
    if version == 8:
        # An 0.2.3 database already has its feed; nothing is bootstrapped.
        conn = sqlite3.connect(path)
        conn.execute(
            "INSERT INTO memory_commits(tenant_id, person_id, recorded_at) VALUES ('a', 'sam', 1)"
        )
        conn.execute(
            "INSERT INTO memory_export_events VALUES (1, 0, ?)",
            ('{"kind":"deletion","record":{"tenant_id":"a","person_id":"sam",'
             '"target":{"kind":"daily_review","id":"gone"},"deleted_at":1}}',),
        )  # fmt: skip
        conn.commit()
        conn.close()
    with MemoryDb(path) as db:
        first = table_snapshot(db)
        origins = db.conn.execute(
            "SELECT id, origin_evidence_id, origin_claim_id FROM sources ORDER BY id"
        ).fetchall()
        if version < 6:  # backfilled: one evidence each, each supporting exactly one claim
            assert origins == [("s1", "e1", "c1"), ("s2", "e2", "c0")]
        else:  # preserved as stored
            assert origins == [("s1", "e1", "c1"), ("s2", "e2", None)]
        kind = db.conn.execute("SELECT kind FROM claims WHERE id = 'c1'").fetchone()[0]
        assert kind == ("profile_fact" if version >= 5 else "fact")
        profiles = db.conn.execute("SELECT id, key, value FROM profile_entries").fetchall()
        assert profiles == ([("p1", "employer", "Acme")] if version >= 5 else [])
        vector = db.conn.execute("SELECT vector FROM embeddings").fetchone()[0]
        assert vector == struct.pack("<2f", 1.0, 0.0)
        commits = db.conn.execute("SELECT count(*) FROM memory_commits").fetchone()[0]
        assert commits == 1
    with MemoryDb(path) as again:
        assert again.conn.total_changes == 0
        assert table_snapshot(again) == first
        assert again.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION


@pytest.mark.parametrize(
    ("column", "value"), [("valid_until", 10), ("valid_until", 3), ("recorded_until", 10)]
)
def test_migration_rejects_invalid_legacy_claim_time_intervals(
    tmp_path: Path, column: str, value: int
) -> None:
    path = legacy(tmp_path, 6)
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE claims SET {column} = ? WHERE id = 'c1'", (value,))
    conn.commit()
    conn.close()
    before = raw_snapshot(path)
    with pytest.raises(
        MigrationError, match=r"^legacy claim has an invalid half-open time interval$"
    ):
        MemoryDb(path)
    assert raw_snapshot(path) == before
    assert before[0] == 6


def test_schema_rejects_invalid_claim_time_interval_updates(db: MemoryDb) -> None:
    memory = remember(db, "a", "sam", "Acme")
    with pytest.raises(sqlite3.IntegrityError, match=r"^invalid claim half-open time interval$"):
        db.conn.execute(
            "INSERT INTO claims(id, tenant_id, person_id, subject, predicate, value, valid_from,"
            " valid_until, recorded_from, status) VALUES ('x', 'a', 'sam', 'S', 'p', 'v', 5, 5, 5,"
            " 'accepted')"
        )
    for column in ("valid_until", "recorded_until"):
        with pytest.raises(
            sqlite3.IntegrityError, match=r"^invalid claim half-open time interval$"
        ):
            db.conn.execute(f"UPDATE claims SET {column} = 9 WHERE id = ?", (memory.claim_id,))


def test_reopening_current_schema_does_not_write_or_repair_data(tmp_path: Path) -> None:
    path = tmp_path / "current.db"
    with MemoryDb(path) as db:
        remember(db, "a", "sam", "Acme")
        # Something a repair would "fix": it must stay as it is.
        db.conn.execute("DROP INDEX claims_scope")
        before = table_snapshot(db)
    with MemoryDb(path) as db:
        assert db.conn.total_changes == 0
        assert table_snapshot(db) == before
        assert db.conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'claims_scope'"
        ).fetchone() == (0,)


def test_schema_rejects_cross_scope_references(db: MemoryDb) -> None:
    a = remember(db, "a", "sam", "Acme")
    b = remember(db, "b", "sam", "Globex")
    statements = [
        (
            "INSERT INTO evidence VALUES ('x', 'a', 'sam', ?, 1, 'q', 1, NULL)",
            (b.source_id,),
            "evidence source scope mismatch",
        ),
        (
            "INSERT INTO evidence_locators VALUES ('a', 'sam', ?, 'd', 'p', 's', 'g', 1, 2)",
            (b.evidence_id,),
            "evidence locator scope mismatch",
        ),
        (
            "INSERT INTO claim_evidence VALUES ('a', 'sam', ?, ?, '\"supports\"', 1)",
            (a.claim_id, b.evidence_id),
            "claim evidence scope mismatch",
        ),
        (
            "INSERT INTO embeddings VALUES ('a', 'sam', 'source', ?, 'm', '1', 1, 'h',"
            " '\"none\"', '\"dot\"', x'0000803f', 1, 1)",
            (b.source_id,),
            "embedding target scope mismatch",
        ),
        (
            "INSERT INTO daily_reviews VALUES ('r', 'a', 'sam', 'd', 's', ?, 1)",
            (f'["{b.evidence_id}"]',),
            "daily review evidence scope mismatch",
        ),
    ]
    for sql, params, message in statements:
        with pytest.raises(sqlite3.IntegrityError) as caught:
            db.conn.execute(sql, params)
        assert str(caught.value) == message


def profile_claim(db: MemoryDb, tenant: str, value: str) -> m.RememberResult:
    claim = {
        "subject": "Sam",
        "predicate": "employer",
        "value": value,
        "kind": "profile_fact",
        "valid_from": 10,
    }
    return remember(db, tenant, "sam", value, claim=claim)


def test_schema_rejects_cross_scope_profile_entries_and_source_origins(db: MemoryDb) -> None:
    """The profile and source-origin triggers abort with the contract's exact messages."""
    own = profile_claim(db, "a", "Acme")
    fact = remember(db, "a", "sam", "Initech")
    other = profile_claim(db, "b", "Globex")
    entry = db.profile(
        m.ProfileRequest(
            tenant_id="a", person_id="sam", stability="stable", claim_id=own.claim_id or "",
            recorded_at=11,
        )
    )  # fmt: skip
    insert = "INSERT INTO profile_entries VALUES ('p2', 'a', 'sam', 'employer', ?, 'stable', ?, 12)"
    statements: list[tuple[str, tuple[Any, ...], str]] = [
        (insert, ("Globex", other.claim_id), "profile entry claim scope mismatch"),
        (insert, ("Initech", fact.claim_id), "profile entry claim scope mismatch"),
        (
            "UPDATE profile_entries SET claim_id = ?, value = 'Globex' WHERE id = ?",
            (other.claim_id, entry.id),
            "profile entry claim scope mismatch",
        ),
        (
            "UPDATE profile_entries SET claim_id = ?, value = 'Initech' WHERE id = ?",
            (fact.claim_id, entry.id),
            "profile entry claim scope mismatch",
        ),
        (
            "UPDATE sources SET origin_evidence_id = ? WHERE id = ?",
            (other.evidence_id, own.source_id),
            "source origin scope mismatch",
        ),
        (
            "UPDATE sources SET origin_claim_id = ? WHERE id = ?",
            (other.claim_id, own.source_id),
            "source origin scope mismatch",
        ),
    ]
    before = table_snapshot(db)
    for sql, params, message in statements:
        with pytest.raises(sqlite3.IntegrityError) as caught:
            db.conn.execute(sql, params)
        assert str(caught.value) == message, sql
    assert table_snapshot(db) == before
    # The same statements aimed at this scope's own rows pass: the triggers judge scope, not shape.
    mine = profile_claim(db, "a", "Hooli")
    db.conn.execute(
        "UPDATE profile_entries SET claim_id = ?, value = 'Hooli' WHERE id = ?",
        (mine.claim_id, entry.id),
    )
    db.conn.execute(
        "UPDATE sources SET origin_evidence_id = ?, origin_claim_id = ? WHERE id = ?",
        (fact.evidence_id, fact.claim_id, own.source_id),
    )


def test_migration_rejects_legacy_cross_scope_evidence(tmp_path: Path) -> None:
    path = legacy(tmp_path, 3)
    populate_other_scope(path, 3)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE evidence SET source_id = 's1' WHERE id = 'other-e1'")
    conn.commit()
    conn.close()
    assert_refused(path, "legacy evidence is inconsistent with schema invariants")


def test_migration_rejects_legacy_cross_scope_embeddings(tmp_path: Path) -> None:
    path = legacy(tmp_path, 3)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE embeddings SET tenant_id = 'b'")
    conn.commit()
    conn.close()
    assert_refused(path, "legacy embedding is inconsistent with schema invariants")


# ----------------------------------------------------------------------------------------------
# Every legacy error string, all-or-nothing
# ----------------------------------------------------------------------------------------------


def populate_other_scope(path: Path, version: int) -> None:
    """The same memories under tenant ``b`` with ids prefixed ``other-``."""
    conn = sqlite3.connect(path)
    for table in ("sources", "evidence", "claims", "daily_reviews"):
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        select = ", ".join(
            "'other-' || id" if c == "id" else "'b'" if c == "tenant_id" else
            "'other-' || source_id" if c == "source_id" else
            "'[\"other-e1\"]'" if c == "evidence_ids" else c
            for c in columns
        )  # fmt: skip
        conn.execute(f"INSERT INTO {table} SELECT {select} FROM {table}")
    conn.commit()
    conn.close()


def assert_refused(path: Path, message: str) -> None:
    before = raw_snapshot(path)
    with pytest.raises(MigrationError) as caught:
        MemoryDb(path)
    assert str(caught.value) == message
    assert raw_snapshot(path) == before


LEGACY_BREAKS = [
    (3, "UPDATE evidence SET tenant_id = 'b' WHERE id = 'e2'", "evidence"),
    (
        3,
        "INSERT INTO evidence_locators VALUES ('b', 'sam', 'e1', 'd', 'p', 's', 'g', 1, 2)",
        "evidence locator",
    ),
    (3, "UPDATE claim_evidence SET claim_id = 'other-c1' WHERE claim_id = 'c1'", "claim evidence"),
    (3, "UPDATE embeddings SET target_kind = 'profile_entry'", "embedding"),
    (3, "UPDATE embeddings SET target_id = 'other-s1'", "embedding"),
    (3, "UPDATE daily_reviews SET evidence_ids = 'not json' WHERE id = 'r1'", "daily review"),
    (3, "UPDATE daily_reviews SET evidence_ids = '[\"other-e1\"]' WHERE id = 'r1'", "daily review"),
    (3, "UPDATE daily_reviews SET evidence_ids = '[\"gone\"]' WHERE id = 'r1'", "daily review"),
    (
        5,
        "ALTER TABLE sources ADD COLUMN origin_evidence_id TEXT;"
        " UPDATE sources SET origin_evidence_id = 'other-e1' WHERE id = 's1'",
        "source origin",
    ),
    (5, "UPDATE claims SET kind = 'fact' WHERE id = 'c1'", "profile entry"),
    (5, "UPDATE profile_entries SET claim_id = 'other-c1'", "profile entry"),
]


@pytest.mark.parametrize(("version", "sql", "name"), LEGACY_BREAKS)
def test_legacy_inconsistencies_are_refused_atomically(
    tmp_path: Path, version: int, sql: str, name: str
) -> None:
    path = legacy(tmp_path, version)
    populate_other_scope(path, version)
    conn = sqlite3.connect(path)
    conn.executescript(sql)
    conn.commit()
    conn.close()
    assert_refused(path, f"legacy {name} is inconsistent with schema invariants")


def test_duplicate_legacy_profiles_keep_the_latest_then_greatest_id(tmp_path: Path) -> None:
    path = legacy(tmp_path, 5)
    conn = sqlite3.connect(path)
    for entry_id, recorded_at in (("p0", 11), ("p2", 11), ("p3", 9)):
        insert(
            conn, "profile_entries", id=entry_id, tenant_id="a", person_id="sam", key=entry_id,
            value="x", stability='"current"', claim_id="c1", recorded_at=recorded_at,
        )  # fmt: skip
    conn.commit()
    conn.close()
    with MemoryDb(path) as db:
        rows = db.conn.execute("SELECT id, key, value FROM profile_entries").fetchall()
        assert rows == [("p2", "employer", "Acme")]


def test_version_zero_with_legacy_tables_is_migrated(tmp_path: Path) -> None:
    path = legacy(tmp_path, 0)
    with MemoryDb(path) as db:
        page = db.export(m.ExportRequest(export_format=1, tenant_id="a", person_id="sam"))
        assert [r["kind"] for r in page.commits[0].records] == [
            "source", "source", "evidence", "evidence", "claim", "claim",
            "claim_evidence", "claim_evidence", "daily_review",
        ]  # fmt: skip
        assert page.commits[0].recorded_at == 12


@pytest.mark.parametrize("version", [0, 4, 7, 8])
def test_migrated_schema_matches_a_fresh_one(tmp_path: Path, version: int) -> None:
    with MemoryDb(tmp_path / "fresh.db") as fresh:
        expected = schema_shape(fresh.conn)
    with MemoryDb(legacy(tmp_path, version)) as migrated:
        assert schema_shape(migrated.conn) == expected


def test_rerunning_the_v8_bootstrap_appends_after_existing_sequences(tmp_path: Path) -> None:
    with MemoryDb(tmp_path / "m.db") as db:
        remember(db, "a", "sam", "Acme")
        remember(db, "b", "sam", "Globex")
        db.conn.execute("DELETE FROM memory_commits")
        db.conn.execute("PRAGMA user_version = 7")
    with MemoryDb(tmp_path / "m.db") as db:
        rows = db.conn.execute(
            "SELECT sequence, tenant_id FROM memory_commits ORDER BY sequence"
        ).fetchall()
        assert rows == [(3, "a"), (4, "b")]  # AUTOINCREMENT never reuses 1 and 2


# ----------------------------------------------------------------------------------------------
# Versions we refuse, and the v9 vector conversion
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [schema.SCHEMA_VERSION + 1, 12345, -1])
def test_newer_or_negative_versions_are_refused(tmp_path: Path, version: int) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(x)")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError) as caught:
        MemoryDb(path)
    assert str(caught.value) == (
        f"database schema version {version} is newer than supported version {schema.SCHEMA_VERSION}"
    )


def test_legacy_vector_blob_rounds_like_the_reference() -> None:
    assert legacy_vector_blob("[0.1, 2, -3.5]") == struct.pack("<3f", 0.1, 2.0, -3.5)
    assert legacy_vector_blob("[]") == b""
    inf, minus_inf = struct.unpack("<2f", legacy_vector_blob("[1e39, -1e39]"))
    assert inf == math.inf and minus_inf == -math.inf
    assert struct.unpack("<f", legacy_vector_blob("[1" + "0" * 400 + "]")) == (math.inf,)
    blob = struct.pack("<2f", 0.6, 0.8)
    assert legacy_vector_blob(blob) == blob


@pytest.mark.parametrize(
    "stored", ["not json", '{"a": 1}', "[true, 1.0]", '["1.0"]', "[null]", "[[1.0]]", "NaN", 7]
)
def test_unrepresentable_legacy_vectors_become_empty(stored: Any) -> None:
    assert legacy_vector_blob(stored) == b""


def test_invalid_legacy_vectors_stay_stale_after_conversion(tmp_path: Path) -> None:
    pytest.importorskip("zkr.embeddings.projections")
    path = legacy(tmp_path, 7)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE embeddings SET target_revision = 1, created_at = 5")
    for target_kind, target_id, text, vector in (
        ("evidence", "e1", CLAIM_TEXT, "garbage"),
        ("evidence", "e2", RAW_TEXT, "[1e39, 0.0]"),
        ("source", "s2", RAW_TEXT, "[0.6, 0.8, 0.0]"),  # wrong dimension
    ):
        insert(
            conn, "embeddings", tenant_id="a", person_id="sam", target_kind=target_kind,
            target_id=target_id, model="mini", version="1", dimension=2, input_hash=sha(text),
            normalization='"l2"', distance='"cosine"', vector=vector, target_revision=1,
            created_at=5,
        )  # fmt: skip
    conn.commit()
    conn.close()
    with MemoryDb(path) as db:
        issues = db.projections(
            m.ProjectionsRequest(
                tenant_id="a", person_id="sam", model="mini", version="1", limit=100
            )
        )
        states = {(i.input.target.kind.value, i.input.target.id): i.state.value for i in issues}
        assert states == {
            ("claim", "c1"): "missing",
            ("evidence", "e1"): "stale",
            ("evidence", "e2"): "stale",
            ("source", "s2"): "stale",
        }  # s1's valid [1.0, 0.0] vector is healthy and not listed
        blobs = dict(db.conn.execute("SELECT target_id, vector FROM embeddings").fetchall())
        assert blobs["e1"] == b""
        assert blobs["s1"] == struct.pack("<2f", 1.0, 0.0)
