"""The replica's PostgreSQL schema: migrations, row-level security and the serving role.

Everything lives in the PostgreSQL schema ``zkr``. Every table's key and every index lead with
``(tenant_id, person_id)``: that is the scope every query filters on, the column pair the
row-level-security policies compare, and the distribution key a sharded PostgreSQL (Citus) would
use (``docs/zkr-postgres.md`` shows how).

Roles: the DSN that runs the migrations owns the tables and writes them (``sync``, ``rebuild``).
Reads for people go through :data:`SERVING_ROLE`, a ``NOLOGIN NOBYPASSRLS`` role that owns nothing
and may only ``SELECT``; each of its transactions sets the scope with
``set_config('zkr.tenant_id', …, true)`` / ``zkr.person_id``. The policy on every table compares
the row's scope with those settings; ``current_setting(name, true)`` is NULL when unset, which
makes the comparison NULL and the row invisible, so a missing scope sees nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from psycopg import sql

from zkr_postgres._db import Conn
from zkr_postgres.partitions import partition, partition_count, partition_table

__all__ = [
    "MIGRATIONS",
    "SCHEMA",
    "SCOPED_TABLES",
    "SERVING_ROLE",
    "lane_table",
    "migrate",
    "scope_policy",
]

SCHEMA = "zkr"
#: The role every serving query runs as (``SET LOCAL ROLE``). Grant it to the login role `serve`
#: connects with: ``GRANT zkr_serving TO my_app``.
SERVING_ROLE = "zkr_serving"

#: The policy expression of every scoped table.
_SCOPE_CHECK = (
    "tenant_id = current_setting('zkr.tenant_id', true)"
    " AND person_id = current_setting('zkr.person_id', true)"
)

_STATEMENT = "subject || ' ' || replace(predicate, '_', ' ') || ' ' || value"

# Migration 1: every record of the feed, the cursors and the staging of split commits.
_V1 = f"""
CREATE TABLE zkr.cursors(
  tenant_id text NOT NULL, person_id text NOT NULL, upstream text NOT NULL,
  applied_commit bigint NOT NULL DEFAULT 0, applied_event_count integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, person_id, upstream));
CREATE TABLE zkr.staging(
  tenant_id text NOT NULL, person_id text NOT NULL, upstream text NOT NULL,
  commit_sequence bigint NOT NULL, event_index integer NOT NULL, recorded_at bigint NOT NULL,
  event_count integer NOT NULL, payload text NOT NULL,
  PRIMARY KEY (tenant_id, person_id, upstream, commit_sequence, event_index));
CREATE TABLE zkr.commits(
  tenant_id text NOT NULL, person_id text NOT NULL, upstream text NOT NULL,
  sequence bigint NOT NULL, recorded_at bigint NOT NULL, event_count integer NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, person_id, upstream, sequence));
CREATE TABLE zkr.sources(
  tenant_id text NOT NULL, person_id text NOT NULL, id text NOT NULL, upstream text NOT NULL,
  revision bigint NOT NULL, kind text NOT NULL, content text NOT NULL,
  captured_at bigint NOT NULL, recorded_at bigint NOT NULL, deleted_at bigint,
  ingestion_key text, origin_evidence_id text, origin_claim_id text,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  PRIMARY KEY (tenant_id, person_id, id));
CREATE INDEX sources_tsv ON zkr.sources USING gin (tsv);
CREATE INDEX sources_captured ON zkr.sources (tenant_id, person_id, captured_at DESC);
CREATE TABLE zkr.evidence(
  tenant_id text NOT NULL, person_id text NOT NULL, id text NOT NULL,
  source_id text NOT NULL, source_revision bigint NOT NULL, quote text NOT NULL,
  recorded_at bigint NOT NULL, deleted_at bigint,
  device_id text, provider text, stream_id text, segment_id text,
  start_ms numeric(20), end_ms numeric(20),
  PRIMARY KEY (tenant_id, person_id, id));
CREATE INDEX evidence_source ON zkr.evidence (tenant_id, person_id, source_id);
CREATE TABLE zkr.claims(
  tenant_id text NOT NULL, person_id text NOT NULL, id text NOT NULL,
  subject text NOT NULL, predicate text NOT NULL, value text NOT NULL, kind text NOT NULL,
  valid_from bigint NOT NULL, valid_until bigint,
  recorded_from bigint NOT NULL, recorded_until bigint, status text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', {_STATEMENT})) STORED,
  PRIMARY KEY (tenant_id, person_id, id));
CREATE INDEX claims_tsv ON zkr.claims USING gin (tsv);
CREATE INDEX claims_recorded ON zkr.claims (tenant_id, person_id, recorded_from DESC);
CREATE TABLE zkr.claim_evidence(
  tenant_id text NOT NULL, person_id text NOT NULL, claim_id text NOT NULL,
  evidence_id text NOT NULL, relation text NOT NULL, confidence_basis_points integer NOT NULL,
  PRIMARY KEY (tenant_id, person_id, claim_id, evidence_id));
CREATE INDEX claim_evidence_evidence ON zkr.claim_evidence (tenant_id, person_id, evidence_id);
CREATE TABLE zkr.corrections(
  tenant_id text NOT NULL, person_id text NOT NULL, superseded_claim_id text NOT NULL,
  claim_id text NOT NULL, source_id text NOT NULL, evidence_id text NOT NULL,
  valid_at bigint NOT NULL, recorded_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, person_id, superseded_claim_id, claim_id));
CREATE TABLE zkr.deletions(
  tenant_id text NOT NULL, person_id text NOT NULL, target_kind text NOT NULL,
  target_id text NOT NULL, deleted_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, person_id, target_kind, target_id));
CREATE TABLE zkr.erasures(
  tenant_id text NOT NULL, person_id text NOT NULL, target_kind text NOT NULL,
  target_id text NOT NULL, erased_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, person_id, target_kind, target_id));
CREATE TABLE zkr.profile_entries(
  tenant_id text NOT NULL, person_id text NOT NULL, id text NOT NULL, key text NOT NULL,
  value text NOT NULL, stability text NOT NULL, claim_id text NOT NULL,
  recorded_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, person_id, id));
CREATE TABLE zkr.daily_reviews(
  tenant_id text NOT NULL, person_id text NOT NULL, id text NOT NULL, day text NOT NULL,
  summary text NOT NULL, evidence_ids jsonb NOT NULL, recorded_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, person_id, id));
CREATE TABLE zkr.lanes(
  model text NOT NULL, version text NOT NULL, dimension integer NOT NULL,
  normalization text NOT NULL, distance text NOT NULL, table_name text NOT NULL UNIQUE,
  PRIMARY KEY (model, version));
"""

#: Tables whose rows belong to one (tenant, person): each gets the scope policy.
SCOPED_TABLES = (
    "cursors",
    "staging",
    "commits",
    "sources",
    "evidence",
    "claims",
    "claim_evidence",
    "corrections",
    "deletions",
    "erasures",
    "profile_entries",
    "daily_reviews",
)

# Migration 2: neighbour context for recall. A capture's `context` holds the text of up to two
# captures before and two after it (same scope and kind, live, captured within CONTEXT_GAP seconds
# of it), kept by `apply`; `tsv` then weighs the capture's own words as A and the context's as D.
_V2 = """
ALTER TABLE zkr.sources ADD COLUMN context text NOT NULL DEFAULT '';
DROP INDEX zkr.sources_tsv;
ALTER TABLE zkr.sources DROP COLUMN tsv;
ALTER TABLE zkr.sources ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', content), 'A')
  || setweight(to_tsvector('english', context), 'D')) STORED;
CREATE INDEX sources_tsv ON zkr.sources USING gin (tsv);
CREATE INDEX sources_neighbours ON zkr.sources (tenant_id, person_id, kind, captured_at, id);
"""

# Migration 3: zkr's timeline orders captures of one time by insertion: ``seq`` numbers the rows in
# the order they arrive (a feed applies in its upstream's order). And BM25 (see
# ``zkr_postgres.retrieval.lexical_sql``) reads, per document, its length ``tsv_tokens`` (the
# positions of its tsvector: its words that are not English stop words) and its term frequencies
# ``tsv_tf`` (``{lexeme: [positions weighted A, other positions]}``), both computed at write time
# from the same expression as the tsvector (a generated column cannot read another one), so a
# search reads them instead of unnesting every candidate's tsvector.
_SOURCE_TSV = (
    "setweight(to_tsvector('english', content), 'A')"
    " || setweight(to_tsvector('english', context), 'D')"
)
_V3 = f"""
ALTER TABLE zkr.sources ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX zkr.sources_neighbours;
CREATE INDEX sources_neighbours ON zkr.sources (tenant_id, person_id, kind, captured_at, seq);
CREATE FUNCTION zkr.tsv_tokens(tsvector) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN (SELECT coalesce(sum(cardinality(positions)), 0)::integer FROM unnest($1));
CREATE FUNCTION zkr.tsv_tf(tsvector) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN (SELECT coalesce(jsonb_object_agg(lexeme, jsonb_build_array(
            cardinality(array_positions(weights, 'A')),
            cardinality(positions) - cardinality(array_positions(weights, 'A')))), '{{}}')
          FROM unnest($1));
ALTER TABLE zkr.sources
  ADD COLUMN tsv_tokens integer GENERATED ALWAYS AS (zkr.tsv_tokens({_SOURCE_TSV})) STORED,
  ADD COLUMN tsv_tf jsonb GENERATED ALWAYS AS (zkr.tsv_tf({_SOURCE_TSV})) STORED;
ALTER TABLE zkr.claims
  ADD COLUMN tsv_tokens integer GENERATED ALWAYS AS (
    zkr.tsv_tokens(to_tsvector('english', {_STATEMENT}))) STORED,
  ADD COLUMN tsv_tf jsonb GENERATED ALWAYS AS (
    zkr.tsv_tf(to_tsvector('english', {_STATEMENT}))) STORED;
"""

# Migration 4: text holding U+0000, which PostgreSQL text cannot (``zkr_postgres.nul``): the
# served columns hold it read as a space, ``exact`` the original values as JSON.
_V4 = """
ALTER TABLE zkr.sources ADD COLUMN exact bytea;
ALTER TABLE zkr.evidence ADD COLUMN exact bytea;
ALTER TABLE zkr.claims ADD COLUMN exact bytea;
"""

# Migration 5: zkr's recall terms (issues 29 and 30). The replica indexed English-stemmed words
# (`to_tsvector('english')`) while zkr's recall index stores every language's words stemmed and
# segmented (zkr.store.analysis) and tokenized by FTS5. Now each source and claim holds `terms`,
# its text as zkr's recall index stores it (zkr.retrieval.replica_parts.recall_terms, computed in
# Python by apply: space-separated tokens), a source's `context` holds its neighbours' terms (the
# recall index's window: BEFORE captures before, AFTER after), and the tsvector (no parser, no
# configuration: array_to_tsvector), the term frequencies and the length are generated from them.
# The rows of an older replica are backfilled from their stored text (zkr_postgres.terms).
_TERM_FUNCTIONS = """
CREATE FUNCTION zkr.term_array(text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_remove(string_to_array($1, ' '), '');
CREATE FUNCTION zkr.terms_tsv(text, text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_tsvector(zkr.term_array($1) || zkr.term_array($2));
CREATE FUNCTION zkr.terms_tokens(text, text) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN cardinality(zkr.term_array($1)) + cardinality(zkr.term_array($2));
CREATE FUNCTION zkr.terms_tf(text, text) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN (SELECT coalesce(jsonb_object_agg(t, jsonb_build_array(own, near)), '{}')
          FROM (SELECT t, count(*) FILTER (WHERE side = 0) AS own,
                       count(*) FILTER (WHERE side = 1) AS near
                  FROM (SELECT unnest(zkr.term_array($1)) AS t, 0 AS side
                        UNION ALL SELECT unnest(zkr.term_array($2)), 1) x GROUP BY t) y);
"""
_V5_DROP = """
ALTER TABLE zkr.sources DROP COLUMN tsv, DROP COLUMN tsv_tf, DROP COLUMN tsv_tokens,
  ADD COLUMN terms text NOT NULL DEFAULT '';
ALTER TABLE zkr.claims DROP COLUMN tsv, DROP COLUMN tsv_tf, DROP COLUMN tsv_tokens,
  ADD COLUMN terms text NOT NULL DEFAULT '';
"""
_V5_GENERATED = """
ALTER TABLE zkr.sources
  ADD COLUMN tsv tsvector GENERATED ALWAYS AS (zkr.terms_tsv(terms, context)) STORED,
  ADD COLUMN tsv_tf jsonb GENERATED ALWAYS AS (zkr.terms_tf(terms, context)) STORED,
  ADD COLUMN tsv_tokens integer GENERATED ALWAYS AS (zkr.terms_tokens(terms, context)) STORED;
ALTER TABLE zkr.claims
  ADD COLUMN tsv tsvector GENERATED ALWAYS AS (zkr.terms_tsv(terms, '')) STORED,
  ADD COLUMN tsv_tf jsonb GENERATED ALWAYS AS (zkr.terms_tf(terms, '')) STORED,
  ADD COLUMN tsv_tokens integer GENERATED ALWAYS AS (zkr.terms_tokens(terms, '')) STORED;
CREATE INDEX sources_tsv ON zkr.sources USING gin (tsv);
CREATE INDEX claims_tsv ON zkr.claims USING gin (tsv);
"""


def _v5(conn: Conn) -> None:
    """Migration 5: recall terms, backfilled from the stored text (see above)."""
    from zkr_postgres.terms import backfill_terms

    conn.execute(_TERM_FUNCTIONS)
    conn.execute(_V5_DROP)
    backfill_terms(conn)
    conn.execute(_V5_GENERATED)


MIGRATIONS: tuple[str | Callable[[Conn], None], ...] = (_V1, _V2, _V3, _V4, _v5)

# One writer migrates at a time, whatever number of sync processes start together.
_MIGRATION_LOCK = 0x7A6B72_0001


def scope_policy(table: str) -> sql.Composed:
    """Row-level security for one scoped table: the serving role reads only the set scope."""
    name = sql.Identifier(SCHEMA, table)
    return sql.SQL(
        "ALTER TABLE {name} ENABLE ROW LEVEL SECURITY;"
        " CREATE POLICY scope_read ON {name} FOR SELECT TO {role} USING ({check});"
        " GRANT SELECT ON {name} TO {role};"
    ).format(name=name, role=sql.Identifier(SERVING_ROLE), check=sql.SQL(_SCOPE_CHECK))


def _ensure_role(conn: Conn) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (SERVING_ROLE,)).fetchone()
    if exists is None:
        conn.execute(
            sql.SQL("CREATE ROLE {} NOLOGIN NOBYPASSRLS NOSUPERUSER NOINHERIT").format(
                sql.Identifier(SERVING_ROLE)
            )
        )


def migrate(conn: Conn, partitions: int | None = None) -> int:
    """Bring the database to the newest schema (idempotent, safe from many processes at once);
    returns the schema version. The connection's user becomes the owner of what is created and
    must be allowed to create roles the first time (or the role must exist).

    *partitions*: hash-partition every scoped table by scope into that many partitions
    (:mod:`zkr_postgres.partitions`; a plain replica is converted, rows included); None keeps
    the layout the replica has."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(SCHEMA)))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS zkr.schema_migrations("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        _ensure_role(conn)
        row = conn.execute("SELECT coalesce(max(version), 0) FROM zkr.schema_migrations").fetchone()
        current = int(row[0]) if row else 0
        for version, script in enumerate(MIGRATIONS, start=1):
            if version <= current:
                continue
            if callable(script):
                script(conn)
            else:
                conn.execute(script)
            if version == 1:
                _secure_v1(conn)
            conn.execute("INSERT INTO zkr.schema_migrations(version) VALUES (%s)", (version,))
        if partitions is not None:
            partition(conn, [*SCOPED_TABLES, *lane_tables(conn)], partitions)
        return len(MIGRATIONS)


def _secure_v1(conn: Conn) -> None:
    role = sql.Identifier(SERVING_ROLE)
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA zkr TO {}").format(role))
    for table in SCOPED_TABLES:
        conn.execute(scope_policy(table))
    # Lanes hold no person's data, but the serving role still sees them only inside a scope.
    conn.execute(
        sql.SQL(
            "ALTER TABLE zkr.lanes ENABLE ROW LEVEL SECURITY;"
            " CREATE POLICY scope_read ON zkr.lanes FOR SELECT TO {role}"
            " USING (current_setting('zkr.tenant_id', true) IS NOT NULL"
            " AND current_setting('zkr.person_id', true) IS NOT NULL);"
            " GRANT SELECT ON zkr.lanes TO {role};"
        ).format(role=role)
    )


def lane_table(model: str, version: str) -> str:
    """The vector table of one embedding lane: a stable name derived from model and version."""
    digest = hashlib.sha256(f"{model}\x00{version}".encode()).hexdigest()[:16]
    return f"lane_{digest}"


def create_lane(
    conn: Conn,
    model: str,
    version: str,
    dimension: int,
    normalization: str,
    distance: str,
) -> str:
    """Create (once) the ``vector(dimension)`` table of a lane, with its scope policy; returns its
    table name. Must run inside the caller's transaction."""
    table = lane_table(model, version)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    row = conn.execute(
        "SELECT dimension, normalization, distance FROM zkr.lanes"
        " WHERE model = %s AND version = %s",
        (model, version),
    ).fetchone()
    if row is not None:
        if tuple(row) != (dimension, normalization, distance):
            raise ValueError(
                f"lane {model}@{version} holds {row[0]}-dimension {row[1]}/{row[2]} vectors;"
                f" the embedder gives {dimension}-dimension {normalization}/{distance}"
            )
        return table
    name = sql.Identifier(SCHEMA, table)
    conn.execute(
        sql.SQL(
            "CREATE TABLE {name}(tenant_id text NOT NULL, person_id text NOT NULL,"
            " target_kind text NOT NULL, target_id text NOT NULL, input_hash text NOT NULL,"
            " embedding vector({dim}) NOT NULL,"
            " PRIMARY KEY (tenant_id, person_id, target_kind, target_id))"
        ).format(name=name, dim=sql.Literal(dimension))
    )
    conn.execute(scope_policy(table))
    layout = partition_count(conn)
    if layout is not None:  # a lane of a partitioned replica is partitioned the same way
        partition_table(conn, table, layout)
    conn.execute(
        "INSERT INTO zkr.lanes(model, version, dimension, normalization, distance, table_name)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (model, version, dimension, normalization, distance, table),
    )
    return table


def lane_tables(conn: Conn) -> Sequence[str]:
    """Every lane's vector table (for erasure and deletion, which reach every lane)."""
    return [str(row[0]) for row in conn.execute("SELECT table_name FROM zkr.lanes").fetchall()]
