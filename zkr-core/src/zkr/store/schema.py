"""The SQLite schema and its migrations.

Schema versions 0-8 are zkr 0.2.x's (contract §3.5); version 9 is ours: embedding vectors become
little-endian float32 BLOBs and the read paths get the indexes they need; version 10 gives every
``source_fts`` row its source's rowid (``zkr.store.fts_rows``: delete by rowid); version 11 adds
the recall index (``zkr.store.recall_index``: a stemmed second FTS table and a timeline index);
version 12 adds the listing indexes of ``memories`` and the ``erasures`` table of ``forget``;
version 13 rebuilds the recall index for its new neighbour window (two before, one after);
version 14 rebuilds it again, language-aware (``zkr.store.analysis``: Snowball stems per
language, bigrams for scripts written without spaces, combining marks kept in words). A
fresh database is created directly at the current version; an older one is migrated forward
inside one IMMEDIATE transaction (all or nothing). Opening a database already at the current
version writes nothing.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "CONTRACT_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "create_current_schema",
    "has_table",
]

#: The version zkr 0.2.3 writes; the export feed reports it as its record schema.
CONTRACT_SCHEMA_VERSION = 8
#: The version this package writes.
SCHEMA_VERSION = 16

# Tables in their v8 column order; `embeddings.vector` is the only v9 change (BLOB instead of
# JSON text).
TABLES = """
CREATE TABLE sources(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  revision INTEGER NOT NULL, kind TEXT NOT NULL, content TEXT NOT NULL,
  captured_at INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL, deleted_at INTEGER, ingestion_key TEXT, origin_evidence_id TEXT,
  origin_claim_id TEXT);
CREATE VIRTUAL TABLE source_fts USING fts5(source_id UNINDEXED, tenant_id UNINDEXED,
  person_id UNINDEXED, content, tokenize='unicode61');
CREATE TABLE evidence(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  source_id TEXT NOT NULL REFERENCES sources(id), source_revision INTEGER NOT NULL,
  quote TEXT NOT NULL, recorded_at INTEGER NOT NULL, deleted_at INTEGER);
CREATE TABLE claims(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  subject TEXT NOT NULL, predicate TEXT NOT NULL, value TEXT NOT NULL, valid_from INTEGER NOT NULL,
  valid_until INTEGER, recorded_from INTEGER NOT NULL, recorded_until INTEGER, status TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'fact');
CREATE TABLE claim_evidence(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  claim_id TEXT NOT NULL REFERENCES claims(id), evidence_id TEXT NOT NULL REFERENCES evidence(id),
  relation TEXT NOT NULL, confidence_basis_points INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, claim_id, evidence_id));
CREATE TABLE daily_reviews(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  day TEXT NOT NULL, summary TEXT NOT NULL, evidence_ids TEXT NOT NULL,
  recorded_at INTEGER NOT NULL);
CREATE TABLE embeddings(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL, target_kind TEXT NOT NULL,
  target_id TEXT NOT NULL, model TEXT NOT NULL, version TEXT NOT NULL, dimension INTEGER NOT NULL,
  input_hash TEXT NOT NULL, normalization TEXT NOT NULL, distance TEXT NOT NULL,
  vector BLOB NOT NULL,
  target_revision INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id, model, version));
CREATE TABLE evidence_locators(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  evidence_id TEXT NOT NULL REFERENCES evidence(id), device_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  stream_id TEXT NOT NULL, segment_id TEXT NOT NULL, start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL, PRIMARY KEY(tenant_id, person_id, evidence_id));
CREATE TABLE profile_entries(id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  key TEXT NOT NULL, value TEXT NOT NULL, stability TEXT NOT NULL,
  claim_id TEXT NOT NULL REFERENCES claims(id), recorded_at INTEGER NOT NULL);
CREATE TABLE corrections(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  superseded_claim_id TEXT NOT NULL REFERENCES claims(id),
  claim_id TEXT NOT NULL REFERENCES claims(id),
  source_id TEXT NOT NULL REFERENCES sources(id), evidence_id TEXT NOT NULL REFERENCES evidence(id),
  valid_at INTEGER NOT NULL, recorded_at INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, superseded_claim_id, claim_id));
CREATE TABLE memory_commits(sequence INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL,
  person_id TEXT NOT NULL, recorded_at INTEGER NOT NULL);
CREATE TABLE memory_export_events(commit_sequence INTEGER NOT NULL
  REFERENCES memory_commits(sequence) ON DELETE CASCADE, event_index INTEGER NOT NULL,
  payload TEXT NOT NULL CHECK(json_valid(payload)), PRIMARY KEY(commit_sequence, event_index));
"""

CONTRACT_INDEXES = """
CREATE INDEX IF NOT EXISTS sources_scope ON sources(tenant_id, person_id, id);
CREATE UNIQUE INDEX IF NOT EXISTS sources_ingestion_key ON sources(tenant_id, person_id,
  ingestion_key)
  WHERE ingestion_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS evidence_scope ON evidence(tenant_id, person_id, source_id);
CREATE INDEX IF NOT EXISTS claims_scope ON claims(tenant_id, person_id, status);
CREATE INDEX IF NOT EXISTS reviews_scope ON daily_reviews(tenant_id, person_id, day);
CREATE INDEX IF NOT EXISTS embeddings_scope ON embeddings(tenant_id, person_id, target_kind,
  target_id);
CREATE INDEX IF NOT EXISTS profile_entries_scope ON profile_entries(tenant_id, person_id,
  recorded_at);
CREATE UNIQUE INDEX IF NOT EXISTS profile_entries_current ON profile_entries(tenant_id,
  person_id, key);
CREATE INDEX IF NOT EXISTS memory_commits_scope ON memory_commits(tenant_id, person_id, sequence);
"""

# v9: the joins of retrieval and deletion go from evidence to its links and from a claim to its
# links.
V9_INDEXES = """
CREATE INDEX IF NOT EXISTS claim_evidence_by_evidence ON claim_evidence(evidence_id, relation);
CREATE INDEX IF NOT EXISTS claim_evidence_by_claim ON claim_evidence(claim_id, relation);
CREATE INDEX IF NOT EXISTS profile_entries_by_claim ON profile_entries(claim_id);
CREATE INDEX IF NOT EXISTS embeddings_lane ON embeddings(tenant_id, person_id, model, version);
"""

# v9 addition: `apply` (zkr.feed.apply) stages each upstream commit's events here until all of them
# arrived, then applies the commit and advances the durable cursor in the same transaction.
REPLICA_TABLES = """
CREATE TABLE IF NOT EXISTS replica_cursor(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  upstream TEXT NOT NULL, applied_commit INTEGER NOT NULL, applied_event_count INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, upstream));
CREATE TABLE IF NOT EXISTS replica_staging(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  upstream TEXT NOT NULL, commit_sequence INTEGER NOT NULL, recorded_at INTEGER NOT NULL,
  event_count INTEGER NOT NULL, event_index INTEGER NOT NULL, payload TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, upstream, commit_sequence, event_index));
"""

# v9 addition (zkr.embeddings.projections): a certificate per embedding row that zkr itself
# validated
# (contract §6.2) against its target's text at write time. Triggers void a certificate whenever
# the row or the target's embedded text changes by any means (raw SQL included), so a certified row
# needs no hash or vector decode to be known healthy; uncertified rows are checked in full. The
# config index lets a lane's configurations be read without touching vector pages.
EMBEDDING_CHECKS = """
CREATE TABLE IF NOT EXISTS embedding_checks(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  target_kind TEXT NOT NULL, target_id TEXT NOT NULL, model TEXT NOT NULL, version TEXT NOT NULL,
  target_revision INTEGER NOT NULL, dimension INTEGER NOT NULL, normalization TEXT NOT NULL,
  distance TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id, model, version)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embedding_checks_lane ON embedding_checks(tenant_id, person_id, model,
  version, dimension, normalization, distance);
CREATE INDEX IF NOT EXISTS embeddings_config ON embeddings(tenant_id, person_id, model, version,
  dimension, normalization, distance);
CREATE TRIGGER IF NOT EXISTS embedding_checks_row_update AFTER UPDATE ON embeddings FOR EACH ROW
BEGIN DELETE FROM embedding_checks WHERE tenant_id = OLD.tenant_id AND person_id = OLD.person_id
  AND target_kind = OLD.target_kind AND target_id = OLD.target_id AND model = OLD.model
  AND version = OLD.version; END;
CREATE TRIGGER IF NOT EXISTS embedding_checks_row_delete AFTER DELETE ON embeddings FOR EACH ROW
BEGIN DELETE FROM embedding_checks WHERE tenant_id = OLD.tenant_id AND person_id = OLD.person_id
  AND target_kind = OLD.target_kind AND target_id = OLD.target_id AND model = OLD.model
  AND version = OLD.version; END;
CREATE TRIGGER IF NOT EXISTS embedding_checks_source_text AFTER UPDATE OF id, tenant_id, person_id,
  content ON sources FOR EACH ROW
BEGIN DELETE FROM embedding_checks WHERE tenant_id = OLD.tenant_id AND person_id = OLD.person_id
  AND target_kind = 'source' AND target_id = OLD.id; END;
CREATE TRIGGER IF NOT EXISTS embedding_checks_evidence_text AFTER UPDATE OF id, tenant_id,
  person_id, quote ON evidence FOR EACH ROW
BEGIN DELETE FROM embedding_checks WHERE tenant_id = OLD.tenant_id AND person_id = OLD.person_id
  AND target_kind = 'evidence' AND target_id = OLD.id; END;
CREATE TRIGGER IF NOT EXISTS embedding_checks_claim_text AFTER UPDATE OF id, tenant_id, person_id,
  subject, predicate, value ON claims FOR EACH ROW
BEGIN DELETE FROM embedding_checks WHERE tenant_id = OLD.tenant_id AND person_id = OLD.person_id
  AND target_kind = 'claim' AND target_id = OLD.id; END;
"""


# v12 (ours): what a person reads and erases. ``memories`` pages each claim kind and each source
# kind along its own (scope, kind, recorded time, id) index, newest first, and merges the pages;
# ``history`` walks corrections backwards by the new claim's id; ``forget`` remembers what it
# erased (ids and times only, never text).
PERSON_VIEW = """
CREATE INDEX IF NOT EXISTS claims_kind_listing ON claims(tenant_id, person_id, kind,
  recorded_from, id);
CREATE INDEX IF NOT EXISTS sources_kind_listing ON sources(tenant_id, person_id, kind,
  recorded_at, id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS corrections_by_claim ON corrections(tenant_id, person_id, claim_id);
CREATE TABLE IF NOT EXISTS erasures(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  target_kind TEXT NOT NULL, target_id TEXT NOT NULL, source_id TEXT NOT NULL,
  erased_at INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS erasures_by_source ON erasures(tenant_id, person_id, source_id);
"""


def _pair(name: str, table: str, columns: str, condition: str, message: str) -> str:
    """A BEFORE INSERT and a BEFORE UPDATE OF trigger that abort with the contract's message."""
    return f"""
CREATE TRIGGER IF NOT EXISTS {name}_insert BEFORE INSERT ON {table} FOR EACH ROW
WHEN {condition} BEGIN SELECT RAISE(ABORT, '{message}'); END;
CREATE TRIGGER IF NOT EXISTS {name}_update BEFORE UPDATE OF {columns} ON {table} FOR EACH ROW
WHEN {condition} BEGIN SELECT RAISE(ABORT, '{message}'); END;
"""


CORE_SCOPE_TRIGGERS = (
    _pair(
        "evidence_scope",
        "evidence",
        "source_id, tenant_id, person_id",
        "NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = NEW.source_id"
        " AND s.tenant_id = NEW.tenant_id AND s.person_id = NEW.person_id)",
        "evidence source scope mismatch",
    )
    + _pair(
        "locator_scope",
        "evidence_locators",
        "evidence_id, tenant_id, person_id",
        "NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = NEW.evidence_id"
        " AND e.tenant_id = NEW.tenant_id AND e.person_id = NEW.person_id)",
        "evidence locator scope mismatch",
    )
    + _pair(
        "claim_evidence_scope",
        "claim_evidence",
        "claim_id, evidence_id, tenant_id, person_id",
        "NOT EXISTS (SELECT 1 FROM claims c WHERE c.id = NEW.claim_id"
        " AND c.tenant_id = NEW.tenant_id AND c.person_id = NEW.person_id)"
        " OR NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = NEW.evidence_id"
        " AND e.tenant_id = NEW.tenant_id AND e.person_id = NEW.person_id)",
        "claim evidence scope mismatch",
    )
    + _pair(
        "embedding_scope",
        "embeddings",
        "target_kind, target_id, tenant_id, person_id",
        "NEW.target_kind NOT IN ('source', 'evidence', 'claim')"
        " OR (NEW.target_kind = 'source' AND NOT EXISTS (SELECT 1 FROM sources s"
        " WHERE s.id = NEW.target_id AND s.tenant_id = NEW.tenant_id"
        " AND s.person_id = NEW.person_id))"
        " OR (NEW.target_kind = 'evidence' AND NOT EXISTS (SELECT 1 FROM evidence e"
        " WHERE e.id = NEW.target_id AND e.tenant_id = NEW.tenant_id"
        " AND e.person_id = NEW.person_id))"
        " OR (NEW.target_kind = 'claim' AND NOT EXISTS (SELECT 1 FROM claims c"
        " WHERE c.id = NEW.target_id AND c.tenant_id = NEW.tenant_id"
        " AND c.person_id = NEW.person_id))",
        "embedding target scope mismatch",
    )
    + _pair(
        "review_scope",
        "daily_reviews",
        "tenant_id, person_id, evidence_ids",
        "NOT json_valid(NEW.evidence_ids) OR json_type(NEW.evidence_ids) != 'array'"
        " OR EXISTS (SELECT 1 FROM json_each(NEW.evidence_ids) j WHERE j.type != 'text'"
        " OR NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = j.value"
        " AND e.tenant_id = NEW.tenant_id AND e.person_id = NEW.person_id))",
        "daily review evidence scope mismatch",
    )
)

PROFILE_TRIGGERS = _pair(
    "profile_entry_scope",
    "profile_entries",
    "key, value, claim_id, tenant_id, person_id",
    "NOT EXISTS (SELECT 1 FROM claims c WHERE c.id = NEW.claim_id AND c.tenant_id = NEW.tenant_id"
    " AND c.person_id = NEW.person_id AND c.kind = 'profile_fact' AND c.predicate = NEW.key"
    " AND c.value = NEW.value)",
    "profile entry claim scope mismatch",
)

SOURCE_ORIGIN_TRIGGERS = _pair(
    "source_origin_scope",
    "sources",
    "origin_evidence_id, origin_claim_id, tenant_id, person_id",
    "(NEW.origin_evidence_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM evidence e"
    " WHERE e.id = NEW.origin_evidence_id AND e.tenant_id = NEW.tenant_id"
    " AND e.person_id = NEW.person_id))"
    " OR (NEW.origin_claim_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM claims c"
    " WHERE c.id = NEW.origin_claim_id AND c.tenant_id = NEW.tenant_id"
    " AND c.person_id = NEW.person_id))",
    "source origin scope mismatch",
)

INTERVAL_TRIGGERS = _pair(
    "claim_time_interval",
    "claims",
    "valid_from, valid_until, recorded_from, recorded_until",
    "(NEW.valid_until IS NOT NULL AND NEW.valid_until <= NEW.valid_from)"
    " OR (NEW.recorded_until IS NOT NULL AND NEW.recorded_until <= NEW.recorded_from)",
    "invalid claim half-open time interval",
)

CORRECTION_TRIGGERS = _pair(
    "correction_scope",
    "corrections",
    "tenant_id, person_id, superseded_claim_id, claim_id, source_id, evidence_id",
    "NOT EXISTS (SELECT 1 FROM claims c WHERE c.id = NEW.superseded_claim_id"
    " AND c.tenant_id = NEW.tenant_id AND c.person_id = NEW.person_id)"
    " OR NOT EXISTS (SELECT 1 FROM claims c WHERE c.id = NEW.claim_id"
    " AND c.tenant_id = NEW.tenant_id AND c.person_id = NEW.person_id)"
    " OR NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = NEW.source_id"
    " AND s.tenant_id = NEW.tenant_id AND s.person_id = NEW.person_id"
    " AND s.origin_claim_id = NEW.claim_id AND s.origin_evidence_id = NEW.evidence_id)"
    " OR NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = NEW.evidence_id"
    " AND e.tenant_id = NEW.tenant_id AND e.person_id = NEW.person_id"
    " AND e.source_id = NEW.source_id)",
    "correction scope mismatch",
)

ALL_TRIGGERS = (
    CORE_SCOPE_TRIGGERS
    + PROFILE_TRIGGERS
    + SOURCE_ORIGIN_TRIGGERS
    + INTERVAL_TRIGGERS
    + CORRECTION_TRIGGERS
)


def create_current_schema(conn: sqlite3.Connection) -> None:
    """Create every table, index and trigger of the current version in an empty database."""
    # Imported here: opening a current file (every one-shot command) needs only SCHEMA_VERSION.
    from zkr.store._embedding_tracking import EMBEDDING_TRACKING
    from zkr.store.recall_index import RECALL_INDEX_DDL

    for script in (
        TABLES,
        CONTRACT_INDEXES,
        V9_INDEXES,
        ALL_TRIGGERS,
        REPLICA_TABLES,
        EMBEDDING_CHECKS,
        EMBEDDING_TRACKING,
        RECALL_INDEX_DDL,
        PERSON_VIEW,
    ):
        for statement in _statements(script):
            conn.execute(statement)


def _statements(script: str) -> list[str]:
    """Split a DDL script on statement boundaries (triggers contain inner semicolons)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database has a table (or view) called *name*."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", (name,)
    ).fetchone()
    return row is not None
