"""Embedding projections: what to embed, which stored vectors still count, and storing new ones.

Contract §6: ``projections`` lists stale or missing work with the exact text, revision and
``sha256:`` hash to embed; ``embed`` stores one vector after checking its hash and its lane. Our
addition ``rebuild`` (:mod:`zkr.embeddings.rebuild`) pulls that work through an installed embedder.

Speed without re-reading vectors: every row ``embed`` writes also gets a certificate in
``embedding_checks`` (valid vector, hash matched the target text), which triggers void whenever the
row or the target's text changes. So the health of a certified row is decided in SQL (target live,
revision equal, configuration on the lane); only uncertified rows (written by zkr 0.2.x, raw SQL)
are decoded and hashed in Python. A lane's configurations come from an index, a few per lane.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from zkr import models as m
from zkr.errors import EmbeddingError, LimitExceeded, NotFound
from zkr.store.schema import has_table
from zkr.store.validation import is_blank, require_scope

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = [
    "MAX_PROJECTION_PAGE_BYTES",
    "Config",
    "InputChangedError",
    "ProjectionText",
    "Target",
    "backlog_covers",
    "check_embedding_request",
    "checked_vector",
    "config_key",
    "current_lane",
    "embed",
    "input_hash",
    "iter_issues",
    "projection_input",
    "projections",
    "register_lane",
    "require_lane_names",
    "store_embedding",
]

#: Budget of one ``projections`` page (compact JSON array of issues).
MAX_PROJECTION_PAGE_BYTES = 1_000_000

#: ``(target_kind, target_id)``.
Target = tuple[str, str]
#: A lane configuration ``(dimension, normalization, distance)``, normalization/distance bare.
Config = tuple[int, str, str]

_NORMALIZATION_ORDER = {"none": 0, "l2": 1}
_DISTANCE_ORDER = {"cosine": 0, "dot": 1, "euclidean": 2}
_CURRENT_CLAIM = "status = 'accepted' AND valid_until IS NULL AND recorded_until IS NULL"


class InputChangedError(EmbeddingError):
    """The vector was computed for other text than the target's current input."""


def config_key(config: Config) -> tuple[int, int, int]:
    """Contract order of configurations: dimension, none < l2, then cosine < dot < euclidean."""
    return config[0], _NORMALIZATION_ORDER[config[1]], _DISTANCE_ORDER[config[2]]


def input_hash(text: str) -> str:
    """``sha256:`` + lowercase hex SHA-256 of the UTF-8 bytes of *text* (no normalization)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ProjectionText:
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


@dataclass(frozen=True, slots=True)
class StoredRow:
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
        from zkr.embeddings.vectors import stored_config

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
    exclude_sql, exclude_params = "", cast(tuple[str, ...], ())
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
    grouped: dict[Config, list[tuple[Any, Any, Any]]] = {}
    from zkr.embeddings.vectors import stored_config

    for raw in _raw_configs(conn, tenant_id, person_id, model, version):
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


def checked_vector(embedding: m.EmbeddingInput) -> Any:
    from zkr.embeddings.vectors import is_unit, to_float32

    vector = to_float32(embedding.vector)
    import numpy as np

    if len(vector) == 0 or not bool(np.isfinite(vector).all()):
        raise EmbeddingError("embedding vector must contain finite values")
    if embedding.normalization is m.VectorNormalization.l2 and not is_unit(vector):
        raise EmbeddingError("l2-normalized embedding vector must have unit magnitude")
    return vector


def store_embedding(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    target: Target,
    embedding: m.EmbeddingInput,
    vector: Any,
) -> m.EmbedResult:
    """Steps 2-6 of ``embed`` inside the caller's write transaction (vector already checked)."""
    from zkr.embeddings.vectors import encode

    current = projection_input(conn, tenant_id, person_id, *target)
    expected = current.input_hash
    if embedding.input_hash != expected:
        raise InputChangedError(
            f"embedding input_hash does not match current target input; expected {expected}"
        )
    config: Config = (len(vector), embedding.normalization.value, embedding.distance.value)
    lane = current_lane(
        conn, tenant_id, person_id, embedding.model, embedding.version, replacing=target
    )
    if lane is not None and lane != config:
        raise EmbeddingError(
            "embedding configuration conflicts with the existing model/version lane"
        )
    key = (tenant_id, person_id, target[0], target[1], embedding.model, embedding.version)
    created_at: int = conn.execute(
        "INSERT INTO embeddings(tenant_id, person_id, target_kind, target_id, model, version,"
        " dimension, input_hash, normalization, distance, vector, target_revision, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, unixepoch())"
        " ON CONFLICT(tenant_id, person_id, target_kind, target_id, model, version) DO UPDATE SET"
        " dimension = excluded.dimension, input_hash = excluded.input_hash,"
        " normalization = excluded.normalization, distance = excluded.distance,"
        " vector = excluded.vector, target_revision = excluded.target_revision,"
        " created_at = excluded.created_at RETURNING created_at",
        (
            *key,
            config[0],
            expected,
            json.dumps(config[1]),
            json.dumps(config[2]),
            encode(vector),
            current.revision,
        ),
    ).fetchone()[0]
    if _checks(conn) == "embedding_checks":
        register_lane(conn, tenant_id, person_id, embedding.model, embedding.version)
        conn.execute(
            "INSERT OR REPLACE INTO embedding_checks(tenant_id, person_id, target_kind, target_id,"
            " model, version, target_revision, dimension, normalization, distance)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*key, current.revision, *config),
        )
    return m.EmbedResult(
        target=m.MemoryRef(kind=m.MemoryKind(target[0]), id=target[1]),
        dimension=config[0],
        target_revision=current.revision,
        input_hash=expected,
        created_at=created_at,
    )


def check_embedding_request(tenant_id: str, person_id: str, embedding: m.EmbeddingInput) -> Any:
    """Step 1 of ``embed``: scope, names, hash, finite (unit) vector. Returns the float32 vector."""
    require_scope(tenant_id, person_id)
    require_lane_names(embedding.model, embedding.version)
    if is_blank(embedding.input_hash):
        raise EmbeddingError("embedding input_hash must not be empty")
    return checked_vector(embedding)


def embed(db: Database, request: m.EmbedRequest) -> m.EmbedResult:
    """Store one vector for a live target (contract §6.4). No commit-feed event.

    :raises InvalidRequest: blank scope; :class:`~zkr.errors.EmbeddingError` for a blank name or
        hash, a non-finite or non-unit vector, a hash of other text, or a lane conflict.
    :raises NotFound: the target is not live in this scope.
    """
    vector = check_embedding_request(request.tenant_id, request.person_id, request.embedding)
    target: Target = (request.target.kind.value, request.target.id)
    with db.atomic() as conn:
        return store_embedding(
            conn, request.tenant_id, request.person_id, target, request.embedding, vector
        )


# ----------------------------------------------------------------------------------------------
# projections (§6.5)
# ----------------------------------------------------------------------------------------------

# Candidate targets per kind, in (target_kind, target_id) order: claims, evidence, sources.
# Each query yields (id, text-or-parts, revision) and the certificate verdict computed in SQL.
_KIND_ORDER = ("claim", "evidence", "source")


def _candidate_sql(kind: str, checks: str, lane: Config | None, backlog: bool) -> str:
    """Stale-or-missing candidates of *kind* after ``:after``, in id order, healthy ones skipped.

    Named parameters: model, version, tenant, person, after and (with a lane) dimension,
    normalization, distance. With *backlog* the walk is driven by the lane's backlog (see
    :mod:`zkr.store._embedding_tracking`) instead of every target of the scope; the conditions are
    the
    same, so the answer is too whenever the backlog holds every target that may be listed.
    """
    lane_sql = ""
    if lane is not None:
        lane_sql = (
            " AND k.dimension = :dimension AND k.normalization = :normalization"
            " AND k.distance = :distance"
        )
    join = (
        f" LEFT JOIN {checks} k ON k.tenant_id = t.tenant_id AND k.person_id = t.person_id"
        f" AND k.target_kind = '{kind}' AND k.target_id = t.id AND k.model = :model"
        " AND k.version = :version"
    )
    table, revision, select, where = _KIND_SQL[kind]
    healthy = f"(k.target_id IS NOT NULL AND k.target_revision = t.{revision}{lane_sql})"
    if backlog:
        # CROSS JOIN keeps the backlog as the outer loop: its primary key gives the id order.
        return (
            f"SELECT {select} FROM projection_backlog b CROSS JOIN {table} t"
            " ON t.id = b.target_id AND t.tenant_id = b.tenant_id AND t.person_id = b.person_id"
            f"{join} WHERE b.tenant_id = :tenant AND b.person_id = :person AND b.model = :model"
            f" AND b.version = :version AND b.target_kind = '{kind}' AND b.target_id > :after"
            f" AND {where} AND NOT {healthy} ORDER BY b.target_id"
        )
    return (
        f"SELECT {select} FROM {table} t{join} WHERE t.tenant_id = :tenant"
        f" AND t.person_id = :person AND {where} AND t.id > :after AND NOT {healthy}"
        " ORDER BY t.id"
    )


# kind -> (table, revision column, selected columns, "is a candidate" test of alias t) (§6.5).
_KIND_SQL = {
    "claim": (
        "claims",
        "recorded_from",
        "t.id, t.subject, t.predicate, t.value, t.recorded_from",
        f"t.{_CURRENT_CLAIM.replace(' AND ', ' AND t.')}",
    ),
    "evidence": (
        "evidence",
        "source_revision",
        "t.id, t.quote, NULL, NULL, t.source_revision",
        "t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM sources s WHERE s.id = t.source_id"
        " AND s.tenant_id = t.tenant_id AND s.person_id = t.person_id AND s.deleted_at IS NULL)",
    ),
    "source": (
        "sources",
        "revision",
        "t.id, t.content, NULL, NULL, t.revision",
        "t.deleted_at IS NULL",
    ),
}


def register_lane(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, model: str, version: str
) -> None:
    """Start maintaining the backlog of (scope, model, version), filling it once.

    Called by ``embed`` before it certifies a row (inside its write transaction). The first time a
    lane is seen, every candidate target without a certificate at its current revision enters the
    backlog (one pass over the scope); from then on triggers keep it exact.
    """
    if not has_table(conn, "projection_lanes"):
        return
    added = conn.execute(
        "INSERT INTO projection_lanes(tenant_id, person_id, model, version) VALUES (?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (tenant_id, person_id, model, version),
    ).rowcount
    if not added:
        return
    for kind, (table, revision, _select, candidate) in _KIND_SQL.items():
        conn.execute(
            "INSERT INTO projection_backlog(tenant_id, person_id, model, version, target_kind,"
            f" target_id) SELECT t.tenant_id, t.person_id, :model, :version, '{kind}', t.id"
            f" FROM {table} t WHERE t.tenant_id = :tenant AND t.person_id = :person"
            f" AND {candidate} AND NOT EXISTS (SELECT 1 FROM embedding_checks k"
            " WHERE k.tenant_id = t.tenant_id AND k.person_id = t.person_id"
            f" AND k.target_kind = '{kind}' AND k.target_id = t.id AND k.model = :model"
            f" AND k.version = :version AND k.target_revision = t.{revision})"
            " ON CONFLICT DO NOTHING",
            {"tenant": tenant_id, "person": person_id, "model": model, "version": version},
        )


def backlog_covers(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    lane: Config | None,
) -> bool:
    """Does the lane's backlog hold every target ``projections`` could list?

    True when the lane is registered and its certificates share one configuration that is the
    lane's: then a candidate outside the backlog has a certificate at its current revision, on the
    lane, so it is healthy. Otherwise (unregistered lane, mixed or off-lane certificates) the
    caller scans every target.
    """
    if not has_table(conn, "projection_lanes"):
        return False
    registered = conn.execute(
        "SELECT 1 FROM projection_lanes WHERE tenant_id = ? AND person_id = ? AND model = ?"
        " AND version = ?",
        (tenant_id, person_id, model, version),
    ).fetchone()
    if registered is None:
        return False
    bounds = [
        conn.execute(
            "SELECT dimension, normalization, distance FROM embedding_checks"
            " WHERE tenant_id = ? AND person_id = ? AND model = ? AND version = ?"
            f" ORDER BY dimension {order}, normalization {order}, distance {order} LIMIT 1",
            (tenant_id, person_id, model, version),
        ).fetchone()
        for order in ("ASC", "DESC")
    ]
    if bounds[0] is None:
        return True  # no certificate: every candidate is in the backlog
    if bounds[0] != bounds[1]:
        return False
    # With no lane, no candidate is certified (a certified candidate would count and make one).
    return lane is None or tuple(bounds[0]) == lane


def iter_issues(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    lane: Config | None,
    after: Target | None = None,
) -> Generator[m.ProjectionIssue, None, None]:
    """Every stale or missing projection of the scope, in (kind, id) order, lazily.

    *after* resumes strictly after that target (``rebuild`` pages with it).
    """
    checks = _checks(conn)
    backlog = checks == "embedding_checks" and backlog_covers(
        conn, tenant_id, person_id, model, version, lane
    )
    params: dict[str, Any] = {
        "model": model,
        "version": version,
        "tenant": tenant_id,
        "person": person_id,
    }
    if lane is not None:
        params.update(dimension=lane[0], normalization=lane[1], distance=lane[2])
    for kind in _KIND_ORDER:
        if after is not None and kind < after[0]:
            continue
        params["after"] = after[1] if after is not None and kind == after[0] else ""
        cursor = conn.execute(_candidate_sql(kind, checks, lane, backlog), params)
        for target_id, text, predicate, value, revision in cursor:
            if kind == "claim":
                text = claim_text(text, predicate, value)
            current = ProjectionText(kind, target_id, text, revision)
            issue = _issue_for(conn, tenant_id, person_id, model, version, lane, current)
            if issue is not None:
                yield issue


def _issue_for(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    model: str,
    version: str,
    lane: Config | None,
    current: ProjectionText,
) -> m.ProjectionIssue | None:
    stored = _stored_row(conn, tenant_id, person_id, (current.kind, current.id), model, version)
    if stored is None:
        state = m.ProjectionState.missing
    elif (
        not stored.is_fresh_for(current)
        or not stored.is_valid()
        or (lane is not None and stored.config() != lane)
    ):
        state = m.ProjectionState.stale
    else:
        return None  # healthy, merely not certified (e.g. migrated from zkr 0.2.x)
    return m.ProjectionIssue(
        state=state,
        input=current.model(),
        stored_target_revision=_int_or_none(stored.target_revision) if stored else None,
        stored_input_hash=stored.input_hash
        if stored and isinstance(stored.input_hash, str)
        else None,
        stored_created_at=_int_or_none(stored.created_at) if stored else None,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _issue_bytes(issue: m.ProjectionIssue) -> int:
    from zkr.jsonio import compact_len

    return compact_len(issue.model_dump(mode="json", by_alias=True))


def projections(db: Database, request: m.ProjectionsRequest) -> list[m.ProjectionIssue]:
    """Stale or missing embedding work for (scope, model, version) (contract §6.5).

    Claims first, then evidence, then sources (each by id); at most ``limit`` issues and at most
    1,000,000 bytes of compact JSON (the page is cut short, never split).

    :raises InvalidRequest: blank scope; :class:`~zkr.errors.EmbeddingError` for a blank
        model/version; :class:`~zkr.errors.LimitExceeded` when one issue alone is over the budget.
    """
    require_scope(request.tenant_id, request.person_id)
    require_lane_names(request.model, request.version)
    limit = m.bounded_limit(request.limit)
    tenant_id, person_id = request.tenant_id, request.person_id
    with db.atomic(write=False) as conn:
        lane = current_lane(conn, tenant_id, person_id, request.model, request.version)
        issues = iter_issues(conn, tenant_id, person_id, request.model, request.version, lane)
        try:
            collected, _bytes = _page(issues, limit)
        finally:
            issues.close()
    return collected


def _page(issues: Iterator[m.ProjectionIssue], limit: int) -> tuple[list[m.ProjectionIssue], int]:
    """Collect up to *limit* issues within the page budget (§6.5 step 5)."""
    collected: list[m.ProjectionIssue] = []
    page = 2  # "[]"
    for issue in issues:
        size = _issue_bytes(issue)
        if size + 2 > MAX_PROJECTION_PAGE_BYTES:
            raise LimitExceeded(
                f"projection issue exceeds the {MAX_PROJECTION_PAGE_BYTES}-byte page limit"
            )
        if collected and page + size + 1 > MAX_PROJECTION_PAGE_BYTES:
            break
        page += size + (1 if collected else 0)
        collected.append(issue)
        if len(collected) >= limit:
            break
    return collected, page
