"""Opening older databases: zkr 0.2.x's v1..v8 migration chain (contract §3.5), then our v9, v10.

:func:`zkr.store.migrations.migrate` calls :func:`migrate_legacy` inside its IMMEDIATE transaction
for every
database below the current version that already has tables; any exception rolls the whole
migration back (``user_version``, DDL and data), so a refused database is left exactly as it was.

Steps run in the contract's order (§3.5), each only when the stored version is below it:

* v1 creates the original tables that are missing; the "shape repair" (every version < 8) adds the
  columns later releases read unconditionally;
* v2 locators, v3 scope indexes, v4 scope validation + core triggers, v5 claim kinds + profiles,
  v6 source origins + profile rewrite/deduplication, v7 claim interval check, v8 the export feed
  (bootstrapped from current rows when empty, §7.5: :mod:`zkr.store._feed_bootstrap`);
* v9 (ours): ``embeddings.vector`` becomes a little-endian float32 BLOB; then every table, index
  and trigger a fresh database has (:func:`zkr.store.schema.create_current_schema`: the read-path
  indexes, the replica tables, ...) is created where missing and every trigger is reinstalled, so
  a migrated file and a fresh one have the same schema and enforce exactly the same rules;
* v10 (ours): ``source_fts`` is renumbered so each row has its source's rowid
  (:func:`zkr.store.fts_rows.rekey`; rows and search answers unchanged);
* v11 (ours): the recall index is built for every live source
  (:func:`zkr.store.recall_index.build_recall_index`).
* v12 (ours): only new objects (the listing indexes of ``memories``, ``erasures``), which
  the convergence on the fresh schema creates.
* v13 (ours): the recall index is rebuilt for its neighbour window (two before, one after).
* v14 (ours): the recall index is dropped and rebuilt with its language-aware analysis and
  tokenizer (:func:`zkr.store.recall_index.recreate_recall_index`, :mod:`zkr.store.analysis`),
  with a progress line on a terminal.
* v15 (ours): only a new table, ``recall_backlog`` (the captures whose recall rows ``remember``
  deferred: :mod:`zkr.store.recall_backlog`), which the convergence on the fresh schema creates
  empty: every live capture of a v14 file is already in its recall index.
* v16 (ours): ``projection_backlog`` is keyed by target before lane and loses its second index
  (:mod:`zkr.store._embedding_tracking`); its rows are copied as they are.

Vectors that zkr 0.2.x stored as JSON text are decoded the way the reference decodes them
(numbers rounded to float32, values beyond float32 range become infinities). A legacy vector that is
not a JSON array of numbers cannot be expressed as float32s at all; it is stored as an **empty**
BLOB, which the stored-row validity rule (§6.2: non-empty, ``dimension`` values) always reports
as invalid, so ``projections`` keeps listing its target as ``stale`` exactly as zkr 0.2.3 would.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import struct
from collections.abc import Callable
from typing import Any

from zkr.errors import MigrationError
from zkr.store import fts_rows, recall_index, schema
from zkr.store._embedding_tracking import EMBEDDING_TRACKING
from zkr.store._feed_bootstrap import bootstrap_feed

__all__ = ["legacy_vector_blob", "migrate_legacy"]

_NAME = re.compile(
    r"CREATE\s+(?:VIRTUAL\s+|UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)"
)


def migrate_legacy(conn: sqlite3.Connection, version: int) -> None:
    """Migrate a database at *version* (0..9) to the current one in the caller's transaction.

    :raises MigrationError: a legacy row breaks an invariant the schema now enforces.
    """
    try:
        _run_steps(conn, version)
    except sqlite3.IntegrityError as exc:
        # A constraint the legacy data cannot satisfy (e.g. duplicate ingestion keys in one scope).
        raise MigrationError(f"legacy data is inconsistent with schema invariants: {exc}") from exc


def _run_steps(conn: sqlite3.Connection, version: int) -> None:
    for below, step in _CONTRACT_STEPS:
        if version < below:
            step(conn)
    if version < 16:
        _v16_backlog_key(conn)
    # Every migration ends on the fresh schema's objects (so a v9 file gains what came later).
    _converge_on_fresh_schema(conn)
    if version < 10:
        fts_rows.rekey(conn)
    if version < 14:  # 11: the recall index appears; 13: its window changes; 14: languages
        from zkr.store._progress import terminal_progress

        recall_index.recreate_recall_index(
            conn, progress=terminal_progress("zkr: rebuilding the recall index (schema 14)")
        )


# ----------------------------------------------------------------------------------------------
# Reusing the DDL of zkr.store.schema
# ----------------------------------------------------------------------------------------------


def _named(script: str) -> dict[str, str]:
    """The statements of a schema script keyed by the name of the object they create."""
    named: dict[str, str] = {}
    for statement in schema._statements(script):
        match = _NAME.match(statement)
        if match is not None:
            named[match.group(1)] = statement
    return named


def _if_not_exists(statement: str) -> str:
    return re.sub(
        r"^CREATE\s+(VIRTUAL\s+)?TABLE\s+(?!IF\s)",
        lambda m: f"CREATE {m.group(1) or ''}TABLE IF NOT EXISTS ",
        statement,
    )


def _create(conn: sqlite3.Connection, script: str, *names: str) -> None:
    """Create the named tables/indexes of *script* unless they exist."""
    statements = _named(script)
    for name in names:
        conn.execute(_if_not_exists(statements[name]))


def _install(conn: sqlite3.Connection, script: str) -> None:
    for statement in schema._statements(script):
        conn.execute(statement)


def _drop_triggers(conn: sqlite3.Connection, script: str) -> None:
    for name in _named(script):
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _add_column(conn: sqlite3.Connection, table: str, column: str, decl: str) -> None:
    if column not in _columns(conn, table):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


# ----------------------------------------------------------------------------------------------
# v1 .. v3: tables, shape repair, locators, indexes
# ----------------------------------------------------------------------------------------------

_V1_TABLES = (
    "sources",
    "source_fts",
    "evidence",
    "claims",
    "claim_evidence",
    "daily_reviews",
    "embeddings",
)
_V1_INDEXES = (
    "sources_scope",
    "evidence_scope",
    "claims_scope",
    "reviews_scope",
    "embeddings_scope",
)


def _v1_original_tables(conn: sqlite3.Connection) -> None:
    # Missing tables get today's column set; the later "add column if missing" steps then skip,
    # which ends in the same shape and column order as a table that grew release by release.
    _create(conn, schema.TABLES, *_V1_TABLES)
    _create(conn, schema.CONTRACT_INDEXES, *_V1_INDEXES)


def _repair_shape(conn: sqlite3.Connection) -> None:
    _add_column(conn, "sources", "ingestion_key", "TEXT")
    # Legacy vectors get revision 0 / created 0: stale until re-embedded against a live target.
    _add_column(conn, "embeddings", "target_revision", "INTEGER NOT NULL DEFAULT 0")
    _add_column(conn, "embeddings", "created_at", "INTEGER NOT NULL DEFAULT 0")
    _create(conn, schema.CONTRACT_INDEXES, "sources_ingestion_key")


# ----------------------------------------------------------------------------------------------
# v4: legacy scope validation, core triggers
# ----------------------------------------------------------------------------------------------

_SCOPE_CHECKS: dict[str, str] = {
    "evidence": (
        "SELECT 1 FROM evidence e WHERE NOT EXISTS (SELECT 1 FROM sources s"
        " WHERE s.id = e.source_id AND s.tenant_id = e.tenant_id AND s.person_id = e.person_id)"
    ),
    "evidence locator": (
        "SELECT 1 FROM evidence_locators l WHERE NOT EXISTS (SELECT 1 FROM evidence e"
        " WHERE e.id = l.evidence_id AND e.tenant_id = l.tenant_id AND e.person_id = l.person_id)"
    ),
    "claim evidence": (
        "SELECT 1 FROM claim_evidence ce WHERE NOT EXISTS (SELECT 1 FROM claims c"
        " WHERE c.id = ce.claim_id AND c.tenant_id = ce.tenant_id AND c.person_id = ce.person_id)"
        " OR NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = ce.evidence_id"
        " AND e.tenant_id = ce.tenant_id AND e.person_id = ce.person_id)"
    ),
    "embedding": (
        "SELECT 1 FROM embeddings m WHERE m.target_kind NOT IN ('source', 'evidence', 'claim')"
        " OR (m.target_kind = 'source' AND NOT EXISTS (SELECT 1 FROM sources s"
        " WHERE s.id = m.target_id AND s.tenant_id = m.tenant_id AND s.person_id = m.person_id))"
        " OR (m.target_kind = 'evidence' AND NOT EXISTS (SELECT 1 FROM evidence e"
        " WHERE e.id = m.target_id AND e.tenant_id = m.tenant_id AND e.person_id = m.person_id))"
        " OR (m.target_kind = 'claim' AND NOT EXISTS (SELECT 1 FROM claims c"
        " WHERE c.id = m.target_id AND c.tenant_id = m.tenant_id AND c.person_id = m.person_id))"
    ),
    # Stricter than the reference by one detail: the citation list must be an array of strings,
    # because the feed bootstrap and every reader decode it as one.
    "daily review": (
        "SELECT 1 FROM daily_reviews r WHERE NOT json_valid(r.evidence_ids)"
        " OR json_type(r.evidence_ids) != 'array'"
        " OR EXISTS (SELECT 1 FROM json_each(r.evidence_ids) j WHERE j.type != 'text'"
        " OR NOT EXISTS (SELECT 1 FROM evidence e WHERE e.id = j.value"
        " AND e.tenant_id = r.tenant_id AND e.person_id = r.person_id))"
    ),
    "source origin": (
        "SELECT 1 FROM sources s WHERE (s.origin_evidence_id IS NOT NULL AND NOT EXISTS"
        " (SELECT 1 FROM evidence e WHERE e.id = s.origin_evidence_id"
        " AND e.tenant_id = s.tenant_id AND e.person_id = s.person_id))"
        " OR (s.origin_claim_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM claims c"
        " WHERE c.id = s.origin_claim_id AND c.tenant_id = s.tenant_id"
        " AND c.person_id = s.person_id))"
    ),
}

# A profile entry must point at an in-scope profile_fact claim; after the v6 rewrite its key and
# value must also equal the claim's predicate and value.
_PROFILE_CLAIM = (
    "SELECT 1 FROM profile_entries p WHERE NOT EXISTS (SELECT 1 FROM claims c"
    " WHERE c.id = p.claim_id AND c.tenant_id = p.tenant_id AND c.person_id = p.person_id"
    " AND c.kind = 'profile_fact'{content})"
)
_PROFILE_CONTENT = " AND c.predicate = p.key AND c.value = p.value"


def _check(conn: sqlite3.Connection, name: str, query: str) -> None:
    if conn.execute(query + " LIMIT 1").fetchone() is not None:
        raise MigrationError(f"legacy {name} is inconsistent with schema invariants")


def _validate_scopes(conn: sqlite3.Connection, *, origins: bool) -> None:
    for name, query in _SCOPE_CHECKS.items():
        if name != "source origin" or origins:
            _check(conn, name, query)


def _v4_scope_validation(conn: sqlite3.Connection) -> None:
    _validate_scopes(conn, origins=False)
    _install(conn, schema.CORE_SCOPE_TRIGGERS)


# ----------------------------------------------------------------------------------------------
# v5 .. v7: claim kinds, profiles, origins, intervals
# ----------------------------------------------------------------------------------------------


def _v5_claim_kinds_and_profiles(conn: sqlite3.Connection) -> None:
    _add_column(conn, "claims", "kind", "TEXT NOT NULL DEFAULT 'fact'")
    _create(conn, schema.TABLES, "profile_entries")
    _create(conn, schema.CONTRACT_INDEXES, "profile_entries_scope")
    _install(conn, schema.PROFILE_TRIGGERS)


_SAME_SCOPE_EVIDENCE = (
    "FROM evidence e WHERE e.source_id = sources.id"
    " AND e.tenant_id = sources.tenant_id AND e.person_id = sources.person_id"
)
_SUPPORTS_OF_ORIGIN = (
    "FROM claim_evidence ce WHERE ce.evidence_id = sources.origin_evidence_id"
    " AND ce.relation = '\"supports\"'"
    " AND ce.tenant_id = sources.tenant_id AND ce.person_id = sources.person_id"
)


def _v6_origins_and_profiles(conn: sqlite3.Connection) -> None:
    _add_column(conn, "sources", "origin_evidence_id", "TEXT")
    _add_column(conn, "sources", "origin_claim_id", "TEXT")
    # Origins are only knowable when unambiguous: exactly one evidence row, then exactly one claim
    # that evidence supports. Anything else stays NULL (the memory simply cannot be replayed).
    conn.execute(
        f"UPDATE sources SET origin_evidence_id = (SELECT e.id {_SAME_SCOPE_EVIDENCE})"
        f" WHERE origin_evidence_id IS NULL AND (SELECT count(*) {_SAME_SCOPE_EVIDENCE}) = 1"
    )
    conn.execute(
        f"UPDATE sources SET origin_claim_id = (SELECT ce.claim_id {_SUPPORTS_OF_ORIGIN})"
        " WHERE origin_claim_id IS NULL AND origin_evidence_id IS NOT NULL"
        f" AND (SELECT count(*) {_SUPPORTS_OF_ORIGIN}) = 1"
    )
    _validate_scopes(conn, origins=True)

    _drop_triggers(conn, schema.PROFILE_TRIGGERS)
    conn.execute("DROP INDEX IF EXISTS profile_entries_current")
    _check(conn, "profile entry", _PROFILE_CLAIM.format(content=""))
    # Key and value are derived from the backing claim, never supplied: rewrite legacy free text.
    conn.execute(
        "UPDATE profile_entries SET"
        " key = (SELECT c.predicate FROM claims c WHERE c.id = profile_entries.claim_id),"
        " value = (SELECT c.value FROM claims c WHERE c.id = profile_entries.claim_id)"
    )
    # One entry per (scope, key): keep the latest recorded_at, then the greatest id.
    conn.execute(
        "DELETE FROM profile_entries WHERE EXISTS (SELECT 1 FROM profile_entries o"
        " WHERE o.tenant_id = profile_entries.tenant_id AND o.person_id = profile_entries.person_id"
        " AND o.key = profile_entries.key AND (o.recorded_at > profile_entries.recorded_at"
        " OR (o.recorded_at = profile_entries.recorded_at AND o.id > profile_entries.id)))"
    )
    _validate_scopes(conn, origins=True)
    _check(conn, "profile entry", _PROFILE_CLAIM.format(content=_PROFILE_CONTENT))
    _create(conn, schema.CONTRACT_INDEXES, "profile_entries_current")
    _install(conn, schema.SOURCE_ORIGIN_TRIGGERS)
    _install(conn, schema.PROFILE_TRIGGERS)


def _v7_claim_intervals(conn: sqlite3.Connection) -> None:
    invalid = conn.execute(
        "SELECT 1 FROM claims WHERE (valid_until IS NOT NULL AND valid_until <= valid_from)"
        " OR (recorded_until IS NOT NULL AND recorded_until <= recorded_from) LIMIT 1"
    ).fetchone()
    if invalid is not None:
        raise MigrationError("legacy claim has an invalid half-open time interval")
    _install(conn, schema.INTERVAL_TRIGGERS)


# ----------------------------------------------------------------------------------------------
# v8: the export feed and its bootstrap (§7.5)
# ----------------------------------------------------------------------------------------------


def _v8_export_feed(conn: sqlite3.Connection) -> None:
    _create(conn, schema.TABLES, "corrections", "memory_commits", "memory_export_events")
    _create(conn, schema.CONTRACT_INDEXES, "memory_commits_scope")
    _install(conn, schema.CORRECTION_TRIGGERS)
    if conn.execute("SELECT 1 FROM memory_commits LIMIT 1").fetchone() is None:
        bootstrap_feed(conn)


# ----------------------------------------------------------------------------------------------
# v9 (ours): float32 vectors, read indexes, replica tables, uniform triggers (v10:
# zkr.store.fts_rows)
# ----------------------------------------------------------------------------------------------


def _converge_on_fresh_schema(conn: sqlite3.Connection) -> None:
    """Create what a fresh database has and this one lacks; reinstall every trigger.

    The reference is :func:`zkr.store.schema.create_current_schema` run on a throwaway database, so
    the
    v9 indexes, the replica tables and any later addition there reach migrated files too, and a
    migrated file enforces exactly the triggers a fresh one does (0.2.x's review trigger, for one,
    did not insist on an array of strings).
    """
    fresh = sqlite3.connect(":memory:")
    try:
        schema.create_current_schema(fresh)
        objects = fresh.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
            " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'source_fts_%'"
            " AND name NOT LIKE 'recall_fts_%'"
            " ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid"
        ).fetchall()
    finally:
        fresh.close()
    existing = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    for kind, name, sql in objects:
        if kind == "trigger":
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            conn.execute(sql)
        elif name not in existing:
            conn.execute(sql)


def _drop_every_trigger(conn: sqlite3.Connection) -> None:
    """Before a table is swapped for a rebuilt copy: the convergence on the fresh schema reinstalls
    every trigger, and until then none may name the table (the rename checks them all, and the
    table is briefly gone)."""
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')


_BACKLOG_COLUMNS = "tenant_id, person_id, model, version, target_kind, target_id"


def _v16_backlog_key(conn: sqlite3.Connection) -> None:
    """Recreate ``projection_backlog`` with the target before the lane in its key (schema 16)."""
    if not schema.has_table(conn, "projection_backlog"):
        return  # older than the backlog: the convergence creates it
    _drop_every_trigger(conn)
    create = _named(EMBEDDING_TRACKING)["projection_backlog"]
    conn.execute(create.replace(" projection_backlog(", " projection_backlog_v16(", 1))
    conn.execute(
        f"INSERT INTO projection_backlog_v16({_BACKLOG_COLUMNS})"
        f" SELECT {_BACKLOG_COLUMNS} FROM projection_backlog"
    )
    conn.execute("DROP TABLE projection_backlog")  # and its index by target
    conn.execute("ALTER TABLE projection_backlog_v16 RENAME TO projection_backlog")


_EMBEDDING_COLUMNS = (
    "tenant_id, person_id, target_kind, target_id, model, version, dimension, input_hash,"
    " normalization, distance, vector, target_revision, created_at"
)


def _rebuild_embeddings(conn: sqlite3.Connection) -> None:
    """Recreate ``embeddings`` with a BLOB column, converting each JSON vector to float32 bytes."""
    _drop_every_trigger(conn)
    create = _named(schema.TABLES)["embeddings"]
    conn.execute(create.replace("CREATE TABLE embeddings(", "CREATE TABLE embeddings_v9(", 1))
    rows = conn.execute(f"SELECT {_EMBEDDING_COLUMNS} FROM embeddings").fetchall()
    converted = [(*row[:10], legacy_vector_blob(row[10]), *row[11:]) for row in rows]
    conn.executemany(
        f"INSERT INTO embeddings_v9({_EMBEDDING_COLUMNS}) VALUES ({', '.join('?' * 13)})",
        converted,
    )
    conn.execute("DROP TABLE embeddings")
    conn.execute("ALTER TABLE embeddings_v9 RENAME TO embeddings")


def legacy_vector_blob(stored: Any) -> bytes:
    """Little-endian float32 bytes of a vector as zkr 0.2.x stored it (JSON array text).

    BLOBs (already converted) are kept. Numbers are rounded to float32 like the reference's parser
    does (beyond float32 range -> +/-infinity, so the row stays detectably invalid). Anything that
    is not a JSON array of numbers becomes ``b""``: an empty vector is always invalid (§6.2), so the
    row is reported ``stale`` and rebuilt rather than silently "repaired".
    """
    if isinstance(stored, bytes):
        return stored
    if not isinstance(stored, str):
        return b""
    try:
        values = json.loads(stored, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return b""
    if not isinstance(values, list) or not all(_is_number(v) for v in values):
        return b""
    return b"".join(_float32(v) for v in values)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float32(value: float) -> bytes:
    try:
        return struct.pack("<f", float(value))
    except OverflowError:  # beyond float32 (or float64) range: an infinity, as in the reference
        return struct.pack("<f", math.inf if value > 0 else -math.inf)


#: zkr 0.2.x's chain in the contract's order (§3.5): each step runs when the stored version is
#: below its number (the shape repair, needed by everything after v1, runs right after v1).
_CONTRACT_STEPS: tuple[tuple[int, Callable[[sqlite3.Connection], None]], ...] = (
    (1, _v1_original_tables),
    (8, _repair_shape),
    (2, lambda conn: _create(conn, schema.TABLES, "evidence_locators")),
    (3, lambda conn: _create(conn, schema.CONTRACT_INDEXES, *_V1_INDEXES)),
    (4, _v4_scope_validation),
    (5, _v5_claim_kinds_and_profiles),
    (6, _v6_origins_and_profiles),
    (7, _v7_claim_intervals),
    (8, _v8_export_feed),
    (9, _rebuild_embeddings),
)
