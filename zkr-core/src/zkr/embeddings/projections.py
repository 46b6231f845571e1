"""Embedding projections: what to embed for a target, and which stored vectors still count.

Contract §6: a target's projection is its exact text, revision and ``sha256:`` hash; a stored
vector counts while its target is live at that revision and its configuration is its lane's. The
``projections`` operation that lists the work is :mod:`zkr.embeddings.backlog`, ``embed`` that
stores one vector :mod:`zkr.embeddings.storing`; our ``rebuild`` (:mod:`zkr.embeddings.rebuild`)
pulls the work through an installed embedder.

Speed without re-reading vectors: every row ``embed`` writes also gets a certificate in
``embedding_checks`` (valid vector, hash matched the target text), which triggers void whenever the
row or the target's text changes. So the health of a certified row is decided in SQL (target live,
revision equal, configuration on the lane); only uncertified rows (written by zkr 0.2.x, raw SQL)
are decoded and hashed in Python. A lane's configurations come from an index, a few per lane.
"""

from __future__ import annotations

import hashlib
import sqlite3

from zkr import models as m
from zkr.errors import EmbeddingError, NotFound
from zkr.store.schema import has_table
from zkr.store.validation import is_blank

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    pass
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "Config",
    "ProjectionText",
    "StoredRow",
    "Target",
    "claim_text",
    "config_key",
    "current_lane",
    "input_hash",
    "projection_input",
    "require_lane_names",
]

#: ``(target_kind, target_id)``.
Target = tuple[str, str]
#: A lane configuration ``(dimension, normalization, distance)``, normalization/distance bare.
Config = tuple[int, str, str]

_NORMALIZATION_ORDER = {"none": 0, "l2": 1}
_DISTANCE_ORDER = {"cosine": 0, "dot": 1, "euclidean": 2}
_CURRENT_CLAIM = "status = 'accepted' AND valid_until IS NULL AND recorded_until IS NULL"


def config_key(config: Config) -> tuple[int, int, int]:
    """Contract order of configurations: dimension, none < l2, then cosine < dot < euclidean."""
    return config[0], _NORMALIZATION_ORDER[config[1]], _DISTANCE_ORDER[config[2]]


def input_hash(text: str) -> str:
    """``sha256:`` + lowercase hex SHA-256 of the UTF-8 bytes of *text* (no normalization)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class ProjectionText(NamedTuple):
    """What to embed for a target (contract §6.1)."""

    kind: str
    id: str
    text: str
    revision: int

    @property
    def input_hash(self) -> str:
        return input_hash(self.text)

    def model(self) -> m.ProjectionInput:
        return m.ProjectionInput(
            target=m.MemoryRef(kind=m.MemoryKind(self.kind), id=self.id),
            text=self.text,
            target_revision=self.revision,
            input_hash=self.input_hash,
        )


def claim_text(subject: str, predicate: str, value: str) -> str:
    return f"{subject} {predicate} {value}"


# kind -> the live target's text column(s) then its revision; scope and id are the parameters.
_PROJECTION_QUERIES = {
    "source": "SELECT content, revision FROM sources WHERE id = ? AND tenant_id = ?"
    " AND person_id = ? AND deleted_at IS NULL",
    "evidence": "SELECT quote, source_revision FROM evidence WHERE id = ? AND tenant_id = ?"
    " AND person_id = ? AND deleted_at IS NULL",
    "claim": "SELECT subject, predicate, value, recorded_from FROM claims WHERE id = ?"
    f" AND tenant_id = ? AND person_id = ? AND {_CURRENT_CLAIM}",
}


def projection_input(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, kind: str, target_id: str
) -> ProjectionText:
    """The projection input of a live target in scope.

    :raises NotFound: the target is missing, not live (deleted, not current) or in another scope.
    """
    query = _PROJECTION_QUERIES.get(kind)
    row = (
        None if query is None else conn.execute(query, (target_id, tenant_id, person_id)).fetchone()
    )
    if row is None:
        raise NotFound()
    *columns, revision = row
    text = claim_text(*columns) if kind == "claim" else columns[0]
    return ProjectionText(kind, target_id, text, revision)


# ----------------------------------------------------------------------------------------------
# Certificates (embedding_checks)
# ----------------------------------------------------------------------------------------------

_EMPTY_CHECKS = (
    "(SELECT NULL AS tenant_id, NULL AS person_id, NULL AS target_kind, NULL AS target_id,"
    " NULL AS model, NULL AS version, NULL AS target_revision, NULL AS dimension,"
    " NULL AS normalization, NULL AS distance WHERE 0)"
)


def _checks(conn: sqlite3.Connection) -> str:
    """The certificate table, or an empty stand-in for a file migrated without it."""
    return "embedding_checks" if has_table(conn, "embedding_checks") else _EMPTY_CHECKS


# SQL: is the target of embeddings-like row `alias` live with revision `alias.target_revision`?
def _live_at_revision(alias: str) -> str:
    scope = f"tenant_id = {alias}.tenant_id AND person_id = {alias}.person_id"
    return (
        f"CASE {alias}.target_kind"
        f" WHEN 'source' THEN EXISTS (SELECT 1 FROM sources WHERE id = {alias}.target_id"
        f" AND {scope} AND deleted_at IS NULL AND revision = {alias}.target_revision)"
        f" WHEN 'evidence' THEN EXISTS (SELECT 1 FROM evidence WHERE id = {alias}.target_id"
        f" AND {scope} AND deleted_at IS NULL AND source_revision = {alias}.target_revision)"
        f" WHEN 'claim' THEN EXISTS (SELECT 1 FROM claims WHERE id = {alias}.target_id AND {scope}"
        f" AND {_CURRENT_CLAIM} AND recorded_from = {alias}.target_revision)"
        " ELSE 0 END"
    )


class StoredRow(NamedTuple):
    """One ``embeddings`` row of a lane, as stored."""

    kind: str
    id: str
    dimension: Any
    input_hash: Any
    normalization: Any
    distance: Any
    vector: Any
    target_revision: Any
    created_at: Any

    def config(self) -> Config | None:
        from zkr.embeddings.stored_config import stored_config

        return stored_config(self.dimension, self.normalization, self.distance)

    def is_valid(self) -> bool:
        """Contract §6.2: parsable configuration, ``dimension`` finite values, unit if ``l2``."""
        from zkr.embeddings.vectors import row_vector

        return (
            row_vector(self.dimension, self.normalization, self.distance, self.vector) is not None
        )

    def is_fresh_for(self, current: ProjectionText) -> bool:
        return bool(
            self.target_revision == current.revision and self.input_hash == current.input_hash
        )


_ROW_COLUMNS = (
    "target_kind, target_id, dimension, input_hash, normalization, distance, vector,"
    " target_revision, created_at"
)


def _stored_row(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    target: Target,
    model: str,
    version: str,
) -> StoredRow | None:
    row = conn.execute(
        f"SELECT {_ROW_COLUMNS} FROM embeddings WHERE tenant_id = ? AND person_id = ?"
        " AND target_kind = ? AND target_id = ? AND model = ? AND version = ?",
        (tenant_id, person_id, target[0], target[1], model, version),
    ).fetchone()
    return StoredRow(*row) if row is not None else None


def _qualifies(conn: sqlite3.Connection, tenant_id: str, person_id: str, row: StoredRow) -> bool:
    """Full check of one row (§6.3): valid, target live, revision and hash current."""
    if not row.is_valid():
        return False
    try:
        current = projection_input(conn, tenant_id, person_id, row.kind, row.id)
    except NotFound:
        return False
    return row.is_fresh_for(current)


# ----------------------------------------------------------------------------------------------
# Lanes (§6.3)
# ----------------------------------------------------------------------------------------------


def _raw_configs(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, model: str, version: str
) -> list[tuple[Any, Any, Any]]:
    """Distinct stored (dimension, normalization, distance), read by skipping along an index.

    Each step seeks the next configuration after the last one found, one column at a time (a
    row-value range would make SQLite scan every entry of the current dimension).
    """
    select = "SELECT dimension, normalization, distance FROM embeddings"
    scope = " WHERE tenant_id = ? AND person_id = ? AND model = ? AND version = ?"
    params: tuple[Any, ...] = (tenant_id, person_id, model, version)
    order = " ORDER BY dimension, normalization, distance LIMIT 1"
    found: list[tuple[Any, Any, Any]] = []
    row = conn.execute(select + scope + order, params).fetchone()
    while row is not None:
        found.append(row)
        dimension, normalization, _distance = row
        row = None
        for condition, values in (
            (" AND dimension = ? AND normalization = ? AND distance > ?", found[-1]),
            (" AND dimension = ? AND normalization > ?", (dimension, normalization)),
            (" AND dimension > ?", (dimension,)),
        ):
            row = conn.execute(select + scope + condition + order, (*params, *values)).fetchone()
            if row is not None:
                break
    return found


def _other_row_qualifies(
    conn: sqlite3.Connection,
    checks: str,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    config: Config,
    raw: list[tuple[Any, Any, Any]],
    excluded: Target | None,
) -> bool:
    """Does any row of *config* other than *excluded* count (valid, live, fresh)?"""
    exclude_sql = ""
    exclude_params: tuple[str, ...] = ()
    if excluded is not None:
        exclude_sql = " AND NOT (k.target_kind = ? AND k.target_id = ?)"
        exclude_params = excluded
    certified = conn.execute(
        f"SELECT 1 FROM {checks} k WHERE k.tenant_id = ? AND k.person_id = ? AND k.model = ?"
        " AND k.version = ? AND k.dimension = ? AND k.normalization = ? AND k.distance = ?"
        f"{exclude_sql} AND {_live_at_revision('k')} LIMIT 1",
        (tenant_id, person_id, model, version, *config, *exclude_params),
    ).fetchone()
    if certified is not None:
        return True
    # Rows zkr did not certify (legacy, raw SQL): check them one by one, stop at the first.
    for dimension, normalization, distance in raw:
        cursor = conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM embeddings e WHERE e.tenant_id = ? AND e.person_id = ?"
            " AND e.model = ? AND e.version = ? AND e.dimension IS ? AND e.normalization IS ?"
            " AND e.distance IS ?"
            f" AND NOT EXISTS (SELECT 1 FROM {checks} k WHERE k.tenant_id = e.tenant_id"
            " AND k.person_id = e.person_id AND k.target_kind = e.target_kind"
            " AND k.target_id = e.target_id AND k.model = e.model AND k.version = e.version)",
            (tenant_id, person_id, model, version, dimension, normalization, distance),
        )
        for values in cursor:
            row = StoredRow(*values)
            if (row.kind, row.id) != excluded and _qualifies(conn, tenant_id, person_id, row):
                cursor.close()
                return True
    return False


def current_lane(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    replacing: Target | None = None,
) -> Config | None:
    """The lane of (scope, model, version): the minimum configuration among counting rows.

    A row counts when it is valid (§6.2), its target is live and its revision and hash are current.
    With *replacing* (an ``embed`` of that target), a lane whose only counting row is the target's
    own is no lane, so a lone target may change configuration.
    """
    raws = list(_raw_configs(conn, tenant_id, person_id, model, version))
    if not raws:  # no row in the lane: a one-shot ``projections`` need not import numpy
        return None
    from zkr.embeddings.stored_config import stored_config

    grouped: dict[Config, list[tuple[Any, Any, Any]]] = {}
    for raw in raws:
        config = stored_config(*raw)
        if config is not None:  # an unparsable configuration never counts
            grouped.setdefault(config, []).append(raw)
    if not grouped:
        return None
    target_config: Config | None = None
    if replacing is not None:
        own = _stored_row(conn, tenant_id, person_id, replacing, model, version)
        if own is not None and _qualifies(conn, tenant_id, person_id, own):
            target_config = own.config()
    checks = _checks(conn)
    smallest: Config | None = None
    for config in sorted(grouped, key=config_key):
        if _other_row_qualifies(
            conn, checks, tenant_id, person_id, model, version, config, grouped[config], replacing
        ):
            return smallest or config
        if smallest is None and config == target_config:
            smallest = config
    return None


# ----------------------------------------------------------------------------------------------
# embed (§6.4)
# ----------------------------------------------------------------------------------------------


def require_lane_names(model: str, version: str) -> None:
    """``embedding model must not be empty`` / ``embedding version must not be empty``."""
    if is_blank(model):
        raise EmbeddingError("embedding model must not be empty")
    if is_blank(version):
        raise EmbeddingError("embedding version must not be empty")
