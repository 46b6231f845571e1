"""The ``projections`` operation (contract §6.5): a lane's stale or missing work, page by page.

Candidates are walked per kind (claims, evidence, sources, each by id) with the certificate verdict
computed in SQL, so only uncertified rows are decoded and hashed. Once a lane is registered its
backlog (``projection_backlog``, kept exact by triggers: :mod:`zkr.store._embedding_tracking`)
drives the walk instead of every target of the scope, with the same conditions and so the same
answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Iterator

from zkr import models as m
from zkr.embeddings.projections import (
    _CURRENT_CLAIM,
    Config,
    ProjectionText,
    Target,
    _checks,
    _stored_row,
    claim_text,
    current_lane,
    require_lane_names,
)
from zkr.errors import LimitExceeded
from zkr.store.schema import has_table
from zkr.store.validation import require_scope

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.embeddings._lane_rows import LaneKey
    from zkr.store.database import Database

__all__ = [
    "MAX_PROJECTION_PAGE_BYTES",
    "backlog_covers",
    "iter_issues",
    "projections",
    "register_lane",
]

#: Budget of one ``projections`` page (compact JSON array of issues).
MAX_PROJECTION_PAGE_BYTES = 1_000_000

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


def backlog_covers(conn: sqlite3.Connection, lane_key: LaneKey, lane: Config | None) -> bool:
    """Does the backlog of the lane (*lane_key*: tenant, person, model, version) hold every target
    ``projections`` could list?

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
        lane_key,
    ).fetchone()
    if registered is None:
        return False
    bounds = [
        conn.execute(
            "SELECT dimension, normalization, distance FROM embedding_checks"
            " WHERE tenant_id = ? AND person_id = ? AND model = ? AND version = ?"
            f" ORDER BY dimension {order}, normalization {order}, distance {order} LIMIT 1",
            lane_key,
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
    lane_key: LaneKey,
    lane: Config | None,
    after: Target | None = None,
    *,
    walk_backlog: bool = True,
) -> Generator[m.ProjectionIssue, None, None]:
    """Every stale or missing projection of the lane (*lane_key*: tenant, person, model,
    version) in (kind, id) order, lazily.

    *after* resumes strictly after that target (``rebuild`` pages with it). The lane's backlog
    drives the walk where it covers the lane; ``walk_backlog=False`` scans every target instead
    (the same answer: the tests compare both).
    """
    checks = _checks(conn)
    backlog = walk_backlog and checks == "embedding_checks" and backlog_covers(conn, lane_key, lane)
    params: dict[str, Any] = dict(
        zip(("tenant", "person", "model", "version"), lane_key, strict=True)
    )
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
            issue = _issue_for(conn, lane_key, lane, current)
            if issue is not None:
                yield issue


def _issue_for(
    conn: sqlite3.Connection, lane_key: LaneKey, lane: Config | None, current: ProjectionText
) -> m.ProjectionIssue | None:
    tenant_id, person_id, model, version = lane_key
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
        issues = iter_issues(conn, (tenant_id, person_id, request.model, request.version), lane)
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
